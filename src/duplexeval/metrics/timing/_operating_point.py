"""A system's turn-taking operating point: ``turnbench`` figures per setting of a threshold the
system exposes (the ``cascade``'s ``eot_silence``, a model's end-of-turn probability), and the
setting to report under a false-positive ceiling, as TurnBench reports latency.

A *point* summarises one scoring of the ``turnbench`` variant
(:mod:`duplexeval.metrics.timing._turnbench`): the match rate (the mean of ``match ↑`` over
TURN_SHIFT events), the false-positive rate (the mean of ``false_positive ↓`` over pause events,
one per pause), and the p10/p50/p90 of the matched latencies (seconds, from the user's turn end
in the input channel to the first system onset in the window).  The operating point under a
ceiling ``c`` is, among the points with a false-positive rate of at most ``c`` (within 1e-6),
the one with the highest match rate; ties go to the lower p50 latency, then to the lower
threshold.  None qualifies: ``None`` (the ceiling is out of the system's reach)::

    threshold   0.2   0.4   0.6   0.9        ceiling 0.25
    FP rate     0.50  0.30  0.20  0.10       qualifying: 0.6 and 0.9
    match       1.00  1.00  0.90  0.90       operating point: 0.6 (same match, lower p50)
    p50 (s)     0.5   0.7   0.9   1.2
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from duplexeval.metrics._stats import quantiles
from duplexeval.results._model import Value
from duplexeval.timeline import TOL

__all__ = ["Scored", "TurnTakingPoint", "operating_point", "turn_taking_point"]


class Scored(Protocol):
    """One (event, dimension) verdict: a :class:`~duplexeval.metrics._base.DimensionScore` or a
    results file's :class:`~duplexeval.results._model.EventResult`."""

    @property
    def dimension(self) -> str: ...

    @property
    def values(self) -> Mapping[str, Value]: ...


@dataclass(frozen=True)
class TurnTakingPoint:
    """The ``turnbench`` figures of one threshold setting (rates ``None`` without events)."""

    threshold: float
    match_rate: float | None
    false_positive_rate: float | None
    latency: dict[str, float] | None
    """p10, p50, p90 of the matched latencies (seconds); ``None`` without a match."""
    turn_ends: int
    pauses: int


def _values(scores: Iterable[Scored], dimension: str, metric: str) -> list[float]:
    return [float(v) for d in scores if d.dimension == dimension
            for v in (d.values.get(metric),) if isinstance(v, (int, float))]


def turn_taking_point(threshold: float, scores: Sequence[Scored]) -> TurnTakingPoint:
    """The point of ``turnbench`` verdicts (per event and dimension: the dimensions of
    :class:`~duplexeval.metrics._base.EventScore` s or a results file's ``events``) made with the
    system at ``threshold``."""
    match = _values(scores, "turn_end", "match ↑")
    fp = _values(scores, "pause", "false_positive ↓")
    return TurnTakingPoint(
        threshold=threshold, match_rate=sum(match) / len(match) if match else None,
        false_positive_rate=sum(fp) / len(fp) if fp else None,
        latency=quantiles(_values(scores, "turn_end", "latency ↓")),
        turn_ends=len(match), pauses=len(fp))


def operating_point(points: Iterable[TurnTakingPoint], ceiling: float,
                    ) -> TurnTakingPoint | None:
    """The point to report under a false-positive ``ceiling`` (see the module docstring)."""
    qualifying = [p for p in points if p.match_rate is not None
                  and p.false_positive_rate is not None
                  and p.false_positive_rate <= ceiling + TOL]
    if not qualifying:
        return None
    return min(qualifying, key=lambda p: (-(p.match_rate or 0.0),
                                          p.latency["p50"] if p.latency else float("inf"),
                                          p.threshold))
