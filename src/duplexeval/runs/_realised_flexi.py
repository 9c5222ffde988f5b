"""A FLEXI item on an interactive run's realised timeline: its record and anchor moved with
the user items the simulated user played.

Every time a FLEXI record (:mod:`duplexeval.data._flexi_record`) gives on the user's side lies
inside one of the user's reference items (the IPUs, TURN and BC events of the user channel,
:func:`~duplexeval.runs._interactive.user_items`) or on its edge.  Under ``interactive`` each
item plays whole (or up to a yield) from its realised start, so a reference time ``t`` inside
item ``i`` is realised at ``t - ref_i.start + realised_i.start`` (seconds)::

    reference  user |==item 0==|..pause..|==item 1==|          system ...|==answer==
    realised   user |==item 0==|..pause, as played..|==item 1==|  system  ...|==
                    ^ + d0                          ^ + d1   (d_i: realised - reference start)

    user_turn [a, b]        a by the item that holds a, b by the item that holds b
    pause [ps, pe]          ps: item 0's end, pe: item 1's start (the pause as it was played)
    interruption, backchannel, recognisable_at     by the item that holds them
    anchor time             a user event's ends by their items; a TURN_SHIFT onto the system:
                            its start (the user's turn end) by its item, its end the reference
                            gap after it
    reference_backchannels  ``origin_s``: where the reference's time 0 falls with the
                            narrative's shift (bins stay ``bin_s`` wide from there)

An edge shared by two touching items counts as the start of the later one for a span's start
and the end of the earlier one for a span's end.  The reference system's spans (``response``,
``system_turn``) describe the reference system, not this run's, and are left out.  A time
inside no played item (a backchannel skipped because the system had stopped) leaves the item
unscored, with why.

The item's planning dialogue: the user channel's TURN and SHORTPAUSE events moved the same way
(a TURN is its item's realised span, so a turn cut by a yield ends where it was cut), the
anchor, and for a BC or BARGE_IN anchor the system's realised turns: FLEXI's premise, which is
also the plan's rule, is that the system is speaking when the user acts, and an act that fell
on the system's silence leaves the item unscored, with why.  The plan's rules then give the
anchor the sample a static run gives it, on realised times, and
:func:`~duplexeval.metrics._score_run.score_run_dir` finds the record on its anchor (same kind,
same start).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from duplexeval.data._dialogue import Dialogue
from duplexeval.data._flexi_record import FLEXI_FIELD, FLEXI_VERSION
from duplexeval.events import Event, EventKind
from duplexeval.runs._interactive import played_items
from duplexeval.timeline import TOL, Span, approx_eq, time_le

__all__ = ["RealisedItem", "realised_flexi"]

SYSTEM_SIDE = ("response", "system_turn")
"""Record spans of the reference system, left out of a realised record."""
USER_SPANS = ("user_turn", "pause", "interruption", "backchannel")
"""Record spans on the user's side, moved with their items."""


@dataclass(frozen=True)
class RealisedItem:
    """A FLEXI item on a realised timeline: its record and planning events (realised
    seconds), or why it cannot be scored (``record`` ``None``)."""

    record: dict[str, Any] | None
    events: tuple[Event, ...]
    unscored: str | None = None

    def to_json(self, user: int) -> dict[str, Any]:
        """The timeline file's ``flexi`` entry: the record and the events by role, or why."""
        if self.record is None:
            return {"unscored": self.unscored}
        role = {user: "user", 1 - user: "system"}
        return {"record": self.record,
                "events": [{"role": role[e.channel], **e.to_json()} for e in self.events]}


class _Unplayed(Exception):
    """A reference time inside no item the session played."""


class _Shift:
    """Reference user times to realised ones, item by item (module docstring)."""

    def __init__(self, played: Mapping[int, tuple[Span, Span]],
                 skipped: Mapping[int, str], items: Mapping[int, Span]) -> None:
        self.played, self.skipped, self.items = played, skipped, items

    def __call__(self, t: float, end: bool = False) -> float:
        ref, real = self.item(t, end)
        return t - ref.start + real.start

    def item(self, t: float, end: bool = False) -> tuple[Span, Span]:
        hits = [pair for pair in self.played.values()
                if time_le(pair[0].start, t) and time_le(t, pair[0].end)]
        hits.sort(key=lambda pair: not approx_eq(pair[0].end if end else pair[0].start, t))
        if hits:
            return hits[0]
        held = next((i for i, ref in self.items.items()
                     if time_le(ref.start, t) and time_le(t, ref.end)), None)
        if held is None:
            raise _Unplayed(f"reference time {t:.3f} s lies in no user item")
        why = self.skipped.get(held, "not played before the session ended")
        raise _Unplayed(f"user item {held} (reference {self.items[held].start:.3f}-"
                        f"{self.items[held].end:.3f} s) was not played: {why}")


def _record(record: Mapping[str, Any], at: _Shift) -> dict[str, Any]:
    out = {k: v for k, v in record.items() if k not in SYSTEM_SIDE}
    for name in USER_SPANS:
        span = record.get(name)
        if isinstance(span, list | tuple) and len(span) == 2:
            out[name] = [at(float(span[0])), at(float(span[1]), end=True)]
    if record.get("recognisable_at") is not None:
        out["recognisable_at"] = at(float(record["recognisable_at"]))
    anchor = dict(record["anchor"])
    a, b = (float(x) for x in anchor["time"])
    if EventKind(anchor["event"]) is EventKind.TURN_SHIFT:
        start = at(a, end=True)
        anchor["time"] = [start, start + (b - a)]
    else:
        anchor["time"] = [at(a), at(b, end=True)]
    out["anchor"] = anchor
    bcs = record.get("reference_backchannels")
    turn = record.get("user_turn")
    if isinstance(bcs, Mapping) and isinstance(turn, list | tuple) and turn:
        origin = at(float(turn[0])) - float(turn[0])
        out["reference_backchannels"] = {
            **bcs, "origin_s": origin,
            "positions": [float(p) + origin for p in bcs.get("positions") or []]}
    out["realised"] = {
        "from": "the reference user items, each shifted by its realised start (interactive)",
        "shifts": {str(i): real.start - ref.start for i, (ref, real) in at.played.items()}}
    return out


def _moved(event: Event, at: _Shift) -> Event:
    """A user TURN (an item) as its realised span; another event moved by its items."""
    if event.kind is EventKind.TURN:
        real = at.item(event.start)[1]
        return Event(event.kind, event.channel, real.start, real.end)
    return Event(event.kind, event.channel, at(event.start), at(event.end, end=True))


def realised_flexi(dialogue: Dialogue, user: int, log: Sequence[dict[str, Any]],
                   system_spans: Sequence[Span]) -> RealisedItem | None:
    """The FLEXI item of ``dialogue`` on the realised timeline of its interactive session on
    user channel ``user`` (its decision ``log`` and the system's realised ``system_spans``),
    or ``None`` when the dialogue holds no FLEXI item (of this format) for that channel."""
    record = dialogue.extra.get(FLEXI_FIELD)
    if not isinstance(record, Mapping) or record.get("version") != FLEXI_VERSION or \
            int(record.get("user_channel", 0)) != user:
        return None
    items = {int(it["index"]): Span(float(it["ref"][0]), float(it["ref"][1]))
             for it in log[0]["items"]}
    skipped = {int(r["item"]): str(r["why"]) for r in log[1:] if r["action"] == "skip"}
    at = _Shift(played_items(log), skipped, items)
    try:
        mapped = _record(record, at)
        events = [_moved(e, at) for e in dialogue.events
                  if e.channel == user and e.kind in (EventKind.TURN, EventKind.SHORTPAUSE)]
    except _Unplayed as exc:
        return RealisedItem(None, (), f"{record.get('scenario')}: {exc}")
    kind = EventKind(mapped["anchor"]["event"])
    a, b = mapped["anchor"]["time"]
    system = 1 - user
    if kind is EventKind.TURN_SHIFT:
        events.append(Event(kind, system, a, b))
    elif kind in (EventKind.TURN_HOLD, EventKind.BC, EventKind.BARGE_IN):
        events.append(Event(kind, user, a, b))
    if kind in (EventKind.BC, EventKind.BARGE_IN):
        if not any(s.start - TOL <= a <= s.end + TOL for s in system_spans):
            return RealisedItem(None, (), f"{record.get('scenario')}: the user's "
                                f"{kind.value} at {a:.3f} s fell on the system's silence "
                                "(FLEXI's premise: the system is speaking when the user acts)")
        events += [Event(EventKind.TURN, system, s.start, s.end) for s in system_spans]
    return RealisedItem(mapped, tuple(events))
