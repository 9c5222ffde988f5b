"""How close the analysis of a run comes to the truth a system logged (``analysis-truth``).

Two comparisons, both over the events of one run:

* **Boundaries** - every onset and offset of a truth segment on the model channel is matched to
  the nearest analysed boundary of the same kind on the same event; the error is the absolute
  difference in seconds (``inf`` when the analysis found no segment at all).
* **Metrics** - the timing variant's per-event values from the analysed and from the truth
  segments: the TOR verdicts (``tor ↑``, ``tor ↓``, ``is_speaking``) must be equal, latencies
  (every other numeric metric that both define) are compared by absolute difference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..analysis.segments import Segment
from .base import EventScore, EventView

__all__ = ["Agreement", "boundary_errors", "compare_scores"]

VERDICTS = ("tor ↑", "tor ↓", "is_speaking")


def _nearest(value: float, candidates: Sequence[float]) -> float:
    return min((abs(value - c) for c in candidates), default=math.inf)


def boundary_errors(truth: Iterable[EventView], analysed: Iterable[EventView],
                    channel: int = 1) -> tuple[list[float], list[float]]:
    """(onset errors, offset errors) in seconds over all events both sides have."""
    found = {e.event_id: e for e in analysed}
    onsets: list[float] = []
    offsets: list[float] = []
    for t in truth:
        a = found.get(t.event_id)
        if a is None:
            continue
        ours: list[Segment] = [s for s in a.segments if s.channel == channel]
        for seg in (s for s in t.segments if s.channel == channel):
            onsets.append(_nearest(seg.start, [s.start for s in ours]))
            offsets.append(_nearest(seg.end, [s.end for s in ours]))
    return onsets, offsets


@dataclass(frozen=True)
class Agreement:
    """Per-event agreement between analysed and truth metric values."""

    verdicts: int
    verdicts_equal: int
    latencies: int
    latency_errors: tuple[float, ...]
    both_defined_mismatch: int
    """Latencies defined on one side only (counted as disagreements)."""

    @property
    def verdict_rate(self) -> float:
        return self.verdicts_equal / self.verdicts if self.verdicts else 1.0

    def latency_rate(self, tolerance: float = 0.05) -> float:
        """Fraction of latencies within ``tolerance`` s (one-sided ones count as misses)."""
        total = len(self.latency_errors) + self.both_defined_mismatch
        ok = sum(e <= tolerance + 1e-9 for e in self.latency_errors)
        return ok / total if total else 1.0


def compare_scores(truth: Iterable[EventScore], analysed: Iterable[EventScore]) -> Agreement:
    """Compare two scorings of the same events (matched by event id and dimension)."""
    found = {(s.event.event_id, d.dimension): d for s in analysed for d in s.dimensions}
    verdicts = equal = latencies = one_sided = 0
    errors: list[float] = []
    for s in truth:
        for d in s.dimensions:
            a = found.get((s.event.event_id, d.dimension))
            if a is None:
                continue
            for metric, value in d.values.items():
                other = a.values.get(metric)
                if metric in VERDICTS:
                    verdicts += 1
                    equal += int(value == other)
                elif metric.startswith(("latency", "stop_latency")):
                    latencies += 1
                    if value is None and other is None:
                        errors.append(0.0)
                    elif value is None or other is None:
                        one_sided += 1
                    else:
                        errors.append(abs(float(value) - float(other)))
    return Agreement(verdicts, equal, latencies, tuple(errors), one_sided)


def describe(errors: Sequence[float], tolerance: float = 0.05) -> str:
    """``n, median, p95, max (ms) and the share within tolerance`` on one line."""
    if not errors:
        return "n=0"
    x = np.asarray(errors, dtype=float)
    finite = x[np.isfinite(x)]
    within = float(np.mean(x <= tolerance + 1e-9))
    if finite.size == 0:
        return f"n={x.size}, none found"
    return (f"n={x.size}, median {np.median(finite) * 1000:.1f} ms, p95 "
            f"{np.percentile(finite, 95) * 1000:.1f} ms, max {finite.max() * 1000:.1f} ms, "
            f"missed {int(x.size - finite.size)}, within {tolerance * 1000:.0f} ms "
            f"{within * 100:.1f} %")
