"""Reverberation: a synthetic room impulse response (pyroomacoustics) at a requested RT60.

The room is a shoebox of :data:`ROOM` metres with one source (the user's mouth) and one
microphone at fixed positions; its walls share one energy absorption coefficient.
pyroomacoustics' image source model computes the response (deterministic: no randomised
images, no ray tracing, the reflection order capped at :data:`MAX_ORDER`).  Sabine's formula
(``pyroomacoustics.inverse_sabine``) gives a first absorption; the response's RT60 is then
measured as pyroomacoustics does it (``pyroomacoustics.experimental.measure_rt60``: Schroeder
backward integration, the T30 decay extrapolated to 60 dB) and the requested RT60 is corrected
by the ratio until the measured value is within :data:`TOLERANCE` of the target (at most
:data:`ITERATIONS` tries; the last is kept).  Nothing of the acoustics is written here.

pyroomacoustics is the ``conditions`` extra (MIT); it is imported when a reverb is asked for.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import scipy.signal

from duplexeval.errors import DuplexevalError

__all__ = ["ITERATIONS", "MAX_ORDER", "MIC", "ROOM", "SOURCE", "TOLERANCE", "measure_rt60",
           "reverberate", "room_impulse_response"]

ROOM = (6.0, 4.5, 3.0)
"""Room size (m): length, width, height."""
SOURCE = (2.0, 3.1, 1.6)
"""The talker's position (m)."""
MIC = (4.2, 1.7, 1.4)
"""The microphone's position (m): 3.1 m from the talker."""
MAX_ORDER = 60
"""Highest image-source reflection order (bounds the cost: about 0.2 s per response)."""
TOLERANCE = 0.03
"""Relative RT60 error at which the correction stops."""
ITERATIONS = 8
"""Responses computed at most per RT60."""


def _pra() -> Any:
    try:
        import pyroomacoustics
    except ImportError:
        raise DuplexevalError("reverb needs pyroomacoustics: pip install "
                              "'duplexeval[conditions]'") from None
    return pyroomacoustics


def measure_rt60(rir: np.ndarray, rate: int) -> float:
    """The RT60 (s) of an impulse response: Schroeder backward integration, T30 (the decay
    from -5 to -35 dB) extrapolated to 60 dB (pyroomacoustics' ``measure_rt60``)."""
    return float(_pra().experimental.measure_rt60(rir, fs=rate, decay_db=30))


def _response(rt60: float, rate: int) -> np.ndarray:
    pra = _pra()
    absorption, order = pra.inverse_sabine(rt60, list(ROOM))
    room = pra.ShoeBox(list(ROOM), fs=rate, materials=pra.Material(absorption),
                       max_order=min(order, MAX_ORDER), use_rand_ism=False,
                       air_absorption=False)
    room.add_source(list(SOURCE))
    room.add_microphone(list(MIC))
    room.compute_rir()
    return np.asarray(room.rir[0][0], dtype=np.float64)


@functools.lru_cache(maxsize=16)
def room_impulse_response(rt60: float, rate: int) -> np.ndarray:
    """The room's impulse response at ``rate`` Hz whose measured RT60 is ``rt60`` s (within
    :data:`TOLERANCE` when the correction converges; see the module docstring), normalised to
    a unit direct-path peak (read-only float64)."""
    asked = rt60
    for _ in range(ITERATIONS):
        h = _response(asked, rate)
        measured = measure_rt60(h, rate)
        if abs(measured / rt60 - 1) <= TOLERANCE:
            break
        asked = min(max(asked * rt60 / measured, 0.05), 10.0)
    h = h / np.max(np.abs(h))
    h.flags.writeable = False
    return h


def reverberate(x: np.ndarray, rt60: float, rate: int) -> np.ndarray:
    """``x`` convolved with :func:`room_impulse_response` (the same length: the tail past
    the end is cut), float32, at the power of ``x`` (the room changes the sound, not the
    level); the response's delay before its direct path is removed, so the speech keeps its
    timing."""
    h = room_impulse_response(rt60, rate)
    h = h[int(np.argmax(np.abs(h))):]
    clean = np.asarray(x, dtype=np.float64)
    y = scipy.signal.fftconvolve(clean, h)[:len(x)]
    power = float(np.mean(y ** 2)) if len(y) else 0.0
    if power > 0:
        y *= np.sqrt(float(np.mean(clean ** 2)) / power)
    return y.astype(np.float32)
