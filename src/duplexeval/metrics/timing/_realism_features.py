"""The timing features of distributional realism, measured on one two-channel timeline.

A timeline is one sample's window: times are seconds of its wav (``input_start`` is 0), ``U`` the
user channel as fed (channel 0 of the sample wav, speech segments from the analysis) and ``X``
the speaker being measured: the system channel (channel 1 of the sample wav) or, for the
reference, the dialogue's reference system channel over the same window analysed the same way
(:mod:`duplexeval.metrics._realism_reference`).  A segment ``[start, end]`` is closed (both ends
inclusive); "before" and "after" compare times with the tolerance
:data:`~duplexeval.timeline.TOL` (1e-6 s).  Every feature is measured on ``X`` against ``U``:

**Floor-transfer offset** (``fto``, seconds; negative for an overlap): for each ``X`` segment
``x``, let ``u`` be the segment with the latest onset before ``x.start`` over both channels; when
``u`` is a ``U`` segment and it ends before ``x`` does (``u.end < x.end``: the user yields the
floor, so this is a transfer and not a backchannel inside the user's speech), the offset is
``x.start - u.end``::

    U   uuuuuuuu|                uuuuuuuuuuuuuuuuuu|
    X              |xxxxxx              |xxxxxxxxxxxxxxx
                |<>|  +0.6 (gap)        |<-------->|  -2.0 (overlap: X starts 2 s before U ends)

**Pause** (``pause``, seconds): the silence between two consecutive ``X`` segments that no ``U``
segment intersects (``U`` speech inside the silence makes it two turns, not a pause)::

    U                               uuuu
    X   xxxx|   |xxxxx|        |xxxxxxxx
            |<->| pause   |<-->| not a pause (U speaks inside it)

**Overlap** (``overlap``, seconds): the length of each non-empty intersection of an ``X``
segment with a ``U`` segment (touching ends, a zero-length intersection, is not an overlap)::

    U   uuuuuuuuuu|
    X         |xxxxxxxx         overlap = 4 characters' worth of time, |xxxx|

**Backchannel rate** (``backchannel_rate``, per minute of user speech; one value per timeline):
the ``X`` segments no longer than :data:`BACKCHANNEL_MAX` (1.0 s) that lie inside one ``U``
segment (``u.start < x.start`` and ``x.end < u.end``: the user neither yields nor stops), divided
by the ``U`` speech in minutes (the union of its segments); no value for a timeline without user
speech::

    U   uuuuuuuuuuuuuuuuuuuuuuuuuu|       30 s of user speech in all
    X         |xx|       |xx|             two backchannels: 4.0 per minute

**Turn length** (``turn_length``, seconds): ``X`` segments joined across its pauses (as above)
form turns; a turn's length is its last segment's end minus its first segment's start::

    U                      uuuu
    X   xxxx   xxxx              xxxx
        |<--------->|            |<>|   two turns: 4.0 s (with one pause) and 1.0 s

A timeline cut by the window's end keeps its cut segments: the system and the reference are cut
at the same place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from duplexeval.timeline import TOL, Span, merge_spans

__all__ = ["BACKCHANNEL_MAX", "FEATURES", "TimelineFeatures", "backchannel_rate",
           "floor_transfer_offsets", "measure", "overlaps", "pauses", "turn_lengths"]

BACKCHANNEL_MAX = 1.0
"""Seconds: the longest ``X`` segment that counts as a backchannel."""

FEATURES: tuple[str, ...] = ("fto", "pause", "overlap", "backchannel_rate", "turn_length")
"""The features, in the order results and plots list them."""


def _sorted(spans: Sequence[Span]) -> list[Span]:
    return sorted(spans, key=lambda s: (s.start, s.end))


def floor_transfer_offsets(user: Sequence[Span], speaker: Sequence[Span]) -> list[float]:
    """The floor-transfer offsets from ``user`` to ``speaker`` (see the module docstring)."""
    onsets = sorted([(s.start, 0, s) for s in user] + [(s.start, 1, s) for s in speaker],
                    key=lambda t: (t[0], t[1]))
    out = []
    for x in _sorted(speaker):
        before = [t for t in onsets if t[0] < x.start - TOL]
        if not before:
            continue
        _start, channel, u = before[-1]
        if channel == 0 and u.end < x.end - TOL:
            out.append(x.start - u.end)
    return out


def _pause_pairs(user: Sequence[Span], speaker: Sequence[Span]) -> list[tuple[Span, Span]]:
    xs = _sorted(speaker)
    pairs = []
    for a, b in pairwise(xs):
        if not any(u.start < b.start - TOL and u.end > a.end + TOL for u in user):
            pairs.append((a, b))
    return pairs


def pauses(user: Sequence[Span], speaker: Sequence[Span]) -> list[float]:
    """The speaker's pauses (see the module docstring)."""
    return [b.start - a.end for a, b in _pause_pairs(user, speaker)]


def overlaps(user: Sequence[Span], speaker: Sequence[Span]) -> list[float]:
    """The lengths of the speaker's overlaps with the user (see the module docstring)."""
    out = []
    for x in _sorted(speaker):
        for u in _sorted(user):
            length = min(x.end, u.end) - max(x.start, u.start)
            if length > TOL:
                out.append(length)
    return out


def _union_seconds(spans: Sequence[Span]) -> float:
    return sum(s.end - s.start for s in merge_spans(spans))


def backchannel_rate(user: Sequence[Span], speaker: Sequence[Span]) -> float | None:
    """Backchannels per minute of user speech (``None`` without user speech; see the module
    docstring)."""
    minutes = _union_seconds(user) / 60.0
    if minutes <= 0:
        return None
    count = sum(1 for x in speaker if x.end - x.start <= BACKCHANNEL_MAX + TOL
                and any(u.start < x.start - TOL and x.end < u.end - TOL for u in user))
    return count / minutes


def turn_lengths(user: Sequence[Span], speaker: Sequence[Span]) -> list[float]:
    """The speaker's turn lengths (see the module docstring)."""
    xs = _sorted(speaker)
    if not xs:
        return []
    joined = {id(a) for a, _b in _pause_pairs(user, xs)}
    out, start = [], xs[0].start
    for i, x in enumerate(xs):
        if id(x) not in joined or i == len(xs) - 1:
            out.append(x.end - start)
            if i + 1 < len(xs):
                start = xs[i + 1].start
    return out


@dataclass(frozen=True)
class TimelineFeatures:
    """Every feature of one timeline: a list of values per feature (``backchannel_rate`` has
    at most one)."""

    values: dict[str, list[float]]

    def to_json(self) -> dict[str, list[float]]:
        return {k: list(v) for k, v in self.values.items()}


def measure(user: Sequence[Span], speaker: Sequence[Span]) -> TimelineFeatures:
    """The features of ``speaker`` against ``user`` on one timeline."""
    rate = backchannel_rate(user, speaker)
    return TimelineFeatures({
        "fto": floor_transfer_offsets(user, speaker), "pause": pauses(user, speaker),
        "overlap": overlaps(user, speaker),
        "backchannel_rate": [] if rate is None else [rate],
        "turn_length": turn_lengths(user, speaker)})
