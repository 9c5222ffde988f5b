"""Dialogue synthesis from text specs (speech from :mod:`duplexeval.speech._tts`)."""

from duplexeval.speech._tts import (
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
