"""Summary statistics for per-event metric values: the mean with a confidence interval that
stays on the metric's scale.

Conventions: values are per event (one value per event, ``None`` already removed; booleans count
as 0/1 as in the official aggregation); the mean is the plain left-to-right mean of the official
aggregation.  The interval (95 % by default; undefined, ``None``, for ``n < 2``) is made by one
of three methods, recorded with it (``ci_method``):

* ``wilson``: a proportion (TOR, success, interrupt rates: every value a 0/1 verdict, given as a
  ``bool`` or an ``int``; a float that happens to be 0.0 or 1.0, such as a latency of 0 s or a
  divergence of 1, is a measurement, not a verdict): the Wilson score interval, inside [0, 1] by
  construction;
* ``bootstrap``: a bounded score (``bounded=True``: judged scores, QA F1), and any other metric
  with fewer than :data:`FEW_EVENTS` events or whose Student-t interval would leave the range
  of its non-negative values (a latency near 0): the percentile bootstrap (:data:`RESAMPLES`
  resamples from a fixed seed, so the same values give the same interval), inside the range of
  the values;
* ``t``: otherwise (latencies with enough events): ``mean ± t_{1-α/2, n-1} · s / √n`` with the
  sample standard deviation ``s`` (``ddof=1``), symmetric.

Papers in the field mark estimates from fewer than :data:`FEW_EVENTS` events with a dagger (†).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

# the quantile kernels that scipy.stats' norm.ppf and t.ppf call (ndtri(q); stdtrit(df, q)): the
# same floats, without importing scipy.stats (0.4 s of every command that scores)
from scipy.special import ndtri, stdtrit

__all__ = ["FEW_EVENTS", "QUANTILES", "RESAMPLES", "SEED", "Method", "Summary", "is_verdict",
           "percentile_interval", "quantiles", "resample_indices", "summarize", "wilson_interval"]

FEW_EVENTS = 20
"""Below this many events an estimate is flagged (†), as in M3-DuplexBench's tables."""
RESAMPLES = 2000
"""Bootstrap resamples of an interval."""
SEED = 0
"""The seed of every bootstrap's generator (``numpy.random.default_rng``)."""
Method = Literal["t", "wilson", "bootstrap"]
QUANTILES: dict[str, float] = {"p10": 0.10, "p50": 0.50, "p90": 0.90}
"""The run-level quantiles a variant may ask for (TurnBench's latency figures)."""


@dataclass(frozen=True)
class Summary:
    """Mean and confidence interval of one metric over events."""

    n: int
    mean: float | None
    std: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95
    method: Method = "t"
    """How the interval was made (see the module docstring)."""

    @property
    def half_width(self) -> float | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2

    @property
    def few(self) -> bool:
        """True where n is below :data:`FEW_EVENTS` (the † marker)."""
        return self.n < FEW_EVENTS

    def format(self, scale: float = 1.0, digits: int = 2, sep: str = " ± ") -> str:
        """``mean ± half-width`` for a Student-t interval, ``mean [low, high]`` for the others
        (which are not symmetric), times ``scale`` (e.g. 100 for percent); ``†`` when few."""
        if self.mean is None:
            return "-"
        text = f"{self.mean * scale:.{digits}f}"
        if self.ci_low is not None and self.ci_high is not None:
            if self.method == "t":
                text += f"{sep}{self.half_width * scale:.{digits}f}"  # type: ignore[operator]
            else:
                text += f" [{self.ci_low * scale:.{digits}f}, {self.ci_high * scale:.{digits}f}]"
        return text + ("†" if self.few else "")


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``n`` trials (``n >= 1``)."""
    z = float(ndtri(0.5 + confidence / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def resample_indices(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The bootstrap's draws: a ``(resamples, n)`` integer array, each row ``n`` indices into
    ``n`` items drawn with replacement from ``default_rng(seed)`` (the same ``n`` gives the same
    rows).  A statistic of several columns (two judges' scores) indexes all of them with the
    same row, so the items are resampled as pairs."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def percentile_interval(estimates: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap interval: the ``(1 - confidence) / 2`` and ``(1 + confidence) /
    2`` quantiles (numpy's linear interpolation) of the statistic over the resamples."""
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return float(low), float(high)


def _bootstrap(xs: list[float], confidence: float) -> tuple[float, float]:
    data = np.asarray(xs, dtype=np.float64)
    means = data[resample_indices(len(data))].mean(axis=1)
    low, high = percentile_interval(means, confidence)
    return max(low, float(data.min())), min(high, float(data.max()))


def is_verdict(value: float | int | bool) -> bool:
    """Whether ``value`` is a 0/1 verdict: a ``bool``, or an ``int`` equal to 0 or 1 (not a
    float: 0.0 s of latency is a measurement)."""
    return isinstance(value, bool) or (isinstance(value, int) and value in (0, 1))


def summarize(values: Iterable[float | int | bool], confidence: float = 0.95,
              bounded: bool = False, proportion: bool | None = None) -> Summary:
    """Mean, sample standard deviation and the interval of ``values`` (its method chosen as the
    module docstring says; ``bounded``: a score on a fixed scale, e.g. 0-100; ``proportion``:
    whether the values are 0/1 verdicts, ``None`` to tell from their types by
    :func:`is_verdict`)."""
    raw = list(values)
    if proportion is None:
        proportion = all(is_verdict(v) for v in raw)
    xs = [float(v) for v in raw]
    n = len(xs)
    if n == 0:
        return Summary(0, None, None, None, None, confidence)
    mean = sum(xs) / n  # plain left-to-right sum: bit-equal to the official aggregation
    if n < 2:
        return Summary(n, mean, None, None, None, confidence)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    if proportion and all(x in (0.0, 1.0) for x in xs):
        low, high = wilson_interval(round(sum(xs)), n, confidence)
        return Summary(n, mean, std, low, high, confidence, "wilson")
    t = float(stdtrit(n - 1, 0.5 + confidence / 2))
    half = t * std / math.sqrt(n)
    leaves = min(xs) >= 0 and mean - half < 0
    if bounded or n < FEW_EVENTS or leaves:
        low, high = _bootstrap(xs, confidence)
        return Summary(n, mean, std, low, high, confidence, "bootstrap")
    return Summary(n, mean, std, mean - half, mean + half, confidence)


def quantiles(values: Iterable[float | int | bool],
              probabilities: dict[str, float] | None = None) -> dict[str, float] | None:
    """The quantiles of ``values`` (default :data:`QUANTILES`) by linear interpolation between
    order statistics (Hyndman and Fan's type 7, numpy's default: position ``(n - 1) p`` of the
    sorted values); ``None`` without values.  E.g. of 1..10: p10 1.9, p50 5.5, p90 9.1."""
    xs = sorted(float(v) for v in values)
    if not xs:
        return None
    out = {}
    for name, p in (probabilities or QUANTILES).items():
        h = (len(xs) - 1) * p
        low = math.floor(h)
        high = min(low + 1, len(xs) - 1)
        out[name] = xs[low] + (h - low) * (xs[high] - xs[low])
    return out
