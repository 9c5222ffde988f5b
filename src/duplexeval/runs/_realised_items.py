"""A benchmark's annotated items on an interactive run's realised timeline: a FLEXI item's
record, or an MTR dialogue's rounds, moved with the user items the simulated user played.

Every time a FLEXI record (:mod:`duplexeval.data._flexi_record`) or an MTR round
(:mod:`duplexeval.data._mtr_record`) gives on the user's side lies inside one of the user's
reference items (the IPUs, TURN and BC events of the user channel, and background speech on
it, :func:`~duplexeval.runs._interactive.user_items`) or on its edge.  Under ``interactive``
each item plays whole (or up to a yield) from its realised start, so a reference time ``t``
inside item ``i`` is realised at ``t - ref_i.start + realised_i.start`` (seconds)::

    reference  user |==item 0==|..pause..|==item 1==|          system ...|==answer==
    realised   user |==item 0==|..pause, as played..|==item 1==|  system  ...|==
                    ^ + d0                          ^ + d1   (d_i: realised - reference start)

    FLEXI  user_turn [a, b]      a by the item that holds a, b by the item that holds b
           pause [ps, pe]        ps: item 0's end, pe: item 1's start (the pause as played)
           interruption, backchannel, recognisable_at     by the item that holds them
           anchor time           a user event's ends by their items; a TURN_SHIFT onto the
                                 system: its start (the user's turn end) by its item, its end
                                 the reference gap after it
           reference_backchannels  ``origin_s``: where the reference's time 0 falls with the
                                 narrative's shift (bins stay ``bin_s`` wide from there)
    MTR    user_span, pause_span, interruption_span, backchannel_spans, background_span
                                 by their items (a backchannel or background speech the user
                                 skipped is left out, and ``unplayed`` says why)
           window [a, b]         a by round k's user item, b by round k + 1's (the last
                                 round's: the realised dialogue's end)

An edge shared by two touching items counts as the start of the later one for a span's start
and the end of the earlier one for a span's end.  The reference system's spans (FLEXI's
``response`` and ``system_turn``, MTR's ``reply_span`` and ``overlap_span``) describe the
reference system, not this run's, and are left out.  A FLEXI time inside no played item (a
backchannel skipped because the system had stopped) leaves the item unscored, with why.

The planning dialogue: the user channel's TURN, SHORTPAUSE, TURN_HOLD, BC and BARGE_IN events
moved the same way (a TURN is its item's realised span, so a turn cut by a yield ends where it
was cut; a BARGE_IN's end, the reference system's stop, is clipped to its turn) and each
TURN_SHIFT onto the system at a user turn's end (its start moved, its end the reference gap
after it); for FLEXI only the item's anchor among the evaluated kinds.  The plan's rule that a
BC or BARGE_IN is evaluated only while the system speaks at its onset (FLEXI's premise too) is
kept on the realised system: where the realised system spans hold the act's onset, a
zero-length system TURN at the onset says so (no other event's rule can see it); a FLEXI act
that fell on the system's silence leaves the item unscored, with why.  The plan's rules then
give each event the sample a static run gives it, on realised times, and
:func:`~duplexeval.metrics._score_run.score_run_dir` finds the record on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from duplexeval.data._dialogue import Dialogue
from duplexeval.data._flexi_record import FLEXI_FIELD, FLEXI_VERSION
from duplexeval.data._mtr_record import MTR_FIELD, MTR_VERSION
from duplexeval.events import Event, EventKind
from duplexeval.runs._interactive import played_items
from duplexeval.timeline import Span, approx_eq, time_le

__all__ = ["RealisedItems", "realised_items"]

SYSTEM_SIDE = ("response", "system_turn", "reply_span", "overlap_span")
"""Record spans of the reference system, left out of a realised record."""
FLEXI_SPANS = ("user_turn", "pause", "interruption", "backchannel")
MTR_SPANS = ("user_span", "pause_span", "interruption_span", "background_span")
"""Record spans on the user's side, moved with their items."""
USER_EVENTS = (EventKind.TURN, EventKind.SHORTPAUSE, EventKind.TURN_HOLD, EventKind.BC,
               EventKind.BARGE_IN)
ACTS = (EventKind.BC, EventKind.BARGE_IN)
"""Kinds evaluated only while the system speaks at their onset (the plan's rule)."""


@dataclass(frozen=True)
class RealisedItems:
    """A dialogue's annotated items on a realised timeline: the record field (``flexi`` or
    ``mtr``), its realised record and planning events (realised seconds), or why it cannot
    be scored (``record`` ``None``)."""

    field: str
    record: dict[str, Any] | None
    events: tuple[Event, ...]
    unscored: str | None = None

    def to_json(self, user: int) -> dict[str, Any]:
        """The timeline file's entry: the field, the record and the events by role, or why."""
        if self.record is None:
            return {"field": self.field, "unscored": self.unscored}
        role = {user: "user", 1 - user: "system"}
        return {"field": self.field, "record": self.record,
                "events": [{"role": role[e.channel], **e.to_json()} for e in self.events]}


class _Unplayed(Exception):
    """A reference time inside no item the session played."""


class _Shift:
    """Reference user times to realised ones, item by item (module docstring)."""

    def __init__(self, log: Sequence[dict[str, Any]]) -> None:
        self.played = played_items(log)
        self.skipped = {int(r["item"]): str(r["why"]) for r in log[1:] if r["action"] == "skip"}
        self.items = {int(it["index"]): Span(float(it["ref"][0]), float(it["ref"][1]))
                      for it in log[0]["items"]}

    def __call__(self, t: float, end: bool = False) -> float:
        ref, real = self.item(t, end)
        return t - ref.start + real.start

    def span(self, value: Any) -> list[float]:
        return [self(float(value[0])), self(float(value[1]), end=True)]

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

    def provenance(self) -> dict[str, Any]:
        return {"from": "the reference user items, each shifted by its realised start "
                        "(interactive)",
                "shifts": {str(i): real.start - ref.start
                           for i, (ref, real) in sorted(self.played.items())}}


def _flexi_record(record: Mapping[str, Any], at: _Shift) -> dict[str, Any]:
    out = {k: v for k, v in record.items() if k not in SYSTEM_SIDE}
    for name in FLEXI_SPANS:
        if isinstance(record.get(name), list | tuple) and len(record[name]) == 2:
            out[name] = at.span(record[name])
    if record.get("recognisable_at") is not None:
        out["recognisable_at"] = at(float(record["recognisable_at"]))
    anchor = dict(record["anchor"])
    a, b = (float(x) for x in anchor["time"])
    if EventKind(anchor["event"]) is EventKind.TURN_SHIFT:
        start = at(a, end=True)
        anchor["time"] = [start, start + (b - a)]
    else:
        anchor["time"] = at.span([a, b])
    out["anchor"] = anchor
    bcs = record.get("reference_backchannels")
    turn = record.get("user_turn")
    if isinstance(bcs, Mapping) and isinstance(turn, list | tuple) and turn:
        origin = at(float(turn[0])) - float(turn[0])
        out["reference_backchannels"] = {
            **bcs, "origin_s": origin,
            "positions": [float(p) + origin for p in bcs.get("positions") or []]}
    out["realised"] = at.provenance()
    return out


def _mtr_round(r: Mapping[str, Any], nxt: Mapping[str, Any] | None, at: _Shift,
               duration: float) -> dict[str, Any]:
    out = {k: v for k, v in r.items() if k not in SYSTEM_SIDE}
    unplayed: list[str] = []
    for name in MTR_SPANS:
        if name in r:
            try:
                out[name] = at.span(r[name])
            except _Unplayed as exc:
                out.pop(name)
                unplayed.append(f"{name}: {exc}")
    if "backchannel_spans" in r:
        kept = []
        for span in r["backchannel_spans"]:
            try:
                kept.append(at.span(span))
            except _Unplayed as exc:
                unplayed.append(f"backchannel_spans: {exc}")
        out["backchannel_spans"] = kept
    start = out["user_span"][0]
    end = at(float(nxt["user_span"][1]), end=True) if nxt is not None else duration
    out["window"] = [start, max(start, end)]
    if unplayed:
        out["unplayed"] = unplayed
    return out


def _mtr_record(record: Mapping[str, Any], at: _Shift, duration: float) -> dict[str, Any]:
    rounds = sorted((dict(r) for r in record.get("rounds") or [] if isinstance(r, Mapping)),
                    key=lambda r: int(r.get("round", 0)))
    moved = [_mtr_round(r, rounds[i + 1] if i + 1 < len(rounds) else None, at, duration)
             for i, r in enumerate(rounds)]
    return {**dict(record), "rounds": moved, "realised": at.provenance()}


def _moved(event: Event, at: _Shift) -> Event:
    """A user event on the realised timeline (module docstring)."""
    if event.kind is EventKind.TURN:
        real = at.item(event.start)[1]
        return Event(event.kind, event.channel, real.start, real.end)
    start = at(event.start)
    if event.kind is EventKind.BARGE_IN:  # its end is the reference system's stop
        real = at.item(event.start)[1]
        try:
            end = min(at(event.end, end=True), real.end)
        except _Unplayed:
            end = real.end
        return Event(event.kind, event.channel, start, max(start, end))
    return Event(event.kind, event.channel, start, at(event.end, end=True))


def _user_events(dialogue: Dialogue, user: int, at: _Shift,
                 kinds: Sequence[EventKind]) -> list[Event]:
    """The user channel's events of ``kinds`` moved (those in no played item left out), and
    each TURN_SHIFT onto the system at a moved user turn's end."""
    out = []
    for e in dialogue.events:
        try:
            if e.channel == user and e.kind in kinds:
                out.append(_moved(e, at))
            elif e.channel != user and e.kind is EventKind.TURN_SHIFT and \
                    EventKind.TURN_SHIFT in kinds:
                start = at(e.start, end=True)
                out.append(Event(e.kind, e.channel, start, start + (e.end - e.start)))
        except _Unplayed:
            continue
    return out


def _witnesses(events: Sequence[Event], system_spans: Sequence[Span],
               system: int) -> list[Event]:
    """A zero-length system TURN at the onset of each BC or BARGE_IN the realised system
    speaks over (module docstring)."""
    return [Event(EventKind.TURN, system, e.start, e.start) for e in events
            if e.kind in ACTS and any(time_le(s.start, e.start) and time_le(e.start, s.end)
                                      for s in system_spans)]


def _flexi(dialogue: Dialogue, record: Mapping[str, Any], user: int, at: _Shift,
           system_spans: Sequence[Span]) -> RealisedItems:
    scenario = record.get("scenario")
    try:
        mapped = _flexi_record(record, at)
        events = _user_events(dialogue, user, at, (EventKind.TURN, EventKind.SHORTPAUSE))
    except _Unplayed as exc:
        return RealisedItems(FLEXI_FIELD, None, (), f"{scenario}: {exc}")
    kind = EventKind(mapped["anchor"]["event"])
    a, b = mapped["anchor"]["time"]
    anchor = Event(kind, 1 - user if kind is EventKind.TURN_SHIFT else user, a, b)
    witness = _witnesses([anchor], system_spans, 1 - user)
    if kind in ACTS and not witness:
        return RealisedItems(FLEXI_FIELD, None, (), f"{scenario}: the user's {kind.value} at "
                             f"{a:.3f} s fell on the system's silence (FLEXI's premise: the "
                             "system is speaking when the user acts)")
    return RealisedItems(FLEXI_FIELD, mapped, (*events, anchor, *witness))


def _mtr(dialogue: Dialogue, record: Mapping[str, Any], user: int, at: _Shift,
         system_spans: Sequence[Span], duration: float) -> RealisedItems:
    try:
        mapped = _mtr_record(record, at, duration)
    except _Unplayed as exc:
        return RealisedItems(MTR_FIELD, None, (), str(exc))
    events = _user_events(dialogue, user, at, (*USER_EVENTS, EventKind.TURN_SHIFT))
    events += _witnesses(events, system_spans, 1 - user)
    return RealisedItems(MTR_FIELD, mapped, tuple(events))


def realised_items(dialogue: Dialogue, user: int, log: Sequence[dict[str, Any]],
                   system_spans: Sequence[Span], duration: float) -> RealisedItems | None:
    """The annotated items of ``dialogue`` (a FLEXI item, or MTR rounds) on the realised
    timeline of its interactive session on user channel ``user``: its decision ``log``, the
    system's realised ``system_spans`` and the realised ``duration`` (seconds); ``None`` when
    the dialogue annotates none (of these formats) for that channel."""
    at = _Shift(log)
    flexi = dialogue.extra.get(FLEXI_FIELD)
    if isinstance(flexi, Mapping) and flexi.get("version") == FLEXI_VERSION and \
            int(flexi.get("user_channel", 0)) == user:
        return _flexi(dialogue, flexi, user, at, system_spans)
    mtr = dialogue.extra.get(MTR_FIELD)
    if isinstance(mtr, Mapping) and mtr.get("version") == MTR_VERSION and \
            int(mtr.get("user_channel", 0)) == user:
        return _mtr(dialogue, mtr, user, at, system_spans, duration)
    return None
