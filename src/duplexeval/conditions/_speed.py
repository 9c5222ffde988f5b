"""Speed perturbation: speech played ``factor`` times as fast, with soxr (pitch and tempo
together, as a tape or a resampled recording would).

The user's speech segments keep their onsets on the dialogue's timeline: each segment
``[start, end)`` (samples) is resampled to ``round((end - start) / factor)`` samples and
written from ``start`` on, so the turns still start where the plan expects them, and a faster
talker ends sooner (a longer pause after), a slower one later.  Where a slowed segment runs
into the next, the two are summed (the talker overlaps itself); nothing runs past the
channel's end.  Without segments the whole channel is one segment.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import soxr

__all__ = ["speed_perturb"]


def speed_perturb(x: np.ndarray, factor: float,
                  segments: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
    """``x`` (mono) with each segment played ``factor`` times as fast (module docstring);
    float32, the length of ``x``."""
    src = np.asarray(x, dtype=np.float64)
    spans = [(0, len(src))] if segments is None else [
        (max(0, a), min(len(src), b)) for a, b in segments if min(len(src), b) > max(0, a)]
    out = src.copy()  # the pauses between segments are kept as they are
    for a, b in spans:
        out[a:b] = 0.0
    for a, b in spans:
        # resampling from rate r*factor to r turns b - a samples into (b - a) / factor
        y = soxr.resample(src[a:b], 1000.0 * factor, 1000.0, quality="HQ")
        stop = min(len(out), a + len(y))
        out[a:stop] += y[:stop - a]
    return out.astype(np.float32)
