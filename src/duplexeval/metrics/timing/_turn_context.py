"""What the reference dialogue says around an event that its sample cannot: where the user next
speaks and where the reference system's turn ends.

Both are dialogue seconds (the M3 metadata's clock, not wav time), read from the dialogue's
annotated IPUs (TURN and BC events; :mod:`duplexeval.events`).  ``user`` is the event's user
channel (``user_channel`` of the metadata), the reference system the other channel::

    user (ref)    uuuuuuu|              |uu        next_user_onset: the first user TURN or BC
    system (ref)            SSSSSSSSSSSSSSSS|      starting after the event start (> t + TOL)
                         t                  |      reference_turn_end: the end of the system
                                                   TURN containing t (start <= t <= end,
                                                   inclusive within TOL)

The ``turnbench`` variant (:mod:`duplexeval.metrics.timing._turnbench`) caps its matching window
at ``next_user_onset`` and charges a false stop up to ``reference_turn_end``;
:func:`duplexeval.metrics._score_run.with_rounds` adds both to every event's metadata when the
run's dataset loads.  Either is absent when the dialogue has no such speech.
"""

from __future__ import annotations

from duplexeval.data._dialogue import Dialogue
from duplexeval.events import EventKind
from duplexeval.timeline import time_gt, time_le

__all__ = ["turn_context"]


def turn_context(dialogue: Dialogue, user: int, t: float) -> dict[str, float]:
    """``next_user_onset`` and ``reference_turn_end`` (dialogue seconds) around time ``t`` of
    a dialogue whose user is channel ``user``; keys without a value are left out."""
    out: dict[str, float] = {}
    onsets = [e.start for e in dialogue.events
              if e.channel == user and e.kind in (EventKind.TURN, EventKind.BC)
              and e.start <= e.end and time_gt(e.start, t)]
    if onsets:
        out["next_user_onset"] = min(onsets)
    ends = [turn.end for turn in dialogue.turns(1 - user)
            if time_le(turn.start, t) and time_le(t, turn.end)]
    if ends:
        out["reference_turn_end"] = max(ends)
    return out
