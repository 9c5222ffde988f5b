"""Babble noise: several talkers of the packaged clip bank speaking at once.

Each talker says utterance clips of the bank (every language, drawn with the caller's
generator) one after another, with a pause of :data:`GAP_S` (uniform) between two, starting
at a random point of its first clip so that the talkers do not start together.  The talkers
are summed at equal power (each track scaled to unit RMS before the sum) and the sum is
returned at unit RMS; :func:`duplexeval.conditions._apply.apply_conditions` scales it to the
requested SNR.  Units: lengths in samples, rates in Hz.
"""

from __future__ import annotations

import numpy as np

from duplexeval.speech._clipbank import ClipBank

__all__ = ["GAP_S", "babble", "babble_tracks"]

GAP_S = (0.05, 0.3)
"""The pause between two clips of one talker (s), drawn uniformly."""


def _talker(n: int, rate: int, clips: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    out = np.zeros(n, dtype=np.float64)
    first = clips[int(rng.integers(len(clips)))]
    at = -int(rng.integers(len(first)))  # the first clip starts part-way through
    clip = first
    while at < n:
        a, b = max(at, 0), min(at + len(clip), n)
        out[a:b] = clip[a - at:b - at]
        at += len(clip) + int(rng.uniform(*GAP_S) * rate)
        clip = clips[int(rng.integers(len(clips)))]
    rms = float(np.sqrt(np.mean(out ** 2)))
    return out / rms if rms > 0 else out


def babble_tracks(n: int, rate: int, talkers: int, rng: np.random.Generator) -> np.ndarray:
    """The talkers' tracks, shape ``(talkers, n)``, each at unit RMS (float64)."""
    bank = ClipBank.load()
    clips = [c.resampled(rate).astype(np.float64) for language in bank.languages()
             for c in bank.clips(language, "utterance")]
    return np.stack([_talker(n, rate, clips, rng) for _ in range(talkers)])


def babble(n: int, rate: int, talkers: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of ``talkers`` talkers at once (see the module docstring), unit RMS."""
    if n == 0:
        return np.zeros(0)
    x = babble_tracks(n, rate, talkers, rng).sum(axis=0)
    rms = float(np.sqrt(np.mean(x ** 2)))
    return x / rms if rms > 0 else x
