"""The models one ``cascade`` system shares among its sessions, with their result caches.

Loaded lazily (the first session that needs a model loads it): the streaming VAD, Whisper
(:class:`~duplexeval.speech._asr.Transcriber`), a :class:`~.voice.Voice` per language, the
chat endpoint and Smart Turn.  Every expensive call goes through a content-hash cache
(:mod:`.cache`), so results are computed once per process for the same inputs and settings.
The caches are shared by every ``cascade`` system of the process (their keys hold every setting
that changes a result), so variants of the cascade run side by side (a demo row with another
``eot_silence``, half duplex) reuse each other's transcripts and speech.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from duplexeval.speech._asr import Transcriber
from duplexeval.speech._short_window import ladder_window
from duplexeval.systems.builtin.cascade._cache import ResultCache, content_key
from duplexeval.systems.builtin.cascade._config import CascadeConfig
from duplexeval.systems.builtin.cascade._llm import ChatEndpoint
from duplexeval.systems.builtin.cascade._smart_turn import SmartTurn, find_model
from duplexeval.systems.builtin.cascade._vad import VAD_RATE, StreamingVad
from duplexeval.systems.builtin.cascade._voice import Voice

__all__ = ["Engines", "clear_caches"]

_SHARED: dict[str, ResultCache[Any]] = {
    "asr": ResultCache(4096), "llm": ResultCache(1024), "tts": ResultCache(1024),
    "turn": ResultCache(1024)}
"""Process-wide result caches (see the module docstring)."""
_TRANSCRIBERS: dict[tuple[str, int], Transcriber] = {}
"""Whisper models by (model, beam size), loaded once per process."""

ASR_THREADS_VARIABLE = "DUPLEXEVAL_ASR_THREADS"
"""CTranslate2 threads of the cascade's Whisper (default 2); a process-pool worker sets 1
(:mod:`duplexeval.runs._pool_executor`).  The kernels are pinned, so it changes speed only."""


def _asr_threads() -> int:
    given = os.environ.get(ASR_THREADS_VARIABLE, "").strip()
    return int(given) if given.isdigit() and int(given) > 0 else 2


def clear_caches() -> None:
    """Empty the process-wide caches (a determinism check recomputes everything)."""
    for cache in _SHARED.values():
        cache.clear()


class Engines:
    """Shared models and caches of one system (see the module docstring)."""

    def __init__(self, config: CascadeConfig, rate: int) -> None:
        self.config = config
        self.rate = rate
        self.endpoint = (ChatEndpoint(config.llm_url, config.llm_model, config.llm_api_key,
                                      config.llm_timeout, config.llm_max_tokens)
                         if config.llm_url else None)
        self.asr_cache: ResultCache[str] = _SHARED["asr"]
        self.llm_cache: ResultCache[str] = _SHARED["llm"]
        self.tts_cache: ResultCache[Any] = _SHARED["tts"]
        self.turn_cache: ResultCache[float] = _SHARED["turn"]
        self._vad: StreamingVad | None = None
        self._transcriber: Transcriber | None = None
        self._asr_settings: dict[str, Any] | None = None
        self._voices: dict[str, Voice] = {}
        self._smart_turn: SmartTurn | None = None
        self._lock = threading.Lock()

    @property
    def vad(self) -> StreamingVad:
        with self._lock:
            if self._vad is None:
                self._vad = StreamingVad()
            return self._vad

    def _asr(self) -> tuple[Transcriber, dict[str, Any]]:
        with self._lock:
            if self._transcriber is None:
                key = (self.config.asr_model, self.config.asr_beam)
                if key not in _TRANSCRIBERS:  # one model load per process and settings
                    _TRANSCRIBERS[key] = Transcriber(self.config.asr_model,
                                                     beam_size=self.config.asr_beam,
                                                     cpu_threads=_asr_threads())
                self._transcriber = _TRANSCRIBERS[key]
                self._asr_settings = self._transcriber.settings()
            assert self._asr_settings is not None
            return self._transcriber, self._asr_settings

    def transcribe(self, audio16: np.ndarray, language: str) -> tuple[str, float]:
        """ASR text of a user turn (16 kHz audio) and the compute seconds it took."""
        transcriber, settings = self._asr()

        window = ladder_window(len(audio16) / VAD_RATE, self.config.asr_window_min,
                               self.config.asr_window)

        def compute() -> str:
            return transcriber.transcribe_text(audio16, VAD_RATE, language, window=window)

        return self.asr_cache.get_or_compute(
            content_key("asr-text", settings, language, window, audio16), compute)

    def chat(self, messages: list[dict[str, str]]) -> tuple[str, float]:
        """The endpoint's reply to ``messages`` and the seconds the request took."""
        endpoint = self.endpoint
        if endpoint is None:
            raise RuntimeError("no LLM endpoint configured")
        return self.llm_cache.get_or_compute(
            content_key("llm", endpoint.settings(), messages),
            lambda: endpoint.reply(messages))

    def voice(self, language: str) -> Voice:
        """The TTS voice of ``language`` at the native rate."""
        with self._lock:
            if language not in self._voices:
                self._voices[language] = Voice(language, self.rate, self.config.tts_voice,
                                               self.config.tts_speed, self.config.output_gain,
                                               self.tts_cache)
            return self._voices[language]

    def turn_complete(self, audio16: np.ndarray) -> float:
        """Smart Turn's P(turn complete) for the user audio ending now (16 kHz)."""
        with self._lock:
            if self._smart_turn is None:
                self._smart_turn = SmartTurn(find_model(self.config.smart_turn_model))
            model = self._smart_turn
        tail = audio16[-8 * VAD_RATE:]
        probability, _ = self.turn_cache.get_or_compute(
            content_key("smart-turn", self.config.smart_turn_model, tail),
            lambda: model.probability(tail))
        return probability
