"""Voice activity per channel: speech spans (seconds) from one channel of audio.

Engines
-------
``energy``  RMS of consecutive ``frame_ms`` frames against ``threshold_db`` below the channel's
            loudest frame (and never below ``floor_dbfs``).  Exact to one frame on clean speech,
            the right choice for synthetic and system-output channels.
``webrtc``  WebRTC VAD (``webrtcvad-wheels``), audio resampled to 16 kHz with soxr.
``silero``  Silero v6 ONNX, the model that ships inside faster-whisper (extra ``[asr]``).

A span covers whole frames: ``[i * hop, j * hop]`` seconds for active frames ``i .. j-1``,
clipped to the audio length.  Spans are sorted and do not overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..errors import DuplexevalError
from ..timeline import Span

__all__ = ["ActivityOptions", "VadEngine", "detect_activity"]


class VadEngine(StrEnum):
    """Available voice activity engines."""

    ENERGY = "energy"
    WEBRTC = "webrtc"
    SILERO = "silero"


@dataclass(frozen=True)
class ActivityOptions:
    """Settings of :func:`detect_activity` (recorded with every result that uses them)."""

    engine: VadEngine = VadEngine.ENERGY
    frame_ms: float = 10.0
    """Frame length in milliseconds (energy; webrtc accepts 10, 20 or 30)."""
    threshold_db: float = 40.0
    """energy: a frame is speech when its RMS is within this many dB of the loudest frame."""
    floor_dbfs: float = -60.0
    """energy: frames quieter than this (dB full scale) are never speech."""
    webrtc_mode: int = 2
    """webrtc aggressiveness, 0 (least) to 3 (most)."""
    silero_threshold: float = 0.5
    """silero speech probability threshold."""
    min_speech_ms: float = 0.0
    """Drop speech spans shorter than this."""


def _runs(active: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` index runs of True values."""
    padded = np.concatenate([[False], active.astype(bool), [False]])
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _energy(x: np.ndarray, sr: int, opts: ActivityOptions) -> tuple[np.ndarray, float]:
    hop = max(1, round(sr * opts.frame_ms / 1000.0))
    n = len(x) // hop
    if n == 0:
        return np.zeros(0, dtype=bool), hop / sr
    frames = x[: n * hop].reshape(n, hop).astype(np.float64)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    peak = float(rms.max())
    threshold = max(peak * 10 ** (-opts.threshold_db / 20), 10 ** (opts.floor_dbfs / 20))
    return rms > threshold, hop / sr


def _webrtc(x: np.ndarray, sr: int, opts: ActivityOptions) -> tuple[np.ndarray, float]:
    import soxr
    import webrtcvad

    if opts.frame_ms not in (10.0, 20.0, 30.0):
        raise DuplexevalError("webrtc VAD frames must be 10, 20 or 30 ms")
    x16 = soxr.resample(x.astype(np.float32), sr, 16000) if sr != 16000 else x
    pcm = (np.clip(x16, -1.0, 1.0) * 32767).astype("<i2")
    hop = int(16000 * opts.frame_ms / 1000)
    vad = webrtcvad.Vad(opts.webrtc_mode)
    n = len(pcm) // hop
    active = np.array(
        [vad.is_speech(pcm[i * hop:(i + 1) * hop].tobytes(), 16000) for i in range(n)], dtype=bool
    )
    return active, hop / 16000


def _silero(x: np.ndarray, sr: int, opts: ActivityOptions) -> list[Span]:
    try:
        import soxr
        from faster_whisper.vad import VadOptions, get_speech_timestamps
    except ImportError as exc:
        raise DuplexevalError(
            "the silero VAD needs faster-whisper: pip install 'duplexeval[asr]'"
        ) from exc
    x16 = soxr.resample(x.astype(np.float32), sr, 16000) if sr != 16000 else x.astype(np.float32)
    stamps = get_speech_timestamps(
        x16,
        VadOptions(threshold=opts.silero_threshold, min_silence_duration_ms=0,
                   speech_pad_ms=0, min_speech_duration_ms=0),
    )
    return [Span(s["start"] / 16000, s["end"] / 16000) for s in stamps]


def detect_activity(
    x: np.ndarray, sample_rate: int, options: ActivityOptions = ActivityOptions()
) -> list[Span]:
    """Speech spans of one channel ``x`` (float samples in [-1, 1]) at ``sample_rate`` Hz."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError("detect_activity takes one channel (a 1-D array)")
    duration = len(x) / sample_rate
    if options.engine == VadEngine.SILERO:
        spans = _silero(x, sample_rate, options)
    else:
        detector = _energy if options.engine == VadEngine.ENERGY else _webrtc
        active, hop = detector(x, sample_rate, options)
        spans = [Span(a * hop, min(b * hop, duration)) for a, b in _runs(active)]
    min_len = options.min_speech_ms / 1000.0
    return [s for s in spans if s.duration >= min_len and s.duration > 0]
