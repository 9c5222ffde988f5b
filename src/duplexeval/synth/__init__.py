"""Dialogue synthesis from text: the TTS layer (:mod:`duplexeval.synth.tts`)."""

from .tts import (
    ENGINES,
    TimedWord,
    TtsEngine,
    TtsError,
    TtsUnavailable,
    Utterance,
    available_engines,
    load_engine,
)

__all__ = [
    "ENGINES",
    "TimedWord",
    "TtsEngine",
    "TtsError",
    "TtsUnavailable",
    "Utterance",
    "available_engines",
    "load_engine",
]
