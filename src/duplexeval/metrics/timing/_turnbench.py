"""The ``turnbench`` timing variant: TurnBench-style event matching, with the barge-in cost.

Source: Sesame's TurnBench (its description of the metric: a prediction matches an event inside
a window around it, false positives are counted once per pause, latency is reported as
p10/p50/p90 under a false-positive ceiling), re-implemented from that description on M3 events;
there is no released code to match, so :meth:`TurnBenchTiming.definition` is ``paper``.

Conventions: times are seconds of the output wav (``input_start`` is 0); the system is channel 1
and a *system onset* is the start of one of its segments (segments split at silences of 0.5 s
or more, so an onset follows at least 0.5 s of system silence).  ``t`` is ``event_start``.

Turn end (TURN_SHIFT -> ``turn_end``; ``match ↑``, ``latency ↓``)::

    user    uuuuuuuuuuuu|
    window          [...|...........]        [t - early, hi], both ends inclusive (1e-6 s)
    system      x           MMMMMM      x    x: onsets outside it (too early, too late)
                        |<->|                latency = the first onset inside - t
                        t                    (negative down to -early)

  ``hi = min(t + max_delay, next user onset, W)``: the next event is where the user next speaks
  in the reference dialogue (``next_user_onset`` of the event metadata, added from the run's
  dataset by :mod:`duplexeval.metrics.timing._turn_context`; once the user speaks again an onset
  no longer answers ``t``), and the sample's end ``W`` (``input_end``) when the dialogue is not
  available or the user does not speak again.  In a muted sample (the default: the input is
  zeroed from ``t``) the system never hears that next speech; it bounds the window as it would
  in the conversation.  No match: ``match`` 0 and latency ``None`` (an onset before
  ``t - early`` is a system that talked over the user's end, one after ``hi`` a miss).
  Defaults: ``early = 0.25``, ``max_delay = 3.0``.

Pause (TURN_HOLD, SHORTPAUSE -> ``pause``; ``false_positive ↓``)::

    user    uuuuuu|            |uuuu     the reference pause [event_start, event_end)
    system          x    x               two onsets inside: one false positive (0/1 per pause)

  An onset at the pause end (the user resuming) is not inside it.  Its mean over pauses is the
  false-positive rate; ``info["onsets"]`` counts the onsets.

User backchannel (BC -> ``user_backchanneling``), barge-in (BARGE_IN -> ``user_barge_in``) and
annotated background speech (``background``): the stop verdicts and the penalty seconds of
:mod:`duplexeval.metrics.timing._bargein_cost` (``false_stop ↓`` / ``missed_stop ↓``,
``stop_latency``; the extra ``penalty_s ↓``).  They are extras of this variant rather than a
variant of their own so that one ``--variant turnbench`` scoring holds every figure the means
hide (latency quantiles, false positives, penalty seconds) in one results file; the rules sit in
their own module for any variant to reuse.

Aggregates: the rows' mean of ``match ↑`` is the match rate, of ``false_positive ↓`` the
false-positive rate, of ``penalty_s ↓`` the penalty seconds per event; the rows of the metrics in
:attr:`TurnBenchTiming.quantile_metrics` also carry p10/p50/p90
(:func:`duplexeval.metrics._scoring.aggregate_rows`).  The operating point under a
false-positive ceiling: :mod:`duplexeval.metrics.timing._operating_point`.

Passes (``run --repeats``: pass@k, pass^k, :mod:`duplexeval.metrics._stability`): a turn end
passes when an onset matched (``match ↑ = 1``), a pause when it had no false positive
(``false_positive ↓ = 0``), a backchannel or background speech when the system did not stop
for it (``false_stop ↓ = 0``), a barge-in when it stopped in time (``missed_stop ↓ = 0``).  A
system not speaking at the onset has no stop verdict (``None``): that try is not judged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from duplexeval.analysis._segments import SpeechSegment
from duplexeval.metrics._base import (
    INPUT_CHANNEL,
    SYSTEM_CHANNEL,
    Definition,
    DimensionScore,
    EventScore,
    EventView,
    MeasurementOrigin,
    PassRule,
    TimingVariant,
)
from duplexeval.metrics.timing._bargein_cost import (
    STOP_ALLOWANCE,
    YIELD_WINDOW,
    StopCost,
    false_stop,
    missed_stop,
)
from duplexeval.timeline import TOL

__all__ = ["TurnBenchTiming"]

SYSTEM = 1

_STOP = MeasurementOrigin(
    f"the user's onset (event_start, annotated) {INPUT_CHANNEL}",
    f"the end of the system segment speaking at the onset {SYSTEM_CHANNEL}")
ORIGINS: dict[str, MeasurementOrigin] = {
    "turn_end/latency ↓": MeasurementOrigin(
        f"the user's turn end (event_start, annotated) {INPUT_CHANNEL}",
        f"the first system onset in the matching window {SYSTEM_CHANNEL}"),
    "user_backchanneling/stop_latency": _STOP,
    "user_backchanneling/penalty_s ↓": MeasurementOrigin(
        f"the end of the system segment speaking at the backchannel onset {SYSTEM_CHANNEL}",
        "the reference system's turn end in the dialogue (reference_turn_end), clipped to "
        "input_end; input_end without the dataset"),
    "user_barge_in/stop_latency ↓": _STOP,
    "user_barge_in/penalty_s ↓": MeasurementOrigin(
        f"the user's onset (event_start, annotated) {INPUT_CHANNEL}",
        f"the end of the system segment speaking at the onset, or input_end {SYSTEM_CHANNEL}"),
    "background/stop_latency": MeasurementOrigin(
        f"the background speech's onset (annotated) {INPUT_CHANNEL}",
        f"the end of the system segment speaking at that onset {SYSTEM_CHANNEL}"),
    "background/penalty_s ↓": MeasurementOrigin(
        f"the end of the system segment speaking at the background onset {SYSTEM_CHANNEL}",
        "the annotated reply's end (reply_span), clipped to input_end; input_end without it"),
}
"""Where each turnbench latency and penalty starts and ends."""

_NO_FP = PassRule("pause", "false_positive ↓", 0, "no onset inside the pause "
                  "(false_positive ↓ = 0)")
PASS_RULES: dict[str, PassRule] = {
    "TURN_SHIFT": PassRule("turn_end", "match ↑", 1,
                           "an onset in the matching window (match ↑ = 1)"),
    "TURN_HOLD": _NO_FP, "SHORTPAUSE": _NO_FP,
    "BC": PassRule("user_backchanneling", "false_stop ↓", 0,
                   "kept talking through the backchannel (false_stop ↓ = 0)"),
    "BARGE_IN": PassRule("user_barge_in", "missed_stop ↓", 0,
                         "stopped within the allowance (missed_stop ↓ = 0)"),
    "*/background": PassRule("background", "false_stop ↓", 0,
                             "kept talking through the background speech (false_stop ↓ = 0)"),
}
"""A pass per turnbench dimension (see the module docstring)."""


class TurnBenchTiming(TimingVariant):
    """TurnBench-style matching and the barge-in cost (see the module docstring)."""

    name: ClassVar[str] = "turnbench"
    version: ClassVar[str] = "1"
    source: ClassVar[str] = ("Sesame TurnBench (window matching, false positives once per "
                             "pause, p10/p50/p90 latency); SID-Bench APT (penalty seconds)")
    measurement_origins: ClassVar[Mapping[str, MeasurementOrigin]] = ORIGINS
    pass_rules: ClassVar[Mapping[str, PassRule]] = PASS_RULES
    quantile_metrics: ClassVar[tuple[str, ...]] = (
        "turn_end/latency ↓", "user_backchanneling/penalty_s ↓", "user_barge_in/penalty_s ↓",
        "background/penalty_s ↓")

    def __init__(self, early: float = 0.25, max_delay: float = 3.0,
                 yield_window: float = YIELD_WINDOW,
                 stop_allowance: float = STOP_ALLOWANCE) -> None:
        self.early = early
        """Seconds before the user's turn end from which an onset matches."""
        self.max_delay = max_delay
        """Seconds after the user's turn end until which an onset matches."""
        self.yield_window = yield_window
        self.stop_allowance = stop_allowance

    def settings(self) -> dict[str, Any]:
        return {"early": self.early, "max_delay": self.max_delay,
                "yield_window": self.yield_window, "stop_allowance": self.stop_allowance,
                "next_event": "next_user_onset (dialogue), else input_end",
                "turn_end": "reference_turn_end (dialogue), else input_end"}

    def definition(self) -> Definition:
        """``paper``: TurnBench's described metric (no released code is reproduced)."""
        return "paper"

    def dimensions(self, event_type: str) -> tuple[str, ...]:
        """The event type's own dimension and ``background``, scored on an event of any of
        these types whose metadata annotates background speech."""
        own = {"TURN_SHIFT": "turn_end", "TURN_HOLD": "pause", "SHORTPAUSE": "pause",
               "BC": "user_backchanneling", "BARGE_IN": "user_barge_in"}.get(event_type)
        return (own, "background") if own else ()

    def score(self, event: EventView) -> EventScore:
        model = [s for s in event.segments if s.channel == SYSTEM]
        kind = event.event_type
        dims: list[DimensionScore] = []
        if kind == "TURN_SHIFT":
            dims.append(self.turn_end(event, model))
        elif kind in ("TURN_HOLD", "SHORTPAUSE"):
            dims.append(self.pause(event, model))
        elif kind == "BC":
            dims.append(self.backchannel(event, model))
        elif kind == "BARGE_IN":
            dims.append(self.barge_in(event, model))
        background = self.background(event, model)
        if background is not None:
            dims.append(background)
        return EventScore(event, self.name, self.version, tuple(dims))

    # -- rules ---------------------------------------------------------------------------------

    def window(self, event: EventView) -> tuple[float, float, str]:
        """The matching window ``[lo, hi]`` of a turn end (wav seconds) and what bounds ``hi``
        (``max_delay``, ``next_user_onset`` or ``input_end``)."""
        t = event.event_start - event.input_start
        bounds = [(t + self.max_delay, "max_delay"),
                  (event.input_end - event.input_start, "input_end")]
        nxt = event.metadata.get("next_user_onset")
        if isinstance(nxt, (int, float)) and not isinstance(nxt, bool):
            bounds.append((float(nxt) - event.input_start, "next_user_onset"))
        hi, by = min(bounds, key=lambda b: b[0])
        return t - self.early, hi, by

    def turn_end(self, event: EventView, model: list[SpeechSegment]) -> DimensionScore:
        t = event.event_start - event.input_start
        lo, hi, by = self.window(event)
        onsets = sorted(s.start for s in model
                        if lo - TOL <= s.start <= hi + TOL)
        info: dict[str, Any] = {"user_turn_end": t, "window": [lo, hi], "window_end_by": by}
        if not onsets:
            return DimensionScore("turn_end", {"match ↑": 0, "latency ↓": None},
                                  {**info, "miss_type": "no_onset_in_window"})
        return DimensionScore("turn_end", {"match ↑": 1, "latency ↓": onsets[0] - t},
                              {**info, "onset": onsets[0], "miss_type": "none"})

    def pause(self, event: EventView, model: list[SpeechSegment]) -> DimensionScore:
        start = event.event_start - event.input_start
        end = event.event_end - event.input_start
        onsets = [s.start for s in model if start - TOL <= s.start < end - TOL]
        return DimensionScore("pause", {"false_positive ↓": int(bool(onsets))},
                              {"pause": [start, end], "onsets": len(onsets),
                               "miss_type": "onset_in_pause" if onsets else "none"})

    @staticmethod
    def _until(event: EventView, value: Any) -> float:
        """A dialogue time (``None``: unknown) in wav time, clipped to the sample's end; the
        sample's end when unknown."""
        w = event.input_end - event.input_start
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return min(w, float(value) - event.input_start)
        return w

    def backchannel(self, event: EventView, model: list[SpeechSegment]) -> DimensionScore:
        a = event.event_start - event.input_start
        b = event.event_end - event.input_start
        turn_end = self._until(event, event.metadata.get("reference_turn_end"))
        cost = false_stop(model, a, b, turn_end, event.input_end - event.input_start,
                          self.yield_window)
        return _stop_dimension("user_backchanneling", "false_stop ↓", "stop_latency", cost)

    def barge_in(self, event: EventView, model: list[SpeechSegment]) -> DimensionScore:
        a = event.event_start - event.input_start
        cost = missed_stop(model, a, event.input_end - event.input_start, self.stop_allowance)
        return _stop_dimension("user_barge_in", "missed_stop ↓", "stop_latency ↓", cost)

    def background(self, event: EventView, model: list[SpeechSegment]) -> DimensionScore | None:
        """Annotated background speech (``mtr_round``'s ``background_span``, else
        ``background_start`` / ``background_end`` of the metadata; dialogue seconds): a false
        stop for it is charged to the annotated reply's end."""
        annotated = event.metadata.get("mtr_round")
        round_ = annotated if isinstance(annotated, Mapping) else {}
        span = round_.get("background_span")
        start, end = (span if isinstance(span, list) and len(span) == 2 else
                      (event.metadata.get("background_start"),
                       event.metadata.get("background_end")))
        if start is None or end is None:
            return None
        reply = round_.get("reply_span")
        reply_end = reply[1] if isinstance(reply, list) and len(reply) == 2 else None
        cost = false_stop(model, float(start) - event.input_start,
                          float(end) - event.input_start,
                          self._until(event, reply_end),
                          event.input_end - event.input_start, self.yield_window)
        return _stop_dimension("background", "false_stop ↓", "stop_latency", cost)


def _stop_dimension(dimension: str, verdict: str, latency: str,
                    cost: StopCost | None) -> DimensionScore:
    if cost is None:
        return DimensionScore(dimension, {verdict: None, latency: None},
                              {"speaking_at_onset": False, "miss_type": "not_speaking"},
                              {"penalty_s ↓": None})
    return DimensionScore(
        dimension, {verdict: cost.wrong, latency: cost.stop_latency},
        {"speaking_at_onset": True, "stop": cost.stop, "charged_to": cost.charged_to,
         "censored": cost.censored, "miss_type": "wrong_stop" if cost.wrong else "none"},
        {"penalty_s ↓": cost.penalty_s})
