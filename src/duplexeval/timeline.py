"""Time intervals and per-channel timelines.

Conventions
-----------
* Times are seconds (``float``) from the start of the dialogue audio.
* A :class:`Span` is the closed interval ``[start, end]`` with ``start <= end``.  Whether an end
  point belongs to an interval only matters for the point tests (:meth:`Span.contains_time`),
  which are inclusive at both ends, as in the official M3-DuplexBench code.
* Every decision that compares two times uses the tolerance :data:`TOL` (1e-6 s) instead of exact
  float equality, so that ``33``, ``33.0`` and ``33.000000001`` are the same instant.  The official
  code compares with ``==``; on its own data (two decimals) both give the same answers.

Interval algebra (pyannote-style)::

    a        |-----------|
    b                 |--------|
    a & b             |--|              intersection (None when disjoint)
    a | b    |-----------------|        hull (spans any gap)
    a.gap(b) = b.start - a.end < 0      signed gap: > 0 silence, < 0 overlap

"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "MAX_FILE_SECONDS",
    "TOL",
    "Span",
    "Timeline",
    "approx_eq",
    "is_time",
    "merge_spans",
    "time_ge",
    "time_gt",
    "time_le",
    "time_lt",
]

TOL: float = 1e-6
"""Tolerance in seconds for every time comparison that decides an event or a window."""

MAX_FILE_SECONDS = 1e6
"""The largest time (s) a file may give, in either sign: 11.6 days, far past any dialogue (the
command line's longest duration option is a day: ``duplexeval.cli._options.MAX_SECONDS``).  A
time beyond it is refused as input, so that sums and spreads of times (a variance squares
them) stay finite."""


def is_time(value: object) -> bool:
    """``value`` is a time a file may give: an ``int`` or ``float`` (not a ``bool``), finite,
    within :data:`MAX_FILE_SECONDS` of zero."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and abs(value) <= MAX_FILE_SECONDS)


def approx_eq(a: float, b: float, tol: float = TOL) -> bool:
    """``a == b`` within ``tol`` seconds."""
    return abs(a - b) <= tol


def time_le(a: float, b: float, tol: float = TOL) -> bool:
    """``a <= b`` where values within ``tol`` count as equal."""
    return a <= b + tol


def time_lt(a: float, b: float, tol: float = TOL) -> bool:
    """``a < b`` by more than ``tol`` (values within ``tol`` count as equal)."""
    return a < b - tol


def time_ge(a: float, b: float, tol: float = TOL) -> bool:
    """``a >= b`` where values within ``tol`` count as equal."""
    return a >= b - tol


def time_gt(a: float, b: float, tol: float = TOL) -> bool:
    """``a > b`` by more than ``tol``."""
    return a > b + tol


@dataclass(frozen=True, order=True, slots=True)
class Span:
    """The closed time interval ``[start, end]`` in seconds, ``start <= end``.

    Immutable and ordered by ``(start, end)``.  Empty spans (``start == end``) are allowed and
    falsy, like pyannote's ``Segment``.

    Examples:
        >>> a, b = Span(0.0, 2.0), Span(1.5, 3.0)
        >>> a & b                       # intersection
        Span(start=1.5, end=2.0)
        >>> a | b                       # hull
        Span(start=0.0, end=3.0)
        >>> a.gap(b), a.overlaps(b)     # a negative gap is an overlap
        (-0.5, True)
        >>> Span(0.0, 1.0) & Span(2.0, 3.0) is None
        True
        >>> bool(Span(1.0, 1.0)), Span(1.0, 2.0).contains_time(2.0000001)   # within TOL
        (False, True)
    """

    start: float
    end: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start) and math.isfinite(self.end)):
            raise ValueError(f"span times must be finite, got [{self.start}, {self.end}]")
        if self.end < self.start:
            raise ValueError(f"span end {self.end} is before its start {self.start}")

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.end - self.start

    def __bool__(self) -> bool:
        return self.end - self.start > TOL

    def __and__(self, other: Span) -> Span | None:
        """Intersection, or ``None`` when the spans do not touch: when their :meth:`gap` is more
        than :data:`TOL` (the same float expression, so the two never disagree at the edge)."""
        start = max(self.start, other.start)
        end = min(self.end, other.end)
        if start - end > TOL:
            return None
        return Span(start, max(start, end))

    def __or__(self, other: Span) -> Span:
        """Hull: the smallest span covering both (spans any gap between them)."""
        return Span(min(self.start, other.start), max(self.end, other.end))

    def gap(self, other: Span) -> float:
        """Signed gap between the two spans in seconds.

        Positive: the silence between them.  Negative: minus the length of their overlap
        (for partial overlaps; for nested spans, minus the inner span's length).
        """
        return max(self.start, other.start) - min(self.end, other.end)

    def overlaps(self, other: Span) -> bool:
        """True when the spans share more than :data:`TOL` seconds."""
        return min(self.end, other.end) - max(self.start, other.start) > TOL

    def contains_time(self, t: float) -> bool:
        """``start <= t <= end`` (inclusive at both ends, within :data:`TOL`)."""
        return time_le(self.start, t) and time_le(t, self.end)

    def contains(self, other: Span) -> bool:
        """True when ``other`` lies inside this span (within :data:`TOL`)."""
        return time_le(self.start, other.start) and time_le(other.end, self.end)

    def shift(self, dt: float) -> Span:
        """The same span moved by ``dt`` seconds."""
        return Span(self.start + dt, self.end + dt)


def merge_spans(spans: Iterable[Span], max_gap: float = 0.0) -> list[Span]:
    """Merge spans whose gap is at most ``max_gap`` seconds (within :data:`TOL`).

    The result is sorted and pairwise separated by gaps larger than ``max_gap``.  Overlapping
    spans always merge.

    ::

        in     |---|  |--|       |----|      max_gap = 0.5, gaps 0.3 and 0.9
        out    |--------|       |----|

    Examples:
        >>> merge_spans([Span(2.2, 3.0), Span(0.0, 1.0), Span(1.3, 1.5)], max_gap=0.5)
        [Span(start=0.0, end=1.5), Span(start=2.2, end=3.0)]
    """
    ordered = sorted(spans)
    merged: list[Span] = []
    for span in ordered:
        if merged and time_le(span.start - merged[-1].end, max_gap):
            last = merged[-1]
            merged[-1] = Span(last.start, max(last.end, span.end))
        else:
            merged.append(span)
    return merged


@dataclass(frozen=True)
class Timeline:
    """A sorted, non-overlapping sequence of spans on one channel (e.g. speech activity).

    Build it with :meth:`from_spans`, which merges overlapping or touching spans.
    """

    spans: tuple[Span, ...] = ()

    @classmethod
    def from_spans(cls, spans: Iterable[Span], max_gap: float = 0.0) -> Timeline:
        """Normalise ``spans``: sort and merge those separated by at most ``max_gap`` s."""
        return cls(tuple(merge_spans(spans, max_gap)))

    def __iter__(self) -> Iterator[Span]:
        return iter(self.spans)

    def __len__(self) -> int:
        return len(self.spans)

    def __getitem__(self, index: int) -> Span:
        return self.spans[index]

    @property
    def duration(self) -> float:
        """Total covered time in seconds."""
        return sum(s.duration for s in self.spans)

    def extent(self) -> Span | None:
        """The hull of all spans, or ``None`` when empty."""
        if not self.spans:
            return None
        return Span(self.spans[0].start, self.spans[-1].end)

    def support(self, max_gap: float) -> Timeline:
        """Merge spans separated by at most ``max_gap`` seconds."""
        return Timeline.from_spans(self.spans, max_gap)

    def gaps(self, within: Span | None = None) -> Timeline:
        """The silences between spans (and at the edges of ``within`` when given)."""
        spans = list(self.spans)
        out: list[Span] = []
        cursor = within.start if within is not None else (spans[0].start if spans else 0.0)
        stop = within.end if within is not None else (spans[-1].end if spans else 0.0)
        for span in spans:
            if span.start > cursor + TOL:
                out.append(Span(cursor, min(span.start, stop)))
            cursor = max(cursor, span.end)
            if cursor >= stop:
                break
        if stop > cursor + TOL:
            out.append(Span(cursor, stop))
        return Timeline(tuple(s for s in out if s.end > s.start))

    def crop(self, window: Span) -> Timeline:
        """The parts of the spans inside ``window``."""
        out = []
        for span in self.spans:
            inter = span & window
            if inter is not None and inter:
                out.append(inter)
        return Timeline(tuple(out))

    def intersect(self, other: Timeline) -> Timeline:
        """Time covered by both timelines (e.g. overlapping speech of two channels)."""
        out: list[Span] = []
        i = j = 0
        a, b = self.spans, other.spans
        while i < len(a) and j < len(b):
            inter = a[i] & b[j]
            if inter is not None and inter:
                out.append(inter)
            if a[i].end < b[j].end:
                i += 1
            else:
                j += 1
        return Timeline(tuple(out))

    def contains_time(self, t: float) -> bool:
        """True when some span contains ``t`` (inclusive, within :data:`TOL`)."""
        return any(span.contains_time(t) for span in self.spans)

    def shift(self, dt: float) -> Timeline:
        """Every span moved by ``dt`` seconds."""
        return Timeline(tuple(s.shift(dt) for s in self.spans))

