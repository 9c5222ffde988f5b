"""The system's voice: TTS (piper for English, OpenJTalk for Japanese) at the native rate.

A text is split into sentences, each synthesized on its own (a streaming TTS would start
playing the first sentence while the next is synthesized, so the time to first audio is the
first sentence's synthesis) and concatenated.  The audio is resampled (soxr) to the native rate,
scaled by ``gain`` and trimmed to its audible extent, so the speech starts at sample 0.

Speech intervals use the clip bank's rule (:meth:`duplexeval.speech._clipbank.Clip.speech_samples`):
5 ms frames within 40 dB of the loudest frame are speech, silences under 50 ms are bridged.
Word times come from the engine (sentence offsets added), in native-rate samples from the
start of the trimmed audio.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import soxr

from duplexeval.speech._tts import TtsEngine, load_engine
from duplexeval.systems.builtin.cascade._cache import ResultCache, content_key

__all__ = ["ENGINE_FOR_LANGUAGE", "Speech", "Voice", "speech_intervals", "split_sentences"]

ENGINE_FOR_LANGUAGE = {"en": "piper", "ja": "openjtalk"}
_FRAME_S = 0.005
_THRESHOLD_DB = 40.0
_BRIDGE_S = 0.05
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


@dataclass(frozen=True, eq=False)
class Speech:
    """Synthesized speech at the native rate: float32 ``audio``, ``words`` as
    ``(start, end, text)`` and ``speech`` intervals ``(start, end)`` in samples from its start,
    and the compute seconds until the first sentence was ready."""

    audio: np.ndarray
    words: tuple[tuple[int, int, str], ...]
    speech: tuple[tuple[int, int], ...]
    first_audio_seconds: float


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (split after ``.!?。！？``), stripped, empty ones dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def speech_intervals(audio: np.ndarray, rate: int) -> list[tuple[int, int]]:
    """``[start, end)`` sample runs where ``audio`` is audible (the clip bank's rule)."""
    hop = max(1, round(_FRAME_S * rate))
    n = len(audio) // hop
    if n == 0:
        return []
    frames = audio[:n * hop].reshape(n, hop).astype(np.float64)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    if rms.max() <= 0:
        return []
    active = rms > rms.max() * 10 ** (-_THRESHOLD_DB / 20)
    bounds = np.flatnonzero(np.diff(np.concatenate([[0], active.astype(np.int8), [0]])))
    bridge = round(_BRIDGE_S * rate)
    runs: list[tuple[int, int]] = []
    for a, b in zip(bounds[::2] * hop, bounds[1::2] * hop, strict=True):
        if runs and a - runs[-1][1] < bridge:
            runs[-1] = (runs[-1][0], int(b))
        else:
            runs.append((int(a), int(b)))
    return runs


class Voice:
    """TTS of one language at ``rate`` Hz, cached by text (see the module docstring)."""

    def __init__(self, language: str, rate: int, voice: str = "", speed: float = 1.0,
                 gain: float = 0.5, cache: ResultCache[Any] | None = None) -> None:
        self.language = language
        self.rate = rate
        self.voice = voice or None
        self.speed = speed
        self.gain = gain
        self._engine: TtsEngine | None = None
        self._settings: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._cache: ResultCache[Any] = cache if cache is not None else ResultCache(512)

    @property
    def engine(self) -> TtsEngine:
        """The TTS engine (loaded on first use)."""
        with self._lock:
            if self._engine is None:
                self._engine = load_engine(ENGINE_FOR_LANGUAGE.get(self.language, "piper"))
            return self._engine

    def settings(self) -> dict[str, Any]:
        """What determines the audio besides the text (computed once)."""
        if self._settings is None:
            self._settings = {"tts": self.engine.settings(self.voice), "speed": self.speed,
                              "gain": self.gain, "rate": self.rate, "split": "sentences",
                              "trim": "speech"}
        return self._settings

    def _sentence(self, text: str) -> tuple[np.ndarray, list[tuple[float, float, str]], float]:
        """One sentence at the native rate (untrimmed), its words (s) and compute seconds."""
        key = content_key("sentence", self.settings(), text)

        def compute() -> tuple[np.ndarray, list[tuple[float, float, str]]]:
            utt = self.engine.synthesize(text, self.voice, self.speed)
            audio = utt.audio
            if utt.sample_rate != self.rate and len(audio):
                audio = soxr.resample(audio, utt.sample_rate, self.rate).astype(np.float32)
            audio = np.clip(audio * self.gain, -1.0, 1.0).astype(np.float32)
            return audio, [(w.start, w.end, w.text) for w in utt.words]

        (audio, words), seconds = self._cache.get_or_compute(key, compute)
        return audio, words, seconds

    def speak(self, text: str) -> Speech:
        """``text`` as speech (see the module docstring); empty text gives no audio."""
        pieces: list[np.ndarray] = []
        words: list[tuple[int, int, str]] = []
        offset = 0
        first_seconds = 0.0
        for k, sentence in enumerate(split_sentences(text)):
            audio, timed, seconds = self._sentence(sentence)
            if k == 0:
                first_seconds = seconds
            pieces.append(audio)
            words.extend((offset + round(a * self.rate), offset + round(b * self.rate), w)
                         for a, b, w in timed)
            offset += len(audio)
        audio = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)
        runs = speech_intervals(audio, self.rate)
        if not runs:
            return Speech(np.zeros(0, np.float32), (), (), first_seconds)
        lead, tail = runs[0][0], runs[-1][1]
        trimmed = np.ascontiguousarray(audio[lead:tail])
        kept = tuple((max(0, a - lead), min(tail, b) - lead, w) for a, b, w in words
                     if min(tail, b) - lead > max(0, a - lead))
        return Speech(trimmed, kept, tuple((a - lead, b - lead) for a, b in runs),
                      first_seconds)
