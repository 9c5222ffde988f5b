"""Summary statistics for per-event metric values: mean with a Student-t confidence interval.

Conventions: values are per event (one value per event, ``None`` already removed; booleans count
as 0/1 as in the official aggregation).  The interval is ``mean ± t_{1-α/2, n-1} · s / √n`` with
the sample standard deviation ``s`` (``ddof=1``); undefined (``None``) for ``n < 2``.  Papers in
the field mark estimates from fewer than :data:`FEW_EVENTS` events with a dagger (†).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from scipy import stats as _scipy_stats

__all__ = ["FEW_EVENTS", "Summary", "summarize"]

FEW_EVENTS = 20
"""Below this many events an estimate is flagged (†), as in M3-DuplexBench's tables."""


@dataclass(frozen=True)
class Summary:
    """Mean and confidence interval of one metric over events."""

    n: int
    mean: float | None
    std: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95

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
        """``mean ± half-width`` (times ``scale``, e.g. 100 for percent), ``†`` when few."""
        if self.mean is None:
            return "-"
        text = f"{self.mean * scale:.{digits}f}"
        if self.half_width is not None:
            text += f"{sep}{self.half_width * scale:.{digits}f}"
        return text + ("†" if self.few else "")


def summarize(values: Iterable[float | int | bool], confidence: float = 0.95) -> Summary:
    """Mean, sample standard deviation and Student-t interval of ``values``."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return Summary(0, None, None, None, None, confidence)
    mean = sum(xs) / n  # plain left-to-right sum: bit-equal to the official aggregation
    if n < 2:
        return Summary(n, mean, None, None, None, confidence)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    t = float(_scipy_stats.t.ppf(0.5 + confidence / 2, n - 1))
    half = t * std / math.sqrt(n)
    return Summary(n, mean, std, mean - half, mean + half, confidence)
