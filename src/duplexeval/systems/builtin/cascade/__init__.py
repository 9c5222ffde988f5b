"""``cascade``: a cascaded full-duplex baseline behind the frame-synchronous system interface.

::

    user ─▶ Silero VAD ─▶ end of turn ─▶ Whisper ─▶ responder ─▶ TTS ─▶ system audio
             (streamed,                              (LLM endpoint, or oracle retrieval of
             32 ms windows)                           the reference answer / next turn, or
                                                      "I see.")
             │ user onset while it speaks: silent after stop_delay; resumes resume_gap after
             │ the speech if it ended before barge_in_min (a backchannel); drops the reply once
             ╰ it lasts barge_in_min (a barge-in), and the user's speech opens a turn

Timeline of one reply (seconds; budgets are declared, charged on the frame clock)::

    user   ══════question══════╗
    VAD                        ╚ offset
    system                     |<-eot_silence->|<-asr+llm+tts latency->|══reply══
                                    end of turn ^ (end of the frame that   ^ first reply sample
                                                   completes the silence)

Native stream: 16 kHz mono, 80 ms frames (1280 samples).  Everything the session knows is
plain data (numpy arrays, dicts, lists), so ``snapshot`` is a deep copy and a multi-gen fork
continues exactly as a replay would; ASR, replies and TTS are cached in the system object by
content hash, so forks do not recompute them.

* Listening: Silero v6 (faster-whisper's ONNX, no torch) fed incrementally with its LSTM state
  in the session state; onset at probability >= ``vad_threshold``, offset after
  ``vad_hangover`` below ``vad_neg_threshold``; end of turn after ``eot_silence`` of silence
  (optionally earlier when Smart Turn v3 calls the turn complete, ``smart_turn=1``).
* Understanding: Whisper base (:class:`~duplexeval.speech._asr.Transcriber`, its text only:
  no word timestamps) on the turn's audio from ``pre_roll`` before its first onset to
  ``post_roll`` after its last offset, encoded in a window padded with silence rather than
  Whisper's 30 s (:mod:`duplexeval.speech._short_window`): the smallest of 10, 15 and 20 s
  (``asr_window_min`` to ``asr_window``) that leaves 3 s of silence after the turn, a quarter
  of the 30-s window's time a turn at about the same error rate.
* Responding: with ``llm_url`` an OpenAI-compatible chat endpoint (:mod:`.llm`), else
  :mod:`.responder`: ``responder=reference`` (default) is a retrieval baseline over oracle
  content (the QA reference answers, or on chat data the reference system's next turn after
  the best-matching reference user words), declared as ``Capabilities.oracle`` and so marked
  in the tables; ``responder=ack`` only acknowledges and reads no reference data.  Either way
  the timing is its own.
* ``half_duplex=1``: it does not listen while it answers (from the end-of-turn decision until
  the reply has played out), so it never yields to a barge-in; the half-duplex baseline that
  the duplex metrics should separate from the full-duplex one.
* Speaking: piper (en) / OpenJTalk (ja), per sentence, resampled to 16 kHz.
* Teacher forcing: forced frames replace its output and the forced words enter its history as
  what it said; it keeps listening (and transcribing user turns) and speaks on its own only
  after forcing ends.
* ``trace()``: ``speech_samples`` (its audible ``[start, end)`` samples at 16 kHz from the
  session start) and ``sample_rate``, plus its decisions, each with the session ``sample``
  (the runner adds the dialogue ``time`` in seconds): ``vad`` onsets/offsets, ``eot``
  (end-of-turn decisions), ``asr`` texts, ``replies`` (sample = first reply sample; text,
  source, user text), ``holds``, ``resumes``, ``stops`` (barge-ins: sample = when its output
  went silent), ``cancels`` (replies cancelled because the user went on), ``backchannels``,
  ``smart_turn``, and the final
  chat ``history``.

Arguments (``--system-arg``) are the fields of :class:`~.config.CascadeConfig`.
"""

from __future__ import annotations

from duplexeval.systems.builtin.cascade._config import CascadeConfig
from duplexeval.systems.builtin.cascade._system import CascadeSystem

__all__ = ["CascadeConfig", "CascadeSystem"]
