"""Dialogue synthesis from text specs (speech from :mod:`duplexeval.speech.tts`)."""

from duplexeval.speech.tts import (
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
