"""Dialogue events (M3-DuplexBench kinds) and the rules that derive them from speech.

Event kinds and where each is stored
------------------------------------
All times are seconds from the dialogue start.  ``channel`` is the audio channel (0 or 1).

============  =========================  ==================================================
kind          time                       channel
============  =========================  ==================================================
TURN          [first word start,         the speaker's; an IPU longer than ``bc_max``
              last word end]
BC            same as TURN               the backchanneler's; an IPU of at most ``bc_max``
SHORTPAUSE    [word end, next start]     the speaker's; every silence > 0 inside an IPU
TURN_HOLD     [holder end, this start]   the speaker who keeps the floor
TURN_SHIFT    [holder end, this start]   the **next** speaker's; start > end when the two
                                         TURNs overlap (by at most ``max_shift_overlap``)
BARGE_IN      [this start, holder end]   the interrupter's (overlap > ``max_shift_overlap``)
============  =========================  ==================================================

::

    ch0  |=====TURN=====|            |==TURN==|
    ch1                    |==TURN==|   |BC|
                        ^^^           ^^
                        TURN_SHIFT    TURN_SHIFT (on ch0 and ch1, the next speaker's channel)

    ch0  |=====TURN========|                       ch0  |====TURN====|      |==TURN==|
    ch1          |===TURN=====|                              (same speaker: TURN_HOLD)
                 ^^^^^^^^^^ BARGE_IN on ch1 (overlap > 0.4 s)

How other benchmarks' terms map onto these kinds
------------------------------------------------
* **IPU** (inter-pausal unit; FLEXI, Full-Duplex-Bench): an M3 TURN or BC before the length
  split; IPUs are the merged words of :func:`ipus_from_spans`.
* **gap** (Full-Duplex-Bench, FLEXI "turn-taking"): the silence of a non-overlapping TURN_SHIFT,
  ``end - start`` when ``end >= start``.
* **overlap** (Full-Duplex-Bench v1.5, FLEXI): a TURN_SHIFT with ``start > end`` (overlap of at
  most ``max_shift_overlap``) or a BARGE_IN (longer overlap); BC inside a TURN is a
  backchannel overlap.
* **pause** (FLEXI "pause handling", Full-Duplex-Bench "pause handling"): TURN_HOLD (a silence
  > ``ipu_gap`` between two TURNs of the same speaker with no TURN of the other in between);
  M3's SHORTPAUSE is the within-IPU pause (<= ``ipu_gap``) that those benchmarks do not score.
* **backchannel** (Full-Duplex-Bench v1/v1.5 "user backchannel", FLEXI "user backchannel"):
  BC on the user's channel while the system holds a TURN; FLEXI's "model backchannel" is a BC
  on the system's channel.
* **interrupt** (Full-Duplex-Bench "user interruption", FLEXI "user interrupt"): BARGE_IN on
  the user's channel; FLEXI's "model interrupt" is a BARGE_IN on the system's channel.
* **turn-taking / smooth turn-taking** (all): TURN_SHIFT from the user to the system.

Annotation rules (reproduce the official toy annotations exactly)
-----------------------------------------------------------------
1. Per channel, words merge into one IPU while the silence between them is at most ``ipu_gap``
   (0.5 s: only a longer silence separates IPUs).
2. An IPU of at most ``bc_max`` (0.8 s) is a BC, a longer one a TURN; every silence > 0 inside
   an IPU is a SHORTPAUSE.
3. TURNs of both channels in order of start; for each TURN after the first, the floor holder
   is the earlier-starting TURN with the latest end.  Same channel: TURN_HOLD.  Other channel
   with overlap ``holder.end - this.start <= max_shift_overlap``: TURN_SHIFT.  Longer overlap:
   BARGE_IN.

Thresholds are compared with the tolerance :data:`duplexeval.timeline.TOL`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from duplexeval.timeline import TOL, Span, time_gt, time_le

__all__ = [
    "EVENT_TO_DIMENSION",
    "EVENT_TO_TASK",
    "IPU",
    "TASKS",
    "TASK_SHORT",
    "TASK_TABLE",
    "AnnotationRules",
    "Event",
    "EventKind",
    "Task",
    "annotate_spans",
    "events_by_channel",
    "ipus_from_spans",
    "sort_events",
]


class EventKind(StrEnum):
    """The six M3-DuplexBench event kinds (official names)."""

    TURN = "TURN"
    TURN_SHIFT = "TURN_SHIFT"
    TURN_HOLD = "TURN_HOLD"
    SHORTPAUSE = "SHORTPAUSE"
    BC = "BC"
    BARGE_IN = "BARGE_IN"


@dataclass(frozen=True, slots=True)
class Task:
    """How one evaluated event kind is named across the house."""

    kind: EventKind
    task: str
    """The official M3 task name (plans, ``event_id`` suffixes, ``data_stats.json``)."""
    dimension: str
    """The official timing dimension name (``timing.py``, ``aggregate.json``)."""
    short: str
    """The column label in tables."""


TASK_TABLE: tuple[Task, ...] = (
    Task(EventKind.TURN_SHIFT, "smooth_turn_taking", "smooth_turn_taking", "SHIFT"),
    Task(EventKind.TURN_HOLD, "pause_handling", "pause_handling", "PAUSE"),
    Task(EventKind.SHORTPAUSE, "pause_handling", "pause_handling", "PAUSE"),
    Task(EventKind.BC, "backchanneling", "user_backchanneling", "BC"),
    Task(EventKind.BARGE_IN, "barge_in", "user_barge_in", "BARGE_IN"),
)
"""The one table of task and dimension names (TURN is not evaluated); the mappings below and
every table header derive from it."""

EVENT_TO_TASK: dict[EventKind, str] = {t.kind: t.task for t in TASK_TABLE}
"""Event kind to the official M3 task name."""
TASKS: tuple[str, ...] = tuple(dict.fromkeys(t.task for t in TASK_TABLE))
"""The official task names, in table order."""
TASK_SHORT: dict[str, str] = {t.task: t.short for t in TASK_TABLE}
"""Task name to its column label."""
EVENT_TO_DIMENSION: dict[str, str] = {t.kind.value: t.dimension for t in TASK_TABLE}
"""Event type (string) to the official timing dimension."""


@dataclass(frozen=True, slots=True)
class Event:
    """One annotated event: ``kind`` on ``channel`` over ``[start, end]`` seconds.

    ``start > end`` is legal only for an overlapping TURN_SHIFT (see the module docstring).
    """

    kind: EventKind
    channel: int
    start: float
    end: float

    @property
    def span(self) -> Span:
        """The event's time as a span, ends ordered (an overlapping SHIFT gives its overlap)."""
        return Span(min(self.start, self.end), max(self.start, self.end))

    def shift(self, dt: float) -> Event:
        """The same event moved by ``dt`` seconds."""
        return Event(self.kind, self.channel, self.start + dt, self.end + dt)

    def to_json(self) -> dict[str, object]:
        """The M3 jsonl form ``{"event": KIND, "time": [start, end]}`` (channel is the key)."""
        return {"event": self.kind.value, "time": [self.start, self.end]}


@dataclass(frozen=True)
class AnnotationRules:
    """Thresholds of the annotator, in seconds (defaults: the M3 paper and toy data)."""

    ipu_gap: float = 0.5
    """Words merge into one IPU while the silence between them is at most this."""
    bc_max: float = 0.8
    """An IPU of at most this duration is a BC, a longer one a TURN."""
    max_shift_overlap: float = 0.4
    """A speaker change overlapping the holder by at most this is a TURN_SHIFT, else BARGE_IN."""

    def __post_init__(self) -> None:
        for name in ("ipu_gap", "bc_max", "max_shift_overlap"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")


@dataclass(frozen=True)
class IPU:
    """An inter-pausal unit: one channel's speech spans merged across short silences."""

    channel: int
    span: Span
    pauses: tuple[Span, ...] = field(default=())
    """Silences > 0 between the merged spans (each becomes a SHORTPAUSE)."""


def ipus_from_spans(
    channel: int, spans: Iterable[Span], rules: AnnotationRules = AnnotationRules()
) -> list[IPU]:
    """Merge one channel's speech spans (words or voice activity) into IPUs.

    ::

        words    |a|b|  |c|        |d|       ipu_gap = 0.5; a-b touch, b-c 0.2 s, c-d 0.9 s
        IPUs     |-------|         |-|       pauses of the first IPU: [b.end, c.start]
    """
    ordered = sorted(spans)
    ipus: list[IPU] = []
    cur: Span | None = None
    pauses: list[Span] = []
    for span in ordered:
        if cur is not None and time_le(span.start - cur.end, rules.ipu_gap):
            if time_gt(span.start, cur.end):
                pauses.append(Span(cur.end, span.start))
            cur = Span(cur.start, max(cur.end, span.end))
            continue
        if cur is not None:
            ipus.append(IPU(channel, cur, tuple(pauses)))
        cur, pauses = span, []
    if cur is not None:
        ipus.append(IPU(channel, cur, tuple(pauses)))
    return ipus


def annotate_spans(
    spans_by_channel: Mapping[int, Sequence[Span]],
    rules: AnnotationRules = AnnotationRules(),
) -> list[Event]:
    """Derive M3 events from per-channel speech spans (word spans or voice activity).

    Returns the events sorted per channel by start (a stable sort that puts IPU events before
    floor events at equal starts, the order of the official annotation files), channels in
    ascending order.
    """
    ipu_events: list[Event] = []
    turns: list[Event] = []
    for channel in sorted(spans_by_channel):
        for ipu in ipus_from_spans(channel, spans_by_channel[channel], rules):
            is_bc = time_le(ipu.span.duration, rules.bc_max)
            kind = EventKind.BC if is_bc else EventKind.TURN
            event = Event(kind, channel, ipu.span.start, ipu.span.end)
            ipu_events.append(event)
            if not is_bc:
                turns.append(event)
            ipu_events.extend(
                Event(EventKind.SHORTPAUSE, channel, p.start, p.end) for p in ipu.pauses
            )
    floor_events = _floor_events(turns, rules)
    return sort_events(ipu_events + floor_events)


def _floor_events(turns: list[Event], rules: AnnotationRules) -> list[Event]:
    """TURN_HOLD / TURN_SHIFT / BARGE_IN between each TURN and the floor holder before it."""
    ordered = sorted(turns, key=lambda e: (e.start, e.channel))
    out: list[Event] = []
    holder: Event | None = None
    for turn in ordered:
        if holder is not None:
            if holder.channel == turn.channel:
                out.append(Event(EventKind.TURN_HOLD, turn.channel, holder.end, turn.start))
            elif time_le(holder.end - turn.start, rules.max_shift_overlap):
                out.append(Event(EventKind.TURN_SHIFT, turn.channel, holder.end, turn.start))
            else:
                out.append(Event(EventKind.BARGE_IN, turn.channel, turn.start, holder.end))
        if holder is None or turn.end > holder.end + TOL:
            holder = turn
    return out


def sort_events(events: Iterable[Event]) -> list[Event]:
    """Channels ascending, then a stable sort by start time within each channel."""
    return sorted(events, key=lambda e: (e.channel, e.start))


def events_by_channel(events: Iterable[Event]) -> dict[int, list[Event]]:
    """Group events by channel, keeping their order."""
    out: dict[int, list[Event]] = {}
    for event in events:
        out.setdefault(event.channel, []).append(event)
    return out
