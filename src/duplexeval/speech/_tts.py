"""Text-to-speech engines behind one small interface, for the dialogue synthesizer.

Conventions
-----------
* Audio is float32 mono in [-1, 1] at the engine's own sample rate (Hz); nothing is resampled.
* Word times (:class:`TimedWord`) are seconds from the first sample of the utterance audio,
  ``0 <= start < end``; words are in order and do not overlap (one may end where the next
  starts).  They come from the engine itself (phoneme durations of the synthesis); an engine
  without word timing returns no words, and the caller aligns with ASR instead.
* ``speed`` is a rate factor: 1.0 is the voice's natural rate, 2.0 about halves the duration.
* The same engine settings, text, voice and speed give bit-identical audio (every engine here
  is deterministic; piper's sampling noise comes from a generator seeded from the input).
  Checked across processes and onnxruntime thread counts, for the pinned package versions.

Engines (all offline; the Python packages are optional extras)
--------------------------------------------------------------
=============  ========  ===============================  =====================================
name           language  extra / requirement              word timing
=============  ========  ===============================  =====================================
``piper``      en        ``duplexeval[tts-en]`` (GPL)      VITS phoneme durations
``openjtalk``  ja        ``duplexeval[tts]``               HTS state durations of the labels
``kokoro-ja``  ja        ``duplexeval[tts]``               none
``espeak``     en        the ``espeak-ng`` program         none
=============  ========  ===============================  =====================================

:func:`load_engine` raises :class:`TtsUnavailable` (one line, naming the pip extra) when a
package is missing, and :class:`TtsError` for an unknown engine or voice.
"""

from __future__ import annotations

import importlib
import importlib.util
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from duplexeval._environment import installed_version
from duplexeval.errors import DuplexevalError
from duplexeval.registry import Registry, subclass_of

__all__ = [
    "ENGINES",
    "MAX_SPEED",
    "MIN_SPEED",
    "TTS_ENGINES",
    "TimedWord",
    "TtsEngine",
    "TtsError",
    "TtsUnavailable",
    "Utterance",
    "available_engines",
    "engine_class",
    "load_engine",
]

MIN_SPEED = 0.25
MAX_SPEED = 4.0
WRAPPER_VERSION = 1
"""Bumped whenever this package changes what an engine returns for the same inputs."""

ENGINES: dict[str, str] = {
    "piper": "duplexeval.speech.engines._piper:PiperEngine",
    "openjtalk": "duplexeval.speech.engines._openjtalk:OpenJTalkEngine",
    "kokoro-ja": "duplexeval.speech.engines._kokoro:KokoroJaEngine",
    "espeak": "duplexeval.speech.engines._espeak:EspeakEngine",
}
"""Engine name -> ``module:Class``."""


class TtsError(DuplexevalError):
    """A TTS request that cannot be served: unknown engine or voice."""


class TtsUnavailable(TtsError):
    """The engine's package (or program) is not installed; the message says how to install it."""


@dataclass(frozen=True)
class TimedWord:
    """One word of an utterance: ``[start, end)`` in seconds from the start of the audio."""

    start: float
    end: float
    text: str

    def __post_init__(self) -> None:
        if not 0.0 <= self.start < self.end:
            raise ValueError(f"word {self.text!r} needs 0 <= start < end, "
                             f"got {self.start}..{self.end}")


@dataclass(frozen=True, eq=False)
class Utterance:
    """Synthesized speech: float32 mono ``audio`` in [-1, 1] at ``sample_rate`` Hz.

    ``words``: word timing from the engine itself, in order and non-overlapping; empty when the
    engine has none.
    """

    audio: np.ndarray
    sample_rate: int
    words: tuple[TimedWord, ...] = ()

    def __post_init__(self) -> None:
        if self.audio.dtype != np.float32 or self.audio.ndim != 1:
            raise ValueError("Utterance.audio must be a 1-D float32 array")
        if self.sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {self.sample_rate}")

    @property
    def duration(self) -> float:
        """Length of the audio in seconds."""
        return len(self.audio) / self.sample_rate


class TtsEngine(ABC):
    """A text-to-speech engine.  Subclasses set the class attributes and implement
    :meth:`voices` and :meth:`_synthesize`; models load lazily (or on :meth:`load`)."""

    name: ClassVar[str]
    language: ClassVar[str]
    """ISO 639-1 code of the language the engine speaks."""
    modules: ClassVar[tuple[str, ...]] = ()
    """Python modules the engine imports (checked by :meth:`unavailable_reason`)."""
    distributions: ClassVar[tuple[str, ...]] = ()
    """Distribution names whose versions :meth:`settings` reports."""
    install_hint: ClassVar[str] = ""
    """How to install what is missing, e.g. ``pip install 'duplexeval[tts]'``."""

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """``None`` when the engine can run here, else a one-line reason with the install hint."""
        missing = [m for m in cls.modules if not _module_exists(m)]
        if not missing:
            return None
        return (f"TTS engine {cls.name!r} needs the Python module(s) {', '.join(missing)}, "
                f"which are not installed: {cls.install_hint}")

    def _require(self) -> None:
        """Raise :class:`TtsUnavailable` unless the engine can run (call from ``__init__``)."""
        reason = self.unavailable_reason()
        if reason is not None:
            raise TtsUnavailable(reason)

    @abstractmethod
    def voices(self) -> list[str]:
        """The voice names, the default first."""

    @property
    def default_voice(self) -> str:
        """The voice used when none is named."""
        return self.voices()[0]

    def load(self) -> None:  # noqa: B027 - optional hook, nothing to load by default
        """Load the models now instead of at the first :meth:`synthesize` (optional)."""

    def resolve_voice(self, voice: str | None) -> str:
        """``voice``, or the default voice for ``None``; :class:`TtsError` for an unknown one."""
        if voice is None:
            return self.default_voice
        voices = self.voices()
        if voice not in voices:
            raise TtsError(f"unknown voice {voice!r} for TTS engine {self.name!r}; "
                           f"voices: {', '.join(voices)}")
        return voice

    def synthesize(self, text: str, voice: str | None = None, speed: float = 1.0) -> Utterance:
        """Speak ``text`` with ``voice`` (default: :attr:`default_voice`) at rate ``speed``."""
        if not text.strip():
            raise ValueError("nothing to synthesize: the text is empty")
        if not MIN_SPEED <= speed <= MAX_SPEED:
            raise ValueError(f"speed must be in [{MIN_SPEED}, {MAX_SPEED}], got {speed}")
        return self._synthesize(text, self.resolve_voice(voice), float(speed))

    @abstractmethod
    def _synthesize(self, text: str, voice: str, speed: float) -> Utterance:
        """Synthesize with a valid voice and speed."""

    def settings(self, voice: str | None = None) -> dict[str, Any]:
        """What determines the output besides text and speed: engine, package versions, voice
        and engine parameters (JSON-serialisable; for caching and provenance)."""
        return {
            "engine": self.name,
            "language": self.language,
            "voice": self.resolve_voice(voice),
            "wrapper_version": WRAPPER_VERSION,
            "packages": {d: installed_version(d) for d in self.distributions},
            **self._parameters(),
        }

    def _parameters(self) -> dict[str, Any]:
        """Engine parameters for :meth:`settings` (override)."""
        return {}


TTS_ENGINES: Registry[type[TtsEngine]] = Registry(
    "TTS engine", "tts_engines", ENGINES, subclass_of(TtsEngine, error=TtsError), error=TtsError)
"""The TTS engines (:class:`~duplexeval.registry.Registry`, entry-point group
``duplexeval.tts_engines``: ``name = "package.module:EngineClass"``)."""


def engine_class(name: str) -> type[TtsEngine]:
    """The class of engine ``name``; :class:`TtsError` naming the known engines if unknown."""
    return TTS_ENGINES.get(name)


def available_engines() -> dict[str, type[TtsEngine]]:
    """The engines whose packages (or program) are installed here, by name (sorted)."""
    out: dict[str, type[TtsEngine]] = {}
    for name in TTS_ENGINES.names():
        cls = engine_class(name)
        if cls.unavailable_reason() is None:
            out[name] = cls
    return out


def load_engine(name: str, **options: Any) -> TtsEngine:
    """A new engine ``name`` built with ``options`` (its constructor's keyword arguments).

    Raises :class:`TtsError` for an unknown name and :class:`TtsUnavailable` (which names the
    pip extra) when the engine's package is missing.
    """
    return engine_class(name)(**options)


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
