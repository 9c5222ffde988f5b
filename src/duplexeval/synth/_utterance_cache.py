"""Synthesized utterances kept on disk, so that a turn spoken once is never synthesized again.

The dialogue synthesizer speaks every turn with a TTS engine (piper with a WORLD voice shift,
OpenJTalk, Kokoro): most of a suite build's time.  The same sentence in the same voice recurs
across builds (a suite built again with other gaps, a subset, a dialogue cut to its first
rounds, the feature dialogues that share their turns) and across processes (build workers,
test workers), so each :class:`~duplexeval.speech._tts.Utterance` is cached as one file::

    cache_root()/utterances/KEY[:2]/KEY.npz      audio (float32), sample_rate, word times and texts

``KEY`` hashes everything that determines the engine's output: the source files of the engines
(:data:`UTTERANCE_SOURCES`, so a changed engine never reads an old entry), the engine's settings
for the voice (engine, voice, package versions, parameters), the numeric stack, the text and
the speed.  Entries are written atomically; an unreadable or inconsistent one is synthesized
again and replaced.  Engines are deterministic (the same inputs give bit-identical audio), so
a cached utterance is the one the engine would return.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np

from duplexeval._cache import cache_root
from duplexeval._environment import numeric_stack
from duplexeval._fileio import atomic_write_bytes, sources_digest
from duplexeval.speech._tts import TimedWord, TtsEngine, Utterance

__all__ = ["UTTERANCE_SOURCES", "UtteranceCache", "default_utterance_cache"]

UTTERANCE_SOURCES = ("speech/engines", "speech/_tts.py", "speech/_voice_shift.py",
                     "speech/_japanese.py", "speech/_onnx.py")
"""The files, relative to the package, that make an engine's output: part of every key."""

_PACKAGE = Path(__file__).resolve().parents[1]


def default_utterance_cache() -> Path:
    """Where utterances are cached by default: ``cache_root()/utterances``."""
    return cache_root() / "utterances"


class UtteranceCache:
    """:meth:`synthesize` through the cache folder ``root`` (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._code: str | None = None

    def key(self, engine: TtsEngine, text: str, voice: str, speed: float) -> str:
        """The entry name of ``engine`` speaking ``text`` with ``voice`` at ``speed``."""
        if self._code is None:
            self._code = sources_digest(_PACKAGE, UTTERANCE_SOURCES)
        settings = json.dumps({"tts": engine.settings(voice), "stack": numeric_stack()},
                              sort_keys=True, default=str)
        payload = json.dumps([self._code, settings, text, repr(float(speed))])
        return hashlib.sha256(payload.encode()).hexdigest()

    def synthesize(self, engine: TtsEngine, text: str, voice: str,
                   speed: float = 1.0) -> Utterance:
        """``engine.synthesize(text, voice, speed)``, read from the cache when it holds it."""
        key = self.key(engine, text, voice, speed)
        path = self.root / key[:2] / f"{key}.npz"
        cached = _read(path)
        if cached is not None:
            return cached
        utterance = engine.synthesize(text, voice, speed)
        atomic_write_bytes(path, _encode(utterance))
        return utterance


def _encode(utterance: Utterance) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, audio=utterance.audio, sample_rate=np.int64(utterance.sample_rate),
             times=np.array([(w.start, w.end) for w in utterance.words],
                            dtype=np.float64).reshape(-1, 2),
             texts=np.array([w.text for w in utterance.words], dtype=np.str_))
    return buffer.getvalue()


def _read(path: Path) -> Utterance | None:
    """The utterance stored at ``path``; None when there is none or it is damaged."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            audio, rate = stored["audio"], int(stored["sample_rate"])
            times, texts = stored["times"], stored["texts"]
            if times.shape != (len(texts), 2):
                return None
            words = tuple(TimedWord(float(a), float(b), str(t))
                          for (a, b), t in zip(times, texts, strict=True))
            return Utterance(audio=audio, sample_rate=rate, words=words)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None
