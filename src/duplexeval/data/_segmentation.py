"""Cutting a long dialogue into segments of about 120 s without splitting an IPU (M3 sec. 3.2).

Times are seconds from the start of the source dialogue; a segment ``[s, e]`` becomes a dialogue
of its own whose time 0 is ``s`` (words, events and audio are shifted by ``-s``).  Channels are
kept as they are (channel 0 stays channel 0): roles are decided per event later, as for any
dataset.

Where a cut falls
-----------------
The IPUs of both channels are merged into *speech blocks* (the union of every IPU of either
speaker: two IPUs that overlap or touch are one block).  A cut is only ever made inside a silence
between two blocks, so no IPU (and no word) is split:

::

    ch0   |==IPU==|      |====IPU=====|         |=IPU=|
    ch1        |=IPU=|         |==IPU===|   |=IPU==|
    blocks |=========|   |==============|   |=========|
                      ^ cut allowed      ^ cut allowed           (inside a block: never)

Segment after segment, the wanted end is ``start + target``.  When it falls in a silence the
cut is made there (``A0022_S0003.0.0-120.0``); otherwise in the silence before or after the
block that covers it, whichever is nearer, at least ``margin`` (0.1 s) from the blocks' edges
(half the silence when it is shorter).  The silence after the last speech is never cut: the
last segment ends at the end of the dialogue and may be shorter than ``target`` (``min_last``
merges a short last segment into the one before it).  Cut times are rounded to 0.01 s where the
rounded time is still inside the silence.

A segment's id is ``{source_id}.{start}-{end}`` with the times printed as the toy data does
(``0.0``, ``120.0``, ``118.73``: the shortest decimal text of the time rounded to 1 ms, always
with a decimal point).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from duplexeval.data._dialogue import Word
from duplexeval.events import Event
from duplexeval.timeline import TOL, Span

__all__ = ["cut_events", "cut_words", "plan_segments", "segment_id", "speech_blocks"]


def speech_blocks(ipus: Iterable[Span]) -> list[Span]:
    """The union of IPU spans (both channels), sorted; overlapping or touching spans merge."""
    blocks: list[Span] = []
    for span in sorted(ipus):
        if blocks and span.start <= blocks[-1].end:
            blocks[-1] = Span(blocks[-1].start, max(blocks[-1].end, span.end))
        else:
            blocks.append(span)
    return blocks


def _silences(blocks: Sequence[Span], duration: float) -> list[Span]:
    """The silences between blocks, including before the first and after the last."""
    out: list[Span] = []
    last = 0.0
    for block in blocks:
        if block.start > last:
            out.append(Span(last, block.start))
        last = max(last, block.end)
    if duration > last:
        out.append(Span(last, duration))
    return out


def _cut_in(silence: Span, wanted: float, margin: float) -> float:
    """The point of ``silence`` nearest ``wanted``, at least ``margin`` (or half the silence)
    from its edges, rounded to 0.01 s when that stays strictly inside."""
    m = min(margin, silence.duration / 2)
    t = min(max(wanted, silence.start + m), silence.end - m)
    rounded = round(t, 2)
    return rounded if silence.start < rounded < silence.end else t


def _next_cut(silences: Sequence[Span], start: float, wanted: float, margin: float,
              duration: float) -> float | None:
    """The cut nearest ``wanted`` in a silence after ``start``; never in the trailing silence
    (the last segment ends at the end anyway).  ``None`` when there is none."""
    best: float | None = None
    for silence in silences:
        if silence.end <= start + TOL or silence.end >= duration:
            continue
        cut = _cut_in(Span(max(silence.start, start), silence.end), wanted, margin)
        if cut <= start + TOL:
            continue
        if best is None or abs(cut - wanted) < abs(best - wanted):
            best = cut
    return best


def plan_segments(ipus: Iterable[Span], duration: float, target: float = 120.0,
                  margin: float = 0.1, min_last: float = 0.0) -> list[Span]:
    """Segments ``[s, e]`` (seconds) covering ``[0, duration]`` in order, each cut in a
    silence of both channels (see the module docstring); one segment when ``target <= 0``."""
    if target <= 0 or duration <= target:
        return [Span(0.0, duration)]
    blocks = speech_blocks(ipus)
    silences = _silences(blocks, duration)
    segments: list[Span] = []
    start = 0.0
    while duration - start > target + TOL:
        cut = _next_cut(silences, start, start + target, margin, duration)
        if cut is None:
            break
        segments.append(Span(start, cut))
        start = cut
    segments.append(Span(start, duration))
    if len(segments) > 1 and segments[-1].duration < min_last:
        tail = segments.pop()
        segments[-1] = Span(segments[-1].start, tail.end)
    return segments


def _time_text(t: float) -> str:
    text = repr(round(float(t), 3))
    return text if "." in text or "e" in text else f"{text}.0"


def segment_id(source_id: str, segment: Span) -> str:
    """``{source_id}.{start}-{end}``, e.g. ``A0022_S0003.0.0-120.0``."""
    return f"{source_id}.{_time_text(segment.start)}-{_time_text(segment.end)}"


def cut_words(words: Iterable[Word], segment: Span) -> list[Word]:
    """The words inside ``segment``, shifted to its time (a cut never splits a word)."""
    s, e = segment.start, segment.end
    return [Word(w.channel, w.start - s, w.end - s, w.text) for w in words
            if w.start >= s - TOL and w.end <= e + TOL]


def cut_events(events: Iterable[Event], segment: Span) -> list[Event]:
    """The events lying inside ``segment`` (both times), shifted to its time.

    Floor events that reach across a cut (a TURN_SHIFT from the last IPU before it to the first
    after it) are dropped: the segment does not contain the floor holder they refer to, which is
    what annotating the segment on its own gives.
    """
    s, e = segment.start, segment.end
    return [ev.shift(-s) for ev in events
            if min(ev.start, ev.end) >= s - TOL and max(ev.start, ev.end) <= e + TOL]
