"""Paired comparison of two runs on one metric: the mean difference over shared events, its
bootstrap confidence interval, a permutation p-value, and Holm's correction across metrics.

Conventions:

* ``d_i = b_i - a_i`` over the events both runs scored (B minus A; positive: B is higher).
* **CI**: percentile bootstrap of the mean of ``d`` with :data:`BOOTSTRAP_RESAMPLES` resamples
  of the events with replacement (numpy ``default_rng(seed)``, seed 0 by default: the same
  inputs give the same interval), 2.5th and 97.5th percentiles.
* **p-value**: two-sided paired sign-flip permutation test of "mean difference 0" (under the
  null each ``d_i`` is as likely to have either sign): the share of sign assignments whose
  ``|mean|`` is at least the observed one.  Exact (all ``2^n`` assignments) for
  ``n <=`` :data:`EXACT_MAX_N`; otherwise :data:`PERMUTATIONS` random assignments with
  ``p = (1 + hits) / (1 + PERMUTATIONS)`` (never 0).  Identical runs give ``p = 1``.
* **Holm**: the step-down family-wise correction over the metrics compared together:
  ``p_(i) -> max_{j<=i} min(1, (m - j + 1) p_(j))`` for ascending ``p``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["BOOTSTRAP_RESAMPLES", "EXACT_MAX_N", "PERMUTATIONS", "PairedDifference", "holm",
           "paired_difference"]

BOOTSTRAP_RESAMPLES = 10_000
PERMUTATIONS = 10_000
EXACT_MAX_N = 12
"""Up to this many events the permutation test enumerates all 2^n sign assignments."""
_CHUNK = 1_000


@dataclass(frozen=True)
class PairedDifference:
    """The comparison of one metric over ``n`` shared events."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float


def _bootstrap(d: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    means = []
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        means.append(d[rng.integers(0, len(d), size=(size, len(d)))].mean(axis=1))
    low, high = np.percentile(np.concatenate(means), [2.5, 97.5])
    return float(low), float(high)


def _sign_flip_p(d: np.ndarray, permutations: int, rng: np.random.Generator) -> float:
    n = len(d)
    observed = abs(float(d.mean()))
    tolerance = 1e-12 * max(1.0, observed)
    if n <= EXACT_MAX_N:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        means = np.abs(signs @ d) / n
        return float(np.mean(means >= observed - tolerance))
    hits = 0
    for start in range(0, permutations, _CHUNK):
        size = min(_CHUNK, permutations - start)
        signs = rng.choice((1.0, -1.0), size=(size, n))
        hits += int(np.sum(np.abs(signs @ d) / n >= observed - tolerance))
    return (1 + hits) / (1 + permutations)


def paired_difference(a: Sequence[float], b: Sequence[float],
                      resamples: int = BOOTSTRAP_RESAMPLES, permutations: int = PERMUTATIONS,
                      seed: int = 0) -> PairedDifference:
    """Compare paired values ``a[i]``, ``b[i]`` (see the module docstring)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) == 0:
        raise ValueError("paired_difference needs two equally long, non-empty sequences")
    d = y - x
    rng = np.random.default_rng(seed)
    low, high = _bootstrap(d, resamples, rng)
    p = _sign_flip_p(d, permutations, rng)
    return PairedDifference(len(d), float(x.mean()), float(y.mean()), float(d.mean()), low,
                            high, p)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
