"""Audio files: the one module that reads, writes and inspects a wav (soundfile underneath,
imported on first use).

Conventions, as every stage uses them:

* Samples are float32 in [-1, 1], shaped ``(frames, channels)`` (always 2-D, also for mono);
  rates are in Hz.
* Stereo dialogue audio is ``(frames, 2)``: channel 0 and channel 1 of the dialogue, or in a
  run directory ch0 the user as fed and ch1 the system (:func:`stereo`).
* A write is atomic (a temporary file renamed onto the target; parents made), and its
  ``subtype`` is the sample format on disk: ``PCM_16`` (the default, soundfile's own for wav),
  ``PCM_24`` (lossless to -144 dB, byte-reproducible: run directories) or ``FLOAT``.
* A file that cannot be read raises :class:`AudioReadError`, one line naming the file; its
  ``reason`` is the decoder's own message, for callers that report problems in their own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from duplexeval._fileio import atomic_path
from duplexeval.errors import DuplexevalError

__all__ = ["AudioReadError", "WavInfo", "audio_info", "audio_library", "read_audio", "stereo",
           "write_audio", "write_opus"]


class AudioReadError(DuplexevalError):
    """An audio file that cannot be opened or decoded."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: cannot read audio ({reason})")
        self.source = source
        self.reason = reason


@dataclass(frozen=True)
class WavInfo:
    """What an audio file's header says."""

    frames: int
    sample_rate: int
    channels: int

    @property
    def duration(self) -> float:
        """Seconds."""
        return self.frames / self.sample_rate


def _name(source: str | Path | BinaryIO) -> str:
    return str(source) if isinstance(source, (str, Path)) else "<audio data>"


def read_audio(source: str | Path | BinaryIO, dtype: str = "float32") -> tuple[np.ndarray, int]:
    """The samples ``(frames, channels)`` (float32 unless ``dtype`` says ``float64``) and the
    rate of a file (or of a file-like object holding one)."""
    import soundfile as sf

    try:
        data, rate = sf.read(str(source) if isinstance(source, Path) else source,
                             dtype=dtype, always_2d=True)
    except (RuntimeError, OSError) as exc:  # soundfile's LibsndfileError is a RuntimeError
        raise AudioReadError(_name(source), str(exc)) from None
    return data, int(rate)


def audio_info(path: str | Path) -> WavInfo:
    """The header of ``path``: frames, rate and channels."""
    import soundfile as sf

    try:
        info = sf.info(str(path))
    except (RuntimeError, OSError) as exc:
        raise AudioReadError(str(path), str(exc)) from None
    return WavInfo(int(info.frames), int(info.samplerate), int(info.channels))


def write_audio(path: str | Path, data: np.ndarray, sample_rate: int,
                subtype: str = "PCM_16") -> None:
    """Write ``data`` (``(frames,)`` or ``(frames, channels)``) to the wav ``path``
    atomically, in the sample format ``subtype``."""
    import soundfile as sf

    with atomic_path(path, suffix=".wav") as tmp:
        sf.write(str(tmp), data, sample_rate, subtype=subtype)


def write_opus(path: str | Path, mono: np.ndarray, sample_rate: int, level: float) -> None:
    """Write the ``(frames,)`` float samples ``mono`` to ``path`` as Ogg Opus atomically, at
    libsndfile's compression ``level`` (0 = best quality, 1 = smallest).  Reading it back
    (:func:`read_audio`) gives as many frames, at ``sample_rate``."""
    import soundfile as sf

    with atomic_path(path, suffix=".opus") as tmp:
        sf.write(str(tmp), mono, sample_rate, format="OGG", subtype="OPUS",
                 compression_level=level)


def audio_library() -> str:
    """The audio file library and its version (``libsndfile 1.2.2``)."""
    import soundfile as sf

    return f"libsndfile {sf.__libsndfile_version__}"


def stereo(ch0: np.ndarray, ch1: np.ndarray) -> np.ndarray:
    """Two mono channels of equal length as ``(frames, 2)``."""
    return np.stack([ch0, ch1], axis=1)
