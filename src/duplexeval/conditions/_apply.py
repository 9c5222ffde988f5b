"""Applying conditions to a mono signal, in a fixed order, seeded.

Order (whatever the order on the command line): ``noise`` (added to the clean speech),
then ``gain`` (the microphone level, on speech plus noise), then ``clip`` (the converter's
full scale, last).  Conditions of the same kind apply in the order given.

Seeds: the noise of a dialogue's user channel is drawn from
``numpy.random.default_rng(seed)`` with the seed the caller derives (the run derives it from
the run seed and the dialogue and channel), so a rerun hears the same noise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from duplexeval.conditions._spec import Condition

__all__ = ["APPLY_ORDER", "apply_conditions", "colored_noise", "ordered"]

APPLY_ORDER = ("noise", "gain", "clip")
"""The order conditions compose in."""


def ordered(conditions: Sequence[Condition]) -> list[Condition]:
    """``conditions`` in :data:`APPLY_ORDER` (stable within a kind)."""
    return sorted(conditions, key=lambda c: APPLY_ORDER.index(c.kind))


def colored_noise(n: int, color: str, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of zero-mean noise whose power spectral density falls as 1/f**e
    (white e=0, pink e=1, brown e=2), shaped in the frequency domain; unit RMS (float64)."""
    if n == 0:
        return np.zeros(0)
    exponent = {"white": 0.0, "pink": 1.0, "brown": 2.0}[color]
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n)
    f[0] = f[1] if n > 1 else 1.0
    spectrum *= f ** (-exponent / 2)
    spectrum[0] = 0.0
    x = np.fft.irfft(spectrum, n)
    rms = float(np.sqrt(np.mean(x ** 2)))
    return x / rms if rms > 0 else x


def _noise(x: np.ndarray, c: Condition, rng: np.random.Generator) -> np.ndarray:
    power = float(np.mean(x.astype(np.float64) ** 2)) if len(x) else 0.0
    if power == 0.0:  # a silent channel has no SNR to set: left silent
        return x
    noise = colored_noise(len(x), str(c.get("color")), rng)
    scale = np.sqrt(power / 10 ** (c.number("snr") / 10))
    return (x + scale * noise).astype(np.float32)


def apply_conditions(x: np.ndarray, conditions: Sequence[Condition], seed: int) -> np.ndarray:
    """``x`` (mono float32) under ``conditions`` in :data:`APPLY_ORDER`; a new array."""
    rng = np.random.default_rng(seed)
    y = np.asarray(x, dtype=np.float32).copy()
    for c in ordered(conditions):
        if c.kind == "noise":
            y = _noise(y, c, rng)
        elif c.kind == "gain":
            y = (y * 10 ** (c.number("db") / 20)).astype(np.float32)
        elif c.kind == "clip":
            level = c.number("level")
            y = np.clip(y, -level, level).astype(np.float32)
    return y
