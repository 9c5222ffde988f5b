"""Settings of the ``cascade`` system, parsed from ``--system-arg key=value`` strings.

Units: every duration is in seconds; probabilities are in [0, 1]; flags are ``0``/``1``
(``true``/``false`` also accepted).  The latency budgets (``asr_latency``, ``llm_latency``,
``tts_latency``) are the processing times the system charges on the frame clock: a reply's first
audio sample goes out at the end-of-turn decision plus their sum.  Their defaults are the median
compute times measured by ``perf/cascade_speed.py`` on the project's 2-core machine with
no other job running (load average 1.6, the benchmark's own): Whisper base int8, beam 1, in a
20-s window (``asr_window``), on the 35 user turns of four ``m3-qa-en`` dialogues (median 2.6 s
of audio each) 0.356 s (0.779 s in Whisper's 30-s window, measured beside it; cascade version
1 charged 0.77 s); the built-in responder under 1 ms; piper's first sentence of each reply,
resampled to 16 kHz, 0.061 s.  Version 3's window ladder (``asr_window_min``) transcribes the
same turns in 35-43 % less time; ``asr_latency`` keeps its version-2 value, so a reply is
charged the same latency as in version 2 (the budget is now on the safe side of the compute it
stands for).
While another job shares the two cores these stages take up to 1.6x (ASR) and 3x (TTS) longer;
the benchmark prints the load average with its figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from duplexeval.errors import number_problem
from duplexeval.speech._short_window import WHISPER_WINDOW_S

__all__ = ["ASR_LATENCY", "LLM_LATENCY", "RESPONDERS", "TTS_LATENCY", "CascadeConfig"]

RESPONDERS = ("reference", "ack")
"""The built-in responders (``responder=``)."""

ASR_LATENCY = 0.36
"""Measured median compute of ASR on a user turn (s; 0.356, 20-s window): perf/cascade_speed.py."""
LLM_LATENCY = 0.0
"""Measured median compute of the built-in responder (s; under 1 ms, so 0).  With ``llm_url``
set ``llm_latency`` to the endpoint's time to a complete reply."""
TTS_LATENCY = 0.06
"""Measured median TTS time to the first sentence's audio (s; 0.061):
perf/cascade_speed.py."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class CascadeConfig:
    """Everything that changes what ``cascade`` does (see the package docstring)."""

    # listening
    eot_silence: float = 0.6
    """User silence after speech that ends the user's turn."""
    vad_threshold: float = 0.5
    """Silero probability at which user speech starts."""
    vad_neg_threshold: float = 0.35
    """Silero probability below which user speech may end."""
    vad_hangover: float = 0.1
    """Speech ends after this long below ``vad_neg_threshold`` (bridges short dips)."""
    min_turn_speech: float = 0.15
    """A user turn needs at least this much voiced speech (shorter ones are noise)."""
    pre_roll: float = 0.3
    """Audio kept before a user turn's first onset and given to ASR."""
    post_roll: float = 0.3
    """Audio after the turn's last offset given to ASR (not the rest of the silence up to the
    end-of-turn decision: the same words then give the same ASR input, whatever the
    ``eot_silence``, so variants of the cascade share their transcripts)."""
    max_turn: float = 30.0
    """ASR hears at most the last this-many seconds of a user turn."""
    smart_turn: bool = False
    """Combine the Smart Turn v3 end-of-turn model with the VAD (needs its ONNX file)."""
    smart_turn_model: str = ""
    """Path of the Smart Turn ONNX file ('' = the one in an installed ``pipecat-ai``)."""
    smart_turn_silence: float = 0.2
    """With ``smart_turn``: silence after which Smart Turn is asked once per pause; a turn it
    calls complete ends there, otherwise at ``eot_silence``."""
    smart_turn_threshold: float = 0.5
    """Smart Turn probability above which the turn is complete."""
    # speaking while the user talks
    barge_in_min: float = 0.8
    """User speech at least this long while the system speaks is a barge-in (shorter: a
    backchannel, after which the system resumes)."""
    half_duplex: bool = False
    """Do not listen while speaking: from the end-of-turn decision until its reply (or
    backchannel) has played out, the user's audio is not heard (replaced by silence), so it
    never yields, cancels or notices a barge-in; like half-duplex cascades (VocalNet)."""
    stop_delay: float = 0.2
    """The system's output goes silent this long after a user onset while it speaks."""
    resume_gap: float = 0.5
    """After overlapping user speech shorter than ``barge_in_min`` ends, the reply resumes this
    long after the user's offset; user speech again before then counts as the same overlap
    (0.5 = M3's IPU gap, so the overlap is measured as M3 measures a user IPU).  Smaller
    values shorten the pause on backchannels but let barge-ins that start with short
    fragments through: on m3-chat-en (2 dialogues, LLM replies) 0 gave a barge-in stop latency
    of 0.95 s and a backchannel stop latency of 1.09 s, 0.5 gave 0.23 s and 0.81 s."""
    backchannels: bool = False
    """Say short backchannels ("mm-hm" / "うん") in pauses of long user turns."""
    bc_after: float = 2.0
    """User speech (s) since the turn start or the last backchannel before the next one."""
    bc_pause: float = 0.2
    """Silence in a long user turn at which a backchannel is said."""
    # understanding and responding
    asr_model: str = "base-packaged"
    """faster-whisper model (``base-packaged``: the offline Whisper base from PyPI)."""
    asr_beam: int = 1
    """Whisper beam size."""
    asr_window: float = 20.0
    """Seconds of the largest Whisper window a user turn is encoded in, padded with silence
    (at most 30, Whisper's own; a turn that leaves less than 1 s of it free gets 30): 20 s
    takes half the time of 30 s a turn at the same word error rate (``perf/asr_window.py``)."""
    asr_window_min: float = 10.0
    """Seconds of the smallest window: a turn goes into the smallest of ``asr_window_min``,
    ``asr_window_min + 5``, ... below ``asr_window`` that leaves 3 s of silence after it, else
    ``asr_window`` (:func:`~duplexeval.speech._short_window.ladder_window`).  On the bundled
    suites' user turns this ladder from 10 s takes 35-43 % less time than 20 s alone at about
    the same error rate (``perf/asr_window.py``, two runs); ``asr_window_min = asr_window`` is
    one fixed window (version 2)."""
    language: str = ""
    """Reply language ('' = the dialogue's, else ``en``)."""
    responder: str = "reference"
    """Built-in responder (used without ``llm_url``): ``reference`` answers with oracle content
    (the dialogue's reference answer to the best-matching reference question on the QA suites,
    else the reference system's next turn after the best-matching reference user words; an
    acknowledgement below ``match_threshold``); ``ack`` only acknowledges (no oracle data)."""
    match_threshold: float = 0.5
    """Reference responder: difflib ratio (0-1) of normalised ASR text and a reference question
    (or reference user words) needed to answer with the reference answer (or next turn)."""
    llm_url: str = ""
    """OpenAI-compatible base URL (``http://host:port/v1``); '' = built-in responder."""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout: float = 30.0
    llm_max_tokens: int = 120
    # speaking
    tts_voice: str = ""
    """TTS voice ('' = the engine's default)."""
    tts_speed: float = 1.0
    output_gain: float = 0.5
    """Linear gain on the TTS audio (engines peak-normalise to 1.0)."""
    # latency
    asr_latency: float = ASR_LATENCY
    llm_latency: float = LLM_LATENCY
    tts_latency: float = TTS_LATENCY
    clock_budgets: bool = True
    """True: charge the declared budgets above (deterministic offline runs).  False: charge
    the measured compute time of each stage instead (first computation of a cached result;
    not deterministic; meant for a real-time driver)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The ``--system-arg`` names."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_args(cls, args: Mapping[str, str]) -> CascadeConfig:
        """Parse ``--system-arg`` strings; :class:`ValueError` naming the bad argument."""
        values: dict[str, Any] = {}
        types = {f.name: f.type for f in fields(cls)}
        for name, raw in args.items():
            kind = types.get(name)
            if kind is None:
                raise ValueError(f"unknown argument {name!r}")
            values[name] = _parse(name, str(raw), str(kind))
        config = cls(**values)
        config.check()
        return config

    def check(self) -> None:
        """:class:`ValueError` for settings that make no sense."""
        for name in ("eot_silence", "vad_hangover", "min_turn_speech", "pre_roll", "post_roll",
                     "bc_after",
                     "bc_pause", "barge_in_min", "stop_delay", "resume_gap", "asr_latency",
                     "llm_latency", "tts_latency", "smart_turn_silence"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0 seconds")
        if self.max_turn <= 0 or self.llm_timeout <= 0:
            raise ValueError("max_turn and llm_timeout must be > 0 seconds")
        if not 0 < self.vad_neg_threshold <= self.vad_threshold < 1:
            raise ValueError("need 0 < vad_neg_threshold <= vad_threshold < 1")
        if self.asr_beam < 1 or self.llm_max_tokens < 1:
            raise ValueError("asr_beam and llm_max_tokens must be >= 1")
        if not 1 < self.asr_window <= WHISPER_WINDOW_S:
            raise ValueError(f"asr_window must be over 1 and at most {WHISPER_WINDOW_S:g} "
                             "seconds")
        if not 1 < self.asr_window_min <= self.asr_window:
            raise ValueError("asr_window_min must be over 1 and at most asr_window seconds")
        if self.responder not in RESPONDERS:
            raise ValueError(f"responder must be one of {', '.join(RESPONDERS)}")
        if self.llm_url and not self.llm_url.startswith(("http://", "https://")):
            raise ValueError("llm_url must be an http(s) URL")

    @property
    def uses_oracle(self) -> bool:
        """True when replies come from the dialogue's reference data (no ``llm_url`` and
        ``responder=reference``)."""
        return not self.llm_url and self.responder == "reference"

    def budget(self) -> float:
        """Sum of the declared stage budgets (seconds)."""
        return self.asr_latency + self.llm_latency + self.tts_latency


def _parse(name: str, raw: str, kind: str) -> Any:
    try:
        if kind == "bool":
            low = raw.strip().lower()
            if low in _TRUE | _FALSE:
                return low in _TRUE
            raise ValueError
        if kind == "int":
            return int(raw)
        if kind == "float":
            value = float(raw)
        else:
            return raw
    except ValueError:
        raise ValueError(f"system argument {name} must be a {kind}, got {raw!r}") from None
    problem = number_problem(value)  # latencies, thresholds: never NaN or inf
    if problem is not None:
        raise ValueError(f"system argument {name} {problem}, got {raw!r}")
    return value
