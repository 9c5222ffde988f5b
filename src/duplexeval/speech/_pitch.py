"""Median fundamental frequency (F0) of a voice, and the gender guess made from it.

F0 is estimated per frame with YIN (de Cheveigne and Kawahara 2002; 40 ms frames every 10 ms,
lags of ``fmax`` (700 Hz) to ``fmin`` (60 Hz)): the period is the first lag where the
cumulative mean normalised difference dips below :data:`THRESHOLD`, at the bottom of that dip
(else the lag of its minimum), refined by parabolic interpolation.  A frame counts when its
level is within :data:`LEVEL_DB` dB of the loudest frame and the difference at its period is
below :data:`VOICING`.
The voice's F0 is the median over voiced frames, in Hz.  Crude next to a real pitch tracker,
but medians over seconds of speech are robust to its octave errors, and that is all the voice
choice needs.

Gender: F0 below :data:`FEMALE_MIN_HZ` (165 Hz, the usual boundary between adult male and
female speaking F0) is ``"male"``, else ``"female"``.  A guess from pitch only, used to prefer
a voice of the same register.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FEMALE_MIN_HZ", "frame_f0", "gender_of", "median_f0"]

FEMALE_MIN_HZ = 165.0
LEVEL_DB = 30.0
THRESHOLD = 0.15
"""YIN's absolute threshold: the first dip of the normalised difference below it is the period."""
VOICING = 0.35
"""A frame whose normalised difference at the period is above this is unvoiced."""
FRAME_S = 0.04
HOP_S = 0.01


def _frames(x: np.ndarray, size: int, hop: int) -> np.ndarray:
    count = 1 + (len(x) - size) // hop
    index = np.arange(size)[None, :] + hop * np.arange(count)[:, None]
    return x[index]


def _cmndf(frames: np.ndarray, width: int, max_lag: int) -> np.ndarray:
    """YIN's cumulative mean normalised difference of each frame, lags ``0 .. max_lag - 1``
    (frames are ``width + max_lag`` samples; the first ``width`` are compared)."""
    n = 1 << int(np.ceil(np.log2(frames.shape[1] + width)))
    cross = np.fft.irfft(np.conj(np.fft.rfft(frames[:, :width], n, axis=1))
                         * np.fft.rfft(frames, n, axis=1), n, axis=1)[:, :max_lag]
    power = np.cumsum(np.pad(frames**2, ((0, 0), (1, 0))), axis=1)
    lags = np.arange(max_lag)
    energy = power[:, lags + width] - power[:, lags]
    diff = np.maximum(energy[:, :1] + energy - 2 * cross, 0.0)
    mean = np.cumsum(diff[:, 1:], axis=1) / lags[1:]
    out = np.ones_like(diff)
    out[:, 1:] = diff[:, 1:] / np.maximum(mean, 1e-12)
    return out


def frame_f0(audio: np.ndarray, rate: int, fmin: float = 60.0, fmax: float = 700.0
             ) -> np.ndarray:
    """F0 (Hz) of every voiced frame, in time order (see the module docstring)."""
    x = np.asarray(audio, dtype=np.float64).reshape(-1)
    width, hop = int(FRAME_S * rate), int(HOP_S * rate)
    lo, hi = max(2, int(rate / fmax)), int(rate / fmin) + 2
    if len(x) < width + hi:
        return np.zeros(0)
    frames = _frames(x, width + hi, hop)
    level = np.sum(frames[:, :width] ** 2, axis=1)
    loud = level > level.max() * 10 ** (-LEVEL_DB / 10) if level.max() > 0 else level > 1
    d = _cmndf(frames[loud], width, hi)
    rows = np.arange(len(d))
    below = d[:, lo:hi - 1] < THRESHOLD
    lags = np.where(below.any(axis=1), lo + np.argmax(below, axis=1),
                    lo + np.argmin(d[:, lo:hi - 1], axis=1))
    for _ in range(hi - lo):  # down to the local minimum
        down = (lags + 1 < hi - 1) & (d[rows, np.minimum(lags + 1, hi - 1)] < d[rows, lags])
        if not down.any():
            break
        lags = lags + down
    a, b, c = d[rows, lags - 1], d[rows, lags], d[rows, lags + 1]
    denom = a - 2 * b + c
    shift = np.where(np.abs(denom) > 1e-12, 0.5 * (a - c) / np.where(denom == 0, 1, denom), 0)
    voiced = b < VOICING
    return rate / (lags[voiced] + shift[voiced])


def median_f0(audio: np.ndarray, rate: int, fmin: float = 60.0, fmax: float = 700.0
              ) -> float | None:
    """The median F0 in Hz over voiced frames; ``None`` without any voiced frame."""
    f0 = frame_f0(audio, rate, fmin, fmax)
    return float(np.median(f0)) if f0.size else None


def gender_of(f0: float) -> str:
    """``"male"`` below :data:`FEMALE_MIN_HZ`, else ``"female"``."""
    return "male" if f0 < FEMALE_MIN_HZ else "female"
