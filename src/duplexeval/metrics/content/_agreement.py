"""Agreement between two judges who scored the same items on one integer scale (pure: numbers
in, numbers out).

Notation: ``N`` items; judge A's scores ``a_u`` and judge B's ``b_u`` (``u = 1..N``) on the
scale's ``k`` categories ``v_1 < ... < v_k`` (the prompt's integer points, ``score_min`` to
``score_max``); ``C`` the ``k × k`` table of counts ``C_ij = #{u : a_u = v_i, b_u = v_j}``.

* **exact agreement**: the share of items with ``a_u = b_u``, ``trace(C) / N``.
* **Cohen's kappa**: ``κ = 1 - Σ w_ij O_ij / Σ w_ij E_ij`` with ``O = C / N``, ``E_ij = p_i q_j``
  the product of the judges' own marginals (``p`` the row sums of ``O``, ``q`` the column
  sums) and the disagreement weights ``w``: *unweighted* (``w_ij = 1`` for ``i ≠ j``, Cohen
  1960) on a binary scale (``k = 2``), *quadratic* (``w_ij = (i - j)² / (k - 1)²``, Cohen 1968)
  on an ordinal one, where a 0-vs-2 disagreement counts four times a 0-vs-1.  Undefined
  (``None``) when either judge gives one score only: then ``E`` is ``O`` itself, so ``κ`` is 0
  (or 0/0) whatever the other judge did, which says nothing about agreement.
* **Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"):
  from the coincidence matrix ``o``, where every unit with ``m_u ≥ 2`` values adds
  ``1 / (m_u - 1)`` to ``o_ck`` for each ordered pair of its values from different coders (two
  judges: ``o = C + Cᵀ``); ``n_c = Σ_k o_ck``, ``n = Σ_c n_c``::

      α = 1 - (n - 1) · Σ o_ck δ²_ck / Σ n_c n_k δ²_ck

  with the difference ``δ²``: *nominal* ``[c ≠ k]``; *interval* ``(v_c - v_k)²``; *ordinal*
  ``(Σ_{g=c..k} n_g - (n_c + n_k) / 2)²``.  The expected disagreement pools both judges'
  scores, so unlike ``κ`` a judge that gives one score only still has an ``α``; it is undefined
  only when every score is the same (no variation to agree on).  A binary scale gets the
  nominal form (the three coincide on two values); an ordinal one the interval form (the
  toolkit averages judged scores as numbers) and the ordinal form (the points as ranks).
* **mean difference**: ``mean(b_u - a_u)`` in the scale's units: B minus A, positive where
  judge B scores higher.

Intervals: the percentile bootstrap over items, the pairs kept together:
:data:`~duplexeval.metrics._stats.RESAMPLES` draws of
:func:`~duplexeval.metrics._stats.resample_indices` (fixed seed), the same draws for every
statistic, and :func:`~duplexeval.metrics._stats.percentile_interval`.  A draw in which a
statistic is undefined (a judge constant within that draw) is left out and counted
(:attr:`Estimate.resamples`); with fewer than half of the draws defined, or ``N < 2``, there
is no interval, and :attr:`Estimate.reason` says why.

Example, worked by hand.  Binary scores of five items::

    A: 1 1 0 0 1      C = [[2, 0],     exact = 4/5;  p = (2/5, 3/5), q = (3/5, 2/5)
    B: 1 0 0 0 1           [1, 2]]     κ = 1 - (1/5) / (2/5·2/5 + 3/5·3/5) = 8/13
                                       α: n = 10, n_0 = n_1 = 5, Σ o δ² = 2:
                                          1 - 9 · 2 / (2 · 5 · 5) = 0.64

>>> exact_agreement([1, 1, 0, 0, 1], [1, 0, 0, 0, 1])
0.8
>>> round(cohen_kappa([1, 1, 0, 0, 1], [1, 0, 0, 0, 1], 0, 1), 6), round(8 / 13, 6)
(0.615385, 0.615385)
>>> round(krippendorff_alpha([[1, 1], [1, 0], [0, 0], [0, 0], [1, 1]], "nominal"), 6)
0.64
>>> mean_difference([1, 1, 0, 0, 1], [1, 0, 0, 0, 1])
-0.2

On 0-2 (quadratic weights: 1/4 for one point apart, 1 for two): A = 0 1 2 2, B = 0 2 2 1 has
two one-point disagreements, ``Σ w O = 2 · 1/4 / 4 = 1/8``; both marginals are (1, 1, 2) / 4, so
``Σ w E = (2 · 1/4 + 2 · 2 + 2 · 2/4) / 16 = 11/32`` and ``κ = 1 - (1/8) / (11/32) = 7/11``;
interval ``α``: ``n_c = (2, 2, 4)``, ``Σ o δ² = 4``, ``Σ n_c n_k δ² = 88``, ``1 - 7 · 4 / 88 =
15/22``.

>>> round(cohen_kappa([0, 1, 2, 2], [0, 2, 2, 1], 0, 2), 6), round(7 / 11, 6)
(0.636364, 0.636364)
>>> round(krippendorff_alpha([[0, 0], [1, 2], [2, 2], [2, 1]], "interval"), 6), round(15 / 22, 6)
(0.681818, 0.681818)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np

from duplexeval.metrics._stats import RESAMPLES, percentile_interval, resample_indices

__all__ = ["AlphaMetric", "Estimate", "MetricName", "agreement", "cohen_kappa", "exact_agreement",
           "krippendorff_alpha", "mean_difference"]

AlphaMetric = Literal["nominal", "ordinal", "interval"]
MetricName = Literal["exact_agreement", "cohen_kappa", "krippendorff_alpha", "mean_difference"]
Array = np.ndarray


@dataclass(frozen=True)
class Estimate:
    """One agreement statistic over ``n`` paired items, with its bootstrap interval.

    ``value`` is ``None`` where the statistic is undefined, and ``ci_low``/``ci_high`` where
    there is no interval; ``reason`` then says why.  ``resamples``: the bootstrap draws in which
    the statistic was defined (of :data:`~duplexeval.metrics._stats.RESAMPLES`)."""

    metric: MetricName
    form: str | None
    """``unweighted``/``quadratic`` (kappa), ``nominal``/``interval``/``ordinal`` (alpha)."""
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    reason: str | None = None
    resamples: int = 0


# -- the statistics on stacks of count tables (..., k, k); NaN where undefined ----------------

def _exact(c: Array) -> Array:
    return np.asarray(np.trace(c, axis1=-2, axis2=-1) / c.sum(axis=(-2, -1)))


def _kappa_weights(k: int, quadratic: bool) -> Array:
    i = np.arange(k, dtype=np.float64)
    gap = np.subtract.outer(i, i)
    return gap**2 / (k - 1) ** 2 if quadratic else (gap != 0).astype(np.float64)


def _constant(c: Array) -> Array:
    """Whether judge A (rows) or judge B (columns) uses one category only."""
    rows, cols = (c.sum(axis=-1) > 0).sum(axis=-1), (c.sum(axis=-2) > 0).sum(axis=-1)
    return np.asarray((rows == 1) | (cols == 1))


def _kappa(c: Array, quadratic: bool) -> Array:
    w = _kappa_weights(c.shape[-1], quadratic)
    o = c / c.sum(axis=(-2, -1), keepdims=True)
    e = o.sum(axis=-1)[..., :, None] * o.sum(axis=-2)[..., None, :]
    observed, expected = (w * o).sum(axis=(-2, -1)), (w * e).sum(axis=(-2, -1))
    bad = _constant(c) | (expected <= 0)
    return np.asarray(np.where(bad, np.nan, 1 - observed / np.where(bad, 1.0, expected)))


def _delta2(nc: Array, values: Array, metric: AlphaMetric) -> Array:
    k = values.shape[0]
    if metric == "nominal":
        return 1.0 - np.eye(k)
    if metric == "interval":
        return np.asarray(np.subtract.outer(values, values) ** 2)
    idx = np.arange(k)
    lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
    cum = np.cumsum(nc, axis=-1)
    between = cum[..., hi] - cum[..., lo] + nc[..., lo]  # Σ_{g=lo..hi} n_g
    result: Array = (between - (nc[..., :, None] + nc[..., None, :]) / 2) ** 2
    return result


def _alpha(o: Array, values: Array, metric: AlphaMetric) -> Array:
    """Alpha of coincidence matrices ``o`` (..., k, k) over the category ``values``."""
    nc = o.sum(axis=-1)
    n = nc.sum(axis=-1)
    d2 = _delta2(nc, values, metric)
    observed = (o * d2).sum(axis=(-2, -1))
    expected = (nc[..., :, None] * nc[..., None, :] * d2).sum(axis=(-2, -1))
    bad = expected <= 1e-12 * np.maximum(n, 1) ** 2
    return np.asarray(np.where(bad, np.nan,
                               1 - (n - 1) * observed / np.where(bad, 1.0, expected)))


def _pair_alpha(c: Array, values: Array, metric: AlphaMetric) -> Array:
    return _alpha(c + np.swapaxes(c, -1, -2), values, metric)


def _mean_diff(c: Array, values: Array) -> Array:
    diff = np.subtract.outer(values, values).T  # [i, j] = v_j - v_i: B's minus A's
    return np.asarray((c * diff).sum(axis=(-2, -1)) / c.sum(axis=(-2, -1)))


# -- the plain functions -------------------------------------------------------------------

def _table(a: Sequence[int], b: Sequence[int], score_min: int, score_max: int) -> Array:
    if len(a) != len(b):
        raise ValueError(f"the judges scored {len(a)} and {len(b)} items; pairs are needed")
    k = score_max - score_min + 1
    outside = sorted({v for v in (*a, *b) if not score_min <= v <= score_max})
    if k < 2 or outside:
        raise ValueError(f"scores {outside} outside the scale {score_min}-{score_max}"
                         if outside else f"a scale needs two points, got {score_min}-{score_max}")
    c = np.zeros((k, k), dtype=np.float64)
    np.add.at(c, (np.asarray(a, dtype=np.int64) - score_min,
                  np.asarray(b, dtype=np.int64) - score_min), 1.0)
    return c


def _scalar(x: Array) -> float | None:
    value = float(x)
    return None if np.isnan(value) else value


def exact_agreement(a: Sequence[int], b: Sequence[int]) -> float:
    """The share of items the two judges scored alike (``a``, ``b``: non-empty, paired)."""
    if not a or len(a) != len(b):
        raise ValueError("exact agreement needs the same, non-zero number of scores")
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def mean_difference(a: Sequence[int], b: Sequence[int]) -> float:
    """``mean(b - a)`` over paired, non-empty scores."""
    if not a or len(a) != len(b):
        raise ValueError("a mean difference needs the same, non-zero number of scores")
    return sum(y - x for x, y in zip(a, b, strict=True)) / len(a)


def cohen_kappa(a: Sequence[int], b: Sequence[int], score_min: int, score_max: int,
                weights: Literal["auto", "unweighted", "quadratic"] = "auto") -> float | None:
    """Cohen's kappa of paired scores on ``score_min..score_max`` (``auto``: unweighted on two
    points, quadratic on more); ``None`` when a judge gives one score only."""
    quadratic = score_max - score_min > 1 if weights == "auto" else weights == "quadratic"
    return _scalar(_kappa(_table(a, b, score_min, score_max), quadratic))


def krippendorff_alpha(units: Sequence[Sequence[float | None]],
                       metric: AlphaMetric) -> float | None:
    """Krippendorff's alpha of reliability data: one row per unit, one value per coder
    (``None``: that coder gave none).  Units with fewer than two values are not pairable and
    count for nothing; ``None`` when the pairable values do not vary."""
    values = np.asarray(sorted({v for row in units for v in row if v is not None}),
                        dtype=np.float64)
    where = {float(v): i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)), dtype=np.float64)
    for row in units:
        given = [where[float(v)] for v in row if v is not None]
        if len(given) < 2:
            continue
        for i, c in enumerate(given):
            for j, k in enumerate(given):
                if i != j:
                    o[c, k] += 1.0 / (len(given) - 1)
    return _scalar(_alpha(o, values, metric)) if len(values) else None


# -- every statistic with its interval -------------------------------------------------------

Statistic = Callable[[Array], Array]


def _statistics(k: int, values: Array) -> list[tuple[MetricName, str | None, Statistic]]:
    binary = k == 2
    out: list[tuple[MetricName, str | None, Statistic]] = [
        ("exact_agreement", None, _exact),
        ("cohen_kappa", "unweighted" if binary else "quadratic",
         lambda c: _kappa(c, quadratic=not binary))]
    forms: tuple[AlphaMetric, ...] = ("nominal",) if binary else ("interval", "ordinal")
    out += [("krippendorff_alpha", form, partial(_pair_alpha, values=values, metric=form))
            for form in forms]
    return [*out, ("mean_difference", None, lambda c: _mean_diff(c, values))]


def _resampled_tables(a: Array, b: Array, k: int) -> Array:
    """The count table of every bootstrap draw, ``(RESAMPLES, k, k)``."""
    draws = resample_indices(len(a))
    codes = (a * k + b)[draws] + (np.arange(draws.shape[0]) * k * k)[:, None]
    counts = np.bincount(codes.ravel(), minlength=draws.shape[0] * k * k)
    return counts.reshape(draws.shape[0], k, k).astype(np.float64)


def _undefined_reason(metric: MetricName, c: Array, score_min: int) -> str:
    if metric == "cohen_kappa":
        rows, cols = c.sum(axis=1), c.sum(axis=0)
        which = [f"judge {name} gives one score only ({int(np.argmax(m)) + score_min})"
                 for name, m in (("A", rows), ("B", cols)) if (m > 0).sum() == 1]
        return "; ".join(which) + ": chance agreement equals the observed, kappa is undefined"
    only = int(np.argmax(c.sum(axis=1) + c.sum(axis=0))) + score_min
    return f"every score is {only}: no variation to agree on, alpha is undefined"


def _estimate(metric: MetricName, form: str | None, f: Statistic, c: Array, boot: Array | None,
              n: int, score_min: int, confidence: float) -> Estimate:
    value = _scalar(f(c))
    if value is None:
        return Estimate(metric, form, None, None, None, n,
                        _undefined_reason(metric, c, score_min))
    if boot is None:
        return Estimate(metric, form, value, None, None, n,
                        "fewer than 2 items: no interval")
    stats = f(boot)
    defined = stats[~np.isnan(stats)]
    if 2 * len(defined) < len(stats):
        return Estimate(metric, form, value, None, None, n,
                        f"defined in only {len(defined)} of {len(stats)} resamples "
                        "(a judge constant in the rest): no interval", len(defined))
    low, high = percentile_interval(defined, confidence)
    return Estimate(metric, form, value, low, high, n, None, len(defined))


def agreement(a: Sequence[int], b: Sequence[int], score_min: int, score_max: int,
              confidence: float = 0.95) -> list[Estimate]:
    """Every statistic of the module docstring for paired scores ``a`` (judge A) and ``b``
    (judge B) on ``score_min..score_max``, in the order exact agreement, kappa, alpha (one or
    two forms), mean difference; ``ValueError`` for unpaired scores or one off the scale."""
    c = _table(a, b, score_min, score_max)
    k, n = c.shape[0], len(a)
    values = np.arange(score_min, score_max + 1, dtype=np.float64)
    listed = _statistics(k, values)
    if n == 0:
        return [Estimate(m, form, None, None, None, 0,
                         "no item scored by both judges") for m, form, _ in listed]
    boot = _resampled_tables(np.asarray(a) - score_min, np.asarray(b) - score_min, k) \
        if n >= 2 else None
    assert boot is None or boot.shape[0] == RESAMPLES
    return [_estimate(m, form, f, c, boot, n, score_min, confidence) for m, form, f in listed]
