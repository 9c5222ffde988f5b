"""Barge-in cost in seconds: what a wrong reaction to the user's speech costs the listener, as
SID-Bench's APT (average penalty time) charges it.  Pure rules over the system's segments; the
``turnbench`` variant (:mod:`duplexeval.metrics.timing._turnbench`) reports them.

Conventions: times are seconds of the output wav (``input_start`` is 0); the system is channel 1
and only its segments are read (segments split at silences of 0.5 s or more, so "the system
stopped" means its first silence of 0.5 s or more).  ``a`` is the onset of the user's act, ``b``
its end, ``W`` the sample's end (``input_end``).  The *interrupted turn* is the earliest
system segment with ``start < a + grace`` and ``end > a`` (within the 1e-6 s tolerance); where it
ends is ``stop``.  A BC or BARGE_IN sample starts at the onset (``input_start = event_start``),
so what the system said before it is in the context wav and its turn shows in the sample as a
segment starting at, or a frame or a clip's lead-in after, the onset: ``grace`` (0.5 s, M3's
stop grace) takes it as the turn continuing.  A system with no such segment was not speaking
at the onset and has nothing to yield: every value is ``None``.

False stop (a backchannel, BC, or background speech: the system should keep talking)::

    user    |bc|                          a, b: the backchannel
    system  SSSSSSS|          .      R    stop <= b + yield_window and stop < R: a false stop
                   |<-- penalty_s -->|    penalty_s = R - stop (the rest of the turn it gave up)

  ``R`` is where the system's turn would have ended: the reference system's turn end in the
  dialogue (``reference_turn_end``, :mod:`duplexeval.metrics.timing._turn_context`; for
  background speech the annotated reply's end, ``reply_span``), clipped to ``W``; ``W`` itself
  when the dialogue does not say.  A stop later than ``b + yield_window`` is not a reaction to
  the act, and one at or after ``R`` is the turn's own end: no false stop, penalty 0.  Speech the
  system resumes before ``R`` is not credited (the cost is the turn it gave up, as the issue
  defines it).

Missed stop (a BARGE_IN: the system should yield)::

    user    |uuuuuuuuuuuuuuu|             a: the barge-in onset
    system  SSSSSSSSSSSSSSSSSSS|          stop - a > stop_allowance: a missed stop
            |<-- penalty_s --->|          penalty_s = stop - a (the time until it yielded)

  A stop within ``stop_allowance`` of the onset is a timely one: penalty 0.  A system still
  speaking at ``W`` is charged ``W - a`` (``censored``: it never yielded in the window).

``penalty_s`` is one figure per event (0 when the reaction was right), so its mean over events is
"penalty seconds per event", reported beside the stop rates and the stop latency.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from duplexeval.analysis._segments import SpeechSegment
from duplexeval.timeline import TOL

__all__ = ["GRACE", "STOP_ALLOWANCE", "YIELD_WINDOW", "StopCost", "false_stop", "missed_stop",
           "speaking_at"]

YIELD_WINDOW = 1.0
"""Seconds after the act's end within which a stop counts as a reaction to it."""
STOP_ALLOWANCE = 0.5
"""Seconds after a barge-in's onset within which a stop is timely (no penalty)."""
GRACE = 0.5
"""Seconds after the onset within which a segment's start is the system's turn continuing."""


@dataclass(frozen=True)
class StopCost:
    """The verdict on one act: ``wrong`` (a false or a missed stop, 0/1), the stop latency
    ``stop - a``, the penalty seconds, where the stop and the charged end were (wav time) and
    whether the system never stopped in the window (``censored``)."""

    wrong: int
    stop_latency: float
    penalty_s: float
    stop: float
    charged_to: float
    censored: bool


def speaking_at(model: Iterable[SpeechSegment], onset: float,
                grace: float = GRACE) -> SpeechSegment | None:
    """The system's turn at ``onset``: the earliest-starting segment with ``start < onset +
    grace`` and ``end > onset``; ``None`` when the system is silent then."""
    found = [s for s in model if s.start < onset + grace - TOL and s.end > onset + TOL]
    return min(found, key=lambda s: s.start) if found else None


def false_stop(model: Iterable[SpeechSegment], a: float, b: float, turn_end: float,
               window_end: float, yield_window: float = YIELD_WINDOW) -> StopCost | None:
    """A BC or background speech over ``[a, b]``: whether the system gave up its turn for it and
    what that cost (``turn_end``: where the turn would have ended, clipped to ``window_end``).
    ``None`` when the system was not speaking at ``a``."""
    turn = speaking_at(model, a)
    if turn is None:
        return None
    end = min(turn_end, window_end)
    stop = turn.end
    wrong = stop <= b + yield_window + TOL and stop < end - TOL
    return StopCost(wrong=int(wrong), stop_latency=stop - a,
                    penalty_s=end - stop if wrong else 0.0, stop=stop, charged_to=end,
                    censored=stop >= window_end - TOL)


def missed_stop(model: Iterable[SpeechSegment], a: float, window_end: float,
                stop_allowance: float = STOP_ALLOWANCE) -> StopCost | None:
    """A barge-in at ``a``: whether the system kept talking longer than ``stop_allowance`` and
    the seconds it talked over the user (to ``window_end`` when it never stopped).  ``None`` when
    the system was not speaking at ``a``."""
    turn = speaking_at(model, a)
    if turn is None:
        return None
    stop = min(turn.end, window_end)
    latency = stop - a
    wrong = latency > stop_allowance + TOL
    return StopCost(wrong=int(wrong), stop_latency=latency,
                    penalty_s=latency if wrong else 0.0, stop=stop, charged_to=stop,
                    censored=turn.end >= window_end - TOL)
