"""Derived voices: one voice made to sound like another speaker with the WORLD vocoder.

A TTS engine with one voice (English piper has only ``joe``) speaks for every role of a
dialogue: user, system and background would all be the same person.  A *voice shift* makes a
distinct speaker out of it, as the classic gender conversion with a vocoder does: the speech is
analysed with WORLD (``pyworld``: F0 with Harvest, the spectral envelope with CheapTrick, the
aperiodicity with D4C, 5 ms frames), then resynthesised with

* the F0 contour multiplied by :attr:`VoiceShift.pitch` (voiced frames only), and
* the spectral envelope and the aperiodicity warped along the frequency axis by
  :attr:`VoiceShift.formant`: the value at ``f`` becomes the old value at ``f / formant``, so
  ``formant > 1`` moves every formant up (a shorter vocal tract, e.g. a female or a child's
  voice) and ``< 1`` down.

Harvest, not the faster DIO: on piper's ``joe`` DIO (with StoneMask) put 20-30 % of the voiced
frames an octave off Harvest's, so a voice derived with 0.8 x F0 came out *higher* than ``joe``
(median F0 137 Hz against 118 Hz, by Harvest on the built audio).

Conventions: audio is float32 mono in [-1, 1] at ``rate`` Hz; the result has exactly as many
samples as the input (WORLD's frames cover the input; the tail is cut or zero-padded to length),
so every word keeps its timing; its peak is the input's peak.  Deterministic: WORLD's only random
source (the noise of aperiodic excitation) is reseeded on every synthesis, and the calls are
serialised by a lock because that generator's state is global to the process.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["F0_CEIL_HZ", "F0_FLOOR_HZ", "FRAME_MS", "VoiceShift", "shift_voice", "warp_frequency"]

FRAME_MS = 5.0
"""WORLD frame period (ms)."""
F0_FLOOR_HZ = 70.0
F0_CEIL_HZ = 280.0
"""F0 search range (Hz) of the analysis, the base voice's: piper's ``joe`` speaks at 95-190 Hz
(10th-90th percentile, Harvest); the shifted contour may leave it.  Harvest's cost grows with
the octaves searched: 70-280 Hz takes about half the time of 60-400 Hz."""
_LOCK = threading.Lock()


@dataclass(frozen=True)
class VoiceShift:
    """How a derived voice differs from its base voice: F0 factor ``pitch`` and formant
    (spectral envelope frequency) factor ``formant``, both positive; ``(1, 1)`` is the base."""

    pitch: float
    formant: float

    def __post_init__(self) -> None:
        for name in ("pitch", "formant"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.25 <= value <= 4.0):
                raise ValueError(f"VoiceShift.{name} must be in [0.25, 4], got {value}")

    @property
    def semitones(self) -> float:
        """The F0 shift in semitones (12 per octave)."""
        return 12.0 * math.log2(self.pitch)

    def to_json(self) -> dict[str, Any]:
        """``{"pitch", "formant"}``: what determines the derived audio besides the base."""
        return {"pitch": self.pitch, "formant": self.formant}


def warp_frequency(envelope: np.ndarray, factor: float) -> np.ndarray:
    """Each frame (row) of ``envelope`` (frames, bins from 0 Hz to Nyquist) resampled so that
    bin ``k`` takes the value at bin ``k / factor`` (linear interpolation; past the last bin,
    the last bin's value)."""
    bins = envelope.shape[1]
    source = np.minimum(np.arange(bins) / factor, bins - 1)
    low = np.floor(source).astype(np.int64)
    high = np.minimum(low + 1, bins - 1)
    weight = source - low
    return envelope[:, low] * (1.0 - weight) + envelope[:, high] * weight


def shift_voice(audio: np.ndarray, rate: int, shift: VoiceShift,
                f0_range: tuple[float, float] = (F0_FLOOR_HZ, F0_CEIL_HZ)) -> np.ndarray:
    """``audio`` spoken by the derived voice ``shift`` (see the module docstring); ``f0_range``
    (Hz) is where the analysis looks for the base voice's F0."""
    import pyworld

    floor, ceil = f0_range

    x = np.ascontiguousarray(audio, dtype=np.float64).reshape(-1)
    if len(x) == 0 or not np.any(x):
        return np.zeros(len(x), dtype=np.float32)
    with _LOCK:
        f0, times = pyworld.harvest(x, rate, f0_floor=floor, f0_ceil=ceil,
                                    frame_period=FRAME_MS)
        fft_size = pyworld.get_cheaptrick_fft_size(rate, floor)
        envelope = pyworld.cheaptrick(x, f0, times, rate, f0_floor=floor, fft_size=fft_size)
        aperiodicity = pyworld.d4c(x, f0, times, rate, fft_size=fft_size)
        y = pyworld.synthesize(np.ascontiguousarray(f0 * shift.pitch),
                               np.ascontiguousarray(warp_frequency(envelope, shift.formant)),
                               np.ascontiguousarray(warp_frequency(aperiodicity, shift.formant)),
                               rate, frame_period=FRAME_MS)
    y = y[:len(x)] if len(y) >= len(x) else np.pad(y, (0, len(x) - len(y)))
    peak_in, peak_out = float(np.max(np.abs(x))), float(np.max(np.abs(y)))
    if peak_out > 0:
        y = y * (peak_in / peak_out)
    return np.clip(y, -1.0, 1.0).astype(np.float32)
