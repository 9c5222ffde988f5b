"""One ``cascade`` session: listening, end of turn, ASR, reply, TTS, barge-in, on the frame clock.

Causality: ``step(k)`` first plays output frame ``k`` as decided so far, then listens to input
frame ``k``; every decision it takes is dated at ``now`` = the end of frame ``k`` (the moment
the input is known) and acts on samples from ``now`` on.  All times in the state are samples
at the native rate (16 kHz, the VAD's rate too) from the session start.

State (plain data, deep-copied by :meth:`snapshot`)::

    frame      frames stepped            rng       numpy bit-generator state (acknowledgements)
    vad        Silero LSTM state, context, pending samples (:mod:`.vad`)
    ear        onset / offset hysteresis (:mod:`.listener`)
    buffer     recent user frames (pre-roll, or the open turn), buffer_start = first sample
    turn       the open user turn: start, voiced samples, last offset, ... (None: no turn)
    overlap    user speech heard while the system speaks: onset, hold time (None: none)
    out        the utterance being played or scheduled (:mod:`.playback`; None: silent)
    history    chat messages [{"role", "content"}]: ASR text / what it said (or was forced to)
    speech     its own audible sample intervals [start, end)
    log        decisions: vad, eot, asr, replies, holds, resumes, stops, cancels, backchannels

Reply timing: at the end-of-turn decision ``now`` the turn is transcribed, the reply chosen and
synthesized (compute not on the clock); the reply's first sample plays at
``now + asr_latency + llm_latency + tts_latency`` (the declared budgets; measured compute with
``clock_budgets=False``).  A user onset before that cancels the reply and reopens the turn.

While it speaks: a user onset makes the output go silent at ``onset + stop_delay`` (not earlier
than ``now``); if that speech ends before lasting ``barge_in_min`` it was a backchannel and the
reply resumes where it paused, ``resume_gap`` after the user's offset (speech again before then
continues the same overlap, its pause included in its length); once the overlap lasts
``barge_in_min`` it is a barge-in: the reply is dropped (the history keeps the words said) and
the user's speech opens a new turn::

    user      |=bc=|                    |==barge-in===========...
    system  =====|         |==============|
                 hold      resume         silent: onset + stop_delay
                 (onset +  (bc end +    |<---- barge_in_min ---->| reply dropped; a user turn
                 stop_delay) resume_gap)
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from duplexeval.systems._base import Forced, StepOutput
from duplexeval.systems.builtin._copyable_session import PlainStateSession, rng_state
from duplexeval.systems.builtin.cascade._config import CascadeConfig
from duplexeval.systems.builtin.cascade._engines import Engines
from duplexeval.systems.builtin.cascade._listener import SpeechEdge, initial_listener, listen
from duplexeval.systems.builtin.cascade._llm import chat_messages
from duplexeval.systems.builtin.cascade._playback import new_output, render, spoken_text
from duplexeval.systems.builtin.cascade._responder import acknowledgement, best_match
from duplexeval.systems.builtin.cascade._vad import StreamingVad

__all__ = ["BACKCHANNELS", "CascadeSession"]

BACKCHANNELS: dict[str, str] = {"en": "Mm-hm.", "ja": "うん。"}
"""The system's own backchannel, by language (``backchannels=1``)."""


class CascadeSession(PlainStateSession):
    """See the module docstring."""

    def __init__(self, config: CascadeConfig, engines: Engines, rate: int, frame: int,
                 language: str, references: Sequence[Mapping[str, Any]], seed: int) -> None:
        self.c = config
        self.engines = engines
        self.rate, self.frame = rate, frame
        self.language = language
        self.references = [dict(r) for r in references]
        self.vad = engines.vad
        self.state: dict[str, Any] = {
            "frame": 0, "rng": rng_state(seed),
            "vad": StreamingVad.initial_state(), "ear": initial_listener(),
            "buffer": [], "buffer_start": 0, "turn": None, "overlap": None, "out": None,
            "history": [], "speech": [],
            "log": {k: [] for k in ("vad", "eot", "asr", "replies", "holds", "resumes",
                                    "stops", "cancels", "backchannels", "smart_turn")},
        }

    # -- helpers -------------------------------------------------------------------------------
    def _samples(self, seconds: float) -> int:
        return round(seconds * self.rate)

    @staticmethod
    def _stamp(sample: int, **fields: Any) -> dict[str, Any]:
        """A log entry: session ``sample`` plus ``fields`` (the runner adds dialogue time)."""
        return {"sample": int(sample), **fields}

    def _sep(self) -> str:
        return "" if self.language == "ja" else " "

    def _turn_audio(self, start: int, end: int) -> np.ndarray:
        """Buffered user audio over ``[start, end)`` (clipped to the buffer)."""
        s = self.state
        audio = np.concatenate(s["buffer"]) if s["buffer"] else np.zeros(0, np.float32)
        a = max(0, start - s["buffer_start"])
        return np.ascontiguousarray(audio[a:max(a, end - s["buffer_start"])])

    def _say(self, role: str, text: str, extend: bool = False) -> None:
        history = self.state["history"]
        if extend and history and history[-1]["role"] == role:
            joined = self._sep().join(x for x in (history[-1]["content"], text) if x)
            history[-1]["content"] = joined
        else:
            history.append({"role": role, "content": text})

    # -- Session -------------------------------------------------------------------------------
    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        s = self.state
        f0 = s["frame"] * self.frame
        now = f0 + self.frame
        if force is not None:
            if s["out"] is not None:
                self._finish_output(f0, "forced")
            if force.text:
                self._forced_words(force.text, now)
            audio, text = np.asarray(force.audio, dtype=np.float32), ""
        else:
            audio, text = self._play(f0)
        self._hear(np.asarray(user, dtype=np.float32), now, forced=force is not None)
        s["frame"] += 1
        return StepOutput(audio, text)

    def trace(self) -> dict[str, Any]:
        s = self.state
        return {"frames": s["frame"], "sample_rate": self.rate,
                "speech_samples": [list(x) for x in s["speech"]],
                "language": self.language, "history": copy.deepcopy(s["history"]),
                **copy.deepcopy(s["log"])}

    # -- speaking ------------------------------------------------------------------------------
    def _play(self, f0: int) -> tuple[np.ndarray, str]:
        s = self.state
        out = s["out"]
        if out is None:
            return np.zeros(self.frame, np.float32), ""
        started = out["pos"] > 0
        audio, text, finished = render(out, f0, self.frame, s["speech"])
        if out["kind"] == "reply" and not started and out["pos"] > 0:
            self._reply_started(out)
        if finished:
            self._finish_output(f0 + self.frame, "dropped" if out["drop"] else "done")
        return audio, text

    def _reply_started(self, out: dict[str, Any]) -> None:
        """The first sample of a reply played: its turn is answered, the history grows."""
        s = self.state
        turn = s["turn"]
        if turn is not None:
            self._say("user", turn["text"], extend=True)
            s["turn"] = None
        self._say("assistant", out["text"])
        out["history_index"] = len(s["history"]) - 1

    def _finish_output(self, at: int, how: str) -> None:
        """The utterance is over (``done``, ``dropped`` after a barge-in, or ``forced`` away):
        the history keeps what was said; user speech that overlapped its end opens a turn."""
        s = self.state
        out, overlap = s["out"], s["overlap"]
        s["out"] = None
        s["overlap"] = None
        if overlap is not None and s["ear"]["speaking"] and s["turn"] is None:
            s["turn"] = self._new_turn(overlap["onset"])
        if out["kind"] != "reply" or "history_index" not in out:
            return
        said = spoken_text(out, self._sep())
        s["history"][out["history_index"]]["content"] = said
        if how == "forced":
            s["log"]["stops"].append(self._stamp(at, how=how, said=said))

    @staticmethod
    def _new_turn(onset: int) -> dict[str, Any]:
        """A user turn whose speech started at ``onset`` (and goes on)."""
        return {"start": onset, "voiced": 0, "last_offset": None, "bc_voiced": 0,
                "asked": None, "text": "", "segment": onset}

    def _forced_words(self, text: str, now: int) -> None:
        """Teacher forcing: the reference words are what it said; an open user turn that has
        gone quiet is closed first (the forced speaker took the turn)."""
        s = self.state
        turn = s["turn"]
        if turn is not None and not s["ear"]["speaking"] and turn["last_offset"] is not None:
            self._commit_turn(now, reply=False, by="forced")
        self._say("assistant", text, extend=True)

    # -- listening -----------------------------------------------------------------------------
    def _hear(self, user: np.ndarray, now: int, forced: bool) -> None:
        s = self.state
        if self.c.half_duplex and s["out"] is not None:  # busy answering: deaf
            user = np.zeros_like(user)
        self._buffer(user)
        first, probs = self.vad.feed(s["vad"], user)
        for edge in listen(s["ear"], first, probs, self.c.vad_threshold,
                           self.c.vad_neg_threshold, self.c.vad_hangover):
            s["log"]["vad"].append(self._stamp(edge.sample, edge=edge.kind))
            if edge.kind == "onset":
                self._onset(edge, now)
            else:
                self._offset(edge, now)
        self._overlap_checks(now)
        if forced:
            self._end_of_turn(now, reply=False)
        else:
            self._end_of_turn(now, reply=True)
            self._backchannel(now)
        self._trim_buffer()

    def _buffer(self, user: np.ndarray) -> None:
        self.state["buffer"].append(user.copy())

    def _trim_buffer(self) -> None:
        s = self.state
        turn = s["turn"]
        keep = self._samples(self.c.pre_roll) + self.frame
        if turn is not None:
            keep += min(self._samples(self.c.max_turn),
                        (s["frame"] + 1) * self.frame - turn["start"])
        while s["buffer"] and sum(len(b) for b in s["buffer"]) - len(s["buffer"][0]) >= keep:
            s["buffer_start"] += len(s["buffer"].pop(0))

    def _speaking_reply(self) -> bool:
        out = self.state["out"]
        return out is not None and out["kind"] == "reply" and out["pos"] > 0

    def _onset(self, edge: SpeechEdge, now: int) -> None:
        s = self.state
        out = s["out"]
        if out is not None and out["kind"] == "reply" and out["pos"] == 0:
            s["log"]["cancels"].append(self._stamp(now, onset=edge.sample, reply=out["text"]))
            s["out"] = None  # the user went on: the turn stays open
        if s["overlap"] is not None and out is not None:  # speech again before the resume
            s["overlap"]["resume_at"] = None
            out["play_from"] = None
            return
        if self._speaking_reply():
            s["overlap"] = {"onset": edge.sample, "hold": edge.sample
                            + self._samples(self.c.stop_delay), "held": False,
                            "resume_at": None}
            return
        if s["turn"] is None:
            s["turn"] = self._new_turn(edge.sample)
        s["turn"]["segment"] = edge.sample

    def _offset(self, edge: SpeechEdge, now: int) -> None:
        s = self.state
        overlap, out = s["overlap"], s["out"]
        if overlap is not None and out is not None:
            # shorter than barge_in_min so far: a backchannel, unless more speech follows
            # before the resume (resume_gap after this offset)
            if out["play_from"] is None and out["hold_at"] is None:  # paused: resume later
                overlap["resume_at"] = max(now, edge.sample + self._samples(self.c.resume_gap))
                out["play_from"] = overlap["resume_at"]
            else:  # not silent yet: never mind
                out["hold_at"] = None
                s["overlap"] = None
            return
        turn = s["turn"]
        if turn is None:
            return
        voiced = edge.sample - turn.pop("segment", edge.sample)
        turn["voiced"] += voiced
        turn["bc_voiced"] += voiced
        turn["last_offset"] = edge.sample

    def _overlap_checks(self, now: int) -> None:
        """While it speaks and the user talks: go silent at the hold time, drop the reply once
        the user's speech (from the first onset, across pauses shorter than ``resume_gap``)
        lasts ``barge_in_min`` (a barge-in, which opens a turn), or resume after it."""
        s = self.state
        overlap, out = s["overlap"], s["out"]
        if overlap is None or out is None:
            return
        if not s["ear"]["speaking"]:
            if overlap["resume_at"] is not None and overlap["resume_at"] <= now + self.frame:
                s["log"]["resumes"].append(self._stamp(overlap["resume_at"],
                                                       onset=overlap["onset"]))
                s["overlap"] = None
            return
        if not overlap["held"] and overlap["hold"] < now + self.frame:
            out["hold_at"] = max(overlap["hold"], now)
            overlap["held"] = True
            s["log"]["holds"].append(self._stamp(out["hold_at"], onset=overlap["onset"]))
        if now - overlap["onset"] >= self._samples(self.c.barge_in_min):
            onset = overlap["onset"]
            silent = out["paused_at"] if out["play_from"] is None else out["hold_at"]
            s["log"]["stops"].append(self._stamp(now if silent is None else silent,
                                                 how="barge-in", onset=onset, decided=now))
            out["drop"] = True  # played up to the hold, then dropped
            if out["play_from"] is None:  # already silent
                self._finish_output(now, "dropped")
            else:
                s["overlap"] = None
                s["turn"] = self._new_turn(onset)

    # -- end of turn and reply -----------------------------------------------------------------
    def _end_of_turn(self, now: int, reply: bool) -> None:
        s = self.state
        turn = s["turn"]
        if turn is None or s["ear"]["speaking"] or turn["last_offset"] is None \
                or s["out"] is not None:
            return
        silence = now - turn["last_offset"]
        by = None
        if silence >= self._samples(self.c.eot_silence):
            by = "vad"
        elif self.c.smart_turn and silence >= self._samples(self.c.smart_turn_silence) \
                and turn["asked"] != turn["last_offset"]:
            turn["asked"] = turn["last_offset"]
            p = self.engines.turn_complete(self._turn_audio(turn["start"], now))
            s["log"]["smart_turn"].append(self._stamp(now, probability=round(p, 6)))
            if p >= self.c.smart_turn_threshold:
                by = "smart_turn"
        if by is not None:
            self._commit_turn(now, reply=reply, by=by)

    def _commit_turn(self, now: int, reply: bool, by: str) -> None:
        """End the open turn at ``now``: transcribe it; reply (or, forced, just remember)."""
        s = self.state
        turn = s["turn"]
        s["log"]["eot"].append(self._stamp(now, by=by, last_offset=turn["last_offset"]))
        if turn["voiced"] < self._samples(self.c.min_turn_speech):
            s["turn"] = None
            return
        start = turn["start"] - self._samples(self.c.pre_roll)
        end = min(now, turn["last_offset"] + self._samples(self.c.post_roll))
        text, asr_s = self.engines.transcribe(self._turn_audio(start, end), self.language)
        s["log"]["asr"].append(self._stamp(now, text=text))
        if not text.strip():
            s["turn"] = None
            return
        turn["text"] = text
        if not reply:
            self._say("user", text, extend=True)
            s["turn"] = None
            return
        answer, source, llm_s, score = self._respond(text)
        speech = self.engines.voice(self.language).speak(answer)
        delay = (self.c.budget() if self.c.clock_budgets
                 else asr_s + llm_s + speech.first_audio_seconds)
        start_at = now + self._samples(delay)
        s["log"]["replies"].append(self._stamp(start_at, eot=now, text=answer, source=source,
                                               user=text, score=score))
        if len(speech.audio) == 0:  # nothing audible to say: the turn is over
            self._say("user", text, extend=True)
            s["turn"] = None
            return
        s["out"] = new_output("reply", speech, answer, start_at)

    def _respond(self, text: str) -> tuple[str, str, float, float | None]:
        """Reply text, its source (llm / retrieval / ack), compute seconds, match score."""
        s = self.state
        if self.engines.endpoint is not None:
            history = [*s["history"], {"role": "user", "content": text}]
            if len(s["history"]) and s["history"][-1]["role"] == "user":
                history = [*s["history"][:-1], {"role": "user", "content": self._sep().join(
                    [s["history"][-1]["content"], text])}]
            answer, seconds = self.engines.chat(chat_messages(history, self.language))
            return answer, "llm", seconds, None
        started = time.perf_counter()
        match = best_match(text, self.references)
        if match is not None and match.score >= self.c.match_threshold:
            return match.answer, "retrieval", time.perf_counter() - started, \
                round(match.score, 6)
        with self.rng() as gen:
            answer = acknowledgement(self.language, gen)
        score = None if match is None else round(match.score, 6)
        return answer, "ack", time.perf_counter() - started, score

    def _backchannel(self, now: int) -> None:
        """``backchannels=1``: "mm-hm" in a pause of a long user turn (pre-synthesized, so no
        budget is charged)."""
        s = self.state
        turn = s["turn"]
        if not self.c.backchannels or turn is None or s["out"] is not None \
                or s["ear"]["speaking"] or turn["last_offset"] is None:
            return
        silence = now - turn["last_offset"]
        if turn["bc_voiced"] < self._samples(self.c.bc_after) \
                or silence < self._samples(self.c.bc_pause) \
                or silence >= self._samples(self.c.eot_silence):
            return
        text = BACKCHANNELS.get(self.language, BACKCHANNELS["en"])
        speech = self.engines.voice(self.language).speak(text)
        turn["bc_voiced"] = 0
        s["log"]["backchannels"].append(self._stamp(now, text=text))
        if len(speech.audio):
            s["out"] = new_output("backchannel", speech, text, now)
