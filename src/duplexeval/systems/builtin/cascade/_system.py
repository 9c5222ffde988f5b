"""``CascadeSystem``: the ``cascade`` built-in (VAD -> Whisper -> responder -> TTS)."""

from __future__ import annotations

from typing import Any

from duplexeval.systems._base import Capabilities, Oracle, Session, SessionSpec, System
from duplexeval.systems.builtin.cascade._config import CascadeConfig
from duplexeval.systems.builtin.cascade._engines import Engines
from duplexeval.systems.builtin.cascade._responder import transcript_pairs
from duplexeval.systems.builtin.cascade._session import CascadeSession
from duplexeval.systems.builtin.cascade._voice import ENGINE_FOR_LANGUAGE

__all__ = ["FRAME_SIZE", "SAMPLE_RATE", "CascadeSystem"]

SAMPLE_RATE = 16_000
"""Native rate (Hz): Silero and Whisper work at 16 kHz, so the user stream needs no resampling;
TTS output (piper 22.05 kHz, OpenJTalk 48 kHz) is resampled to it once per sentence."""
FRAME_SIZE = 1280
"""80 ms frames (Moshi's step): 2.5 Silero windows of 512 samples; the streaming VAD carries
the remainder to the next frame."""


class CascadeSystem(System):
    """A cascaded full-duplex baseline: streaming Silero VAD end-of-turn detection, Whisper
    ASR, a chat endpoint or the built-in retrieval responder, piper / OpenJTalk TTS, barge-in
    handling, and declared latency budgets on the frame clock (see the package docstring)."""

    name = "cascade"
    version = "3"
    """2: user turns encoded in a 20-s Whisper window (``asr_window``), not 30 s.  3: in the
    smallest of 10, 15 and 20 s that leaves 3 s of silence (``asr_window_min``)."""
    description = "VAD + Whisper + LLM/retrieval + TTS cascade with barge-in and latency budgets"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.config = CascadeConfig.from_args(self.args)
        oracle = frozenset({Oracle.QA_REFERENCES, Oracle.REFERENCE_TRANSCRIPT}) \
            if self.config.uses_oracle else frozenset()
        self.capabilities = Capabilities(sample_rate=SAMPLE_RATE, frame_size=FRAME_SIZE,
                                         teacher_forcing_audio=True, teacher_forcing_text=True,
                                         snapshot=True, oracle=oracle)
        self.engines = Engines(self.config, SAMPLE_RATE)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return CascadeConfig.names()

    def open(self, spec: SessionSpec) -> Session:
        language = self.config.language or spec.dialogue.language or "en"
        if language not in ENGINE_FOR_LANGUAGE:
            language = "en"
        references: list[Any] = list(spec.oracle.get(Oracle.QA_REFERENCES, ()))
        if not references:
            separator = "" if spec.dialogue.language == "ja" else " "
            references = transcript_pairs(spec.oracle.get(Oracle.REFERENCE_TRANSCRIPT, ()),
                                          separator)
        return CascadeSession(self.config, self.engines, SAMPLE_RATE, FRAME_SIZE, language,
                              references, spec.seed)
