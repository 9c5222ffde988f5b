"""What tells one voice from another: median F0, formants and the MFCC mean of its speech.

Used to check that the roles of a synthesized dialogue (user, system, background speaker) are
different voices (:mod:`duplexeval.synth._voice_distinctness`).  No speaker-embedding model ships
offline, so the measures are classic ones:

* **median F0** (Hz): WORLD's Harvest (``pyworld``, 40-400 Hz, 5 ms frames) over the voiced
  frames of at most the first :data:`F0_MAX_S` seconds.  Not the YIN of
  :mod:`duplexeval.speech._pitch`: on piper's ``joe`` YIN's median is an octave error (91 Hz
  where Harvest finds 118-129 Hz), and pitch is the measure that must not be wrong here.  The
  floor is below any speaking voice: at 60 Hz Harvest loses the low frames of a deep voice
  (joe x 0.6 measured 104 Hz instead of 88 Hz).
* **formants** F1-F3 (Hz): per 25 ms frame (10 ms hop) within :data:`LEVEL_DB` of the loudest,
  after pre-emphasis (0.97) and a Hamming window, the roots of the LPC polynomial (order
  ``2 + rate / 1000``, autocorrelation method) with a frequency of 90 Hz to Nyquist - 50 Hz
  and a bandwidth under 400 Hz, lowest first; each formant's median over the frames that have
  it.
* **MFCC mean**: per frame of the same grid, the type-II orthonormal DCT of the log (natural)
  power in 40 Slaney mel bands (0 Hz to Nyquist, :func:`duplexeval.speech._dnsmos.mel_filters`);
  coefficients 1-12 (c0, the level, left out), averaged over the loud frames.  The distance of
  two voices is the Euclidean distance of their means, in the units of the log power.

Audio is float32 (or float64) mono at ``rate`` Hz, concatenated speech of one speaker; a few
seconds are enough for medians and means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.fft import dct
from scipy.linalg import solve_toeplitz

from duplexeval.speech._dnsmos import mel_filters

__all__ = ["F0_MAX_S", "LEVEL_DB", "VoiceProfile", "formants", "median_f0", "mfcc_distance",
           "mfcc_mean", "semitones_apart", "voice_profile"]

FRAME_S = 0.025
HOP_S = 0.010
LEVEL_DB = 30.0
"""Frames more than this far below the loudest frame are left out (pauses, breath)."""
N_MELS = 40
N_MFCC = 12
MAX_BANDWIDTH_HZ = 400.0
MIN_FORMANT_HZ = 90.0
F0_MAX_S = 30.0


def median_f0(audio: np.ndarray, rate: int) -> float | None:
    """Harvest's median F0 (Hz) over the voiced frames of the first :data:`F0_MAX_S` seconds;
    ``None`` without a voiced frame."""
    import pyworld

    x = np.ascontiguousarray(audio[:round(F0_MAX_S * rate)], dtype=np.float64)
    if len(x) < rate // 10:
        return None
    f0, _ = pyworld.harvest(x, rate, f0_floor=40.0, f0_ceil=400.0, frame_period=5.0)
    voiced = f0[f0 > 0]
    return float(np.median(voiced)) if voiced.size else None


def _loud_frames(audio: np.ndarray, rate: int) -> np.ndarray:
    """The 25 ms frames (10 ms hop) within :data:`LEVEL_DB` of the loudest: ``(frames, n)``."""
    x = np.asarray(audio, dtype=np.float64).reshape(-1)
    size, hop = round(FRAME_S * rate), round(HOP_S * rate)
    if len(x) < size:
        return np.zeros((0, size))
    count = 1 + (len(x) - size) // hop
    frames = x[np.arange(size)[None, :] + hop * np.arange(count)[:, None]]
    energy = np.sum(frames**2, axis=1)
    if energy.max() <= 0:
        return np.zeros((0, size))
    return frames[energy >= energy.max() * 10 ** (-LEVEL_DB / 10)]


def mfcc_mean(audio: np.ndarray, rate: int) -> np.ndarray:
    """MFCC 1-12 averaged over the loud frames (see the module docstring); zeros if none."""
    frames = _loud_frames(audio, rate)
    if len(frames) == 0:
        return np.zeros(N_MFCC)
    n_fft = 1 << math.ceil(math.log2(frames.shape[1]))
    power = np.abs(np.fft.rfft(frames * np.hamming(frames.shape[1]), n=n_fft, axis=1)) ** 2
    mel = power @ mel_filters(rate, n_fft, N_MELS).T.astype(np.float64)
    cepstra = dct(np.log(np.maximum(mel, 1e-10)), type=2, norm="ortho", axis=1)
    return np.asarray(cepstra[:, 1:N_MFCC + 1].mean(axis=0))


def mfcc_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Euclidean distance of two MFCC means."""
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)))


def _frame_formants(frame: np.ndarray, rate: int, order: int) -> list[float]:
    x = np.append(frame[0], frame[1:] - 0.97 * frame[:-1]) * np.hamming(len(frame))
    r = np.correlate(x, x, mode="full")[len(x) - 1:len(x) + order]
    if r[0] <= 0:
        return []
    try:
        a = solve_toeplitz(r[:order], -r[1:order + 1])
    except np.linalg.LinAlgError:
        return []
    roots = np.roots(np.concatenate([[1.0], a]))
    roots = roots[np.imag(roots) > 0]
    freqs = np.angle(roots) * rate / (2 * np.pi)
    bandwidths = -np.log(np.maximum(np.abs(roots), 1e-12)) * rate / np.pi
    keep = (freqs > MIN_FORMANT_HZ) & (freqs < rate / 2 - 50) & (bandwidths < MAX_BANDWIDTH_HZ)
    return sorted(float(f) for f in freqs[keep])


def formants(audio: np.ndarray, rate: int, count: int = 3) -> tuple[float | None, ...]:
    """Median F1..F``count`` in Hz over the loud frames (``None`` for a formant no frame has)."""
    order = 2 + rate // 1000
    per_formant: list[list[float]] = [[] for _ in range(count)]
    for frame in _loud_frames(audio, rate):
        for k, f in enumerate(_frame_formants(frame, rate, order)[:count]):
            per_formant[k].append(f)
    return tuple(float(np.median(v)) if v else None for v in per_formant)


def semitones_apart(a_hz: float, b_hz: float) -> float:
    """``|12 log2(a / b)|``: how far apart two frequencies are, in semitones."""
    return abs(12.0 * math.log2(a_hz / b_hz))


@dataclass(frozen=True)
class VoiceProfile:
    """One voice measured on its speech: ``seconds`` of audio, median F0 (Hz, ``None`` if
    unvoiced), formants F1-F3 (Hz) and the MFCC mean."""

    seconds: float
    f0_hz: float | None
    formants_hz: tuple[float | None, ...]
    mfcc: np.ndarray

    def to_json(self) -> dict[str, Any]:
        """Seconds, F0 and formants rounded to 0.1; the MFCC mean to 0.001."""
        return {"seconds": round(self.seconds, 1),
                "f0_hz": None if self.f0_hz is None else round(self.f0_hz, 1),
                "formants_hz": [None if f is None else round(f, 1) for f in self.formants_hz],
                "mfcc_mean": [round(float(c), 3) for c in self.mfcc]}


def voice_profile(audio: np.ndarray, rate: int) -> VoiceProfile:
    """The :class:`VoiceProfile` of one speaker's concatenated speech."""
    x = np.asarray(audio, dtype=np.float32).reshape(-1)
    return VoiceProfile(seconds=len(x) / rate, f0_hz=median_f0(x, rate),
                        formants_hz=formants(x, rate), mfcc=mfcc_mean(x, rate))
