"""The ``mtr`` timing variant: MTR-DuplexBench's per-round success rules over our runs.

The rules are :mod:`duplexeval.metrics.timing._mtr_rules` (MTR's code).  Times are seconds from the
output wav's start (``input_start``); ``T`` the event start, ``E`` the event end, ``W`` the
window end (``input_end``).  MTR judges a round inside its reference windows; for an event
sample the user window is the user turn before the event and the assistant window runs from
the user's end to the end of the sample (M3's 10 s window; MTR runs it to the end of the next
user round).  Success rates are the ``success ↑`` mean; each event's round in its dialogue
(the ``round`` of the event metadata, :mod:`duplexeval.metrics.content._rounds`) gives the
round-by-round curve.

``TURN_SHIFT`` -> ``smooth_turn_taking``::

    user    |==== user turn ====|
    system                      |   w w w w w       success = not speaking in [0, T]
            0                   T              W              and speaking in [T, W]
    latency = first system segment ending after T: its start - T, floored at 0

``TURN_HOLD`` / ``SHORTPAUSE`` -> ``pause_handling``: success = not speaking in
``[T, E + 1 s]`` (the pause and one second after it)::

    user    ====|  pause  |=====
    system      |  (silent)   | 1 s |

``BARGE_IN`` -> ``interruption``: success = not speaking during the interruption ``[T, E]``
and speaking after it, in ``[E, W]``; latency from ``E``.

``BC`` -> ``backchannel``: the system's backchannel frequency (segments under 3 s with at most
two words, per second of its speech) over the sample; MTR reports frequency, not a success.

Background speech (a round annotated with a ``background_span`` by a multi-round suite,
``mtr_round`` in the event metadata, or ``background_start`` / ``background_end``; dialogue
seconds) -> ``background``: success = the system keeps one continuous stretch of speech over
``[start + 0.3 s, end]``.

Where a suite annotates the round (``mtr_round``, :mod:`duplexeval.data._mtr_record`), the assistant
window ends where the round's window ends (the end of the next user turn), clipped to the
sample, as MTR defines it.

MTR's summary says GPT-4o judges feature success; its released code applies these rules, which
are the default here.  Every event type needs the words of both channels, so the variant asks
for full transcripts (:attr:`full_transcript_events`).

Passes (``run --repeats``: pass@k, pass^k, :mod:`duplexeval.metrics._stability`): MTR's own
verdict, ``success ↑ = 1``, for smooth_turn_taking, pause_handling, interruption and
background (on whichever event annotates it); the backchannel frequency is a rate, not a
verdict, so BC gets no pass rates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from duplexeval.analysis._segments import SpeechSegment
from duplexeval.metrics._base import (
    INPUT_CHANNEL,
    SYSTEM_CHANNEL,
    DimensionScore,
    EventScore,
    EventView,
    MeasurementOrigin,
    PassRule,
    TimingVariant,
)
from duplexeval.metrics.timing._mtr_rules import (
    backchannel_frequency,
    background_success,
    latency,
    speaking,
)

__all__ = ["MtrTiming"]

SYSTEM = 1
PAUSE_AFTER_S = 1.0


ORIGINS: dict[str, MeasurementOrigin] = {
    "smooth_turn_taking/latency ↓": MeasurementOrigin(
        f"the user's turn end (event_start, annotated) {INPUT_CHANNEL}",
        f"the start of the first system segment ending after it, floored at it "
        f"{SYSTEM_CHANNEL}"),
    "interruption/latency ↓": MeasurementOrigin(
        f"the interruption end (event_end, annotated) {INPUT_CHANNEL}",
        f"the start of the first system segment ending after it, floored at it "
        f"{SYSTEM_CHANNEL}"),
}
"""Where each mtr latency starts and ends."""


def _success(dimension: str, meaning: str) -> PassRule:
    return PassRule(dimension, "success ↑", 1, f"{meaning} (success ↑ = 1)")


_HELD = _success("pause_handling", "silent over the pause and 1 s after it")
PASS_RULES: dict[str, PassRule] = {
    "TURN_SHIFT": _success("smooth_turn_taking", "silent in the user's turn, speaking after it"),
    "TURN_HOLD": _HELD, "SHORTPAUSE": _HELD,
    "BARGE_IN": _success("interruption", "silent during the interruption, speaking after it"),
    "*/background": _success("background", "kept speaking through the background speech"),
}
"""A pass per MTR dimension (see the module docstring)."""

class MtrTiming(TimingVariant):
    """MTR-DuplexBench rules over M3 events (see the module docstring)."""

    name: ClassVar[str] = "mtr"
    version: ClassVar[str] = "1"
    source: ClassVar[str] = "MTR-DuplexBench, ZhangHe0918/MTR-DuplexBench Eval/ @6d7c125"
    measurement_origins: ClassVar[Mapping[str, MeasurementOrigin]] = ORIGINS
    pass_rules: ClassVar[Mapping[str, PassRule]] = PASS_RULES
    full_transcript_events: ClassVar[tuple[str, ...]] = (
        "TURN_SHIFT", "TURN_HOLD", "SHORTPAUSE", "BARGE_IN", "BC")

    def dimensions(self, event_type: str) -> tuple[str, ...]:
        return {"TURN_SHIFT": ("smooth_turn_taking",), "TURN_HOLD": ("pause_handling",),
                "SHORTPAUSE": ("pause_handling",), "BARGE_IN": ("interruption",),
                "BC": ("backchannel",)}.get(event_type, ())

    def settings(self) -> dict[str, Any]:
        return {"pause_after_s": PAUSE_AFTER_S, "assistant_window": "user end to sample end"}

    def score(self, event: EventView) -> EventScore:
        model = [s for s in event.segments if s.channel == SYSTEM]
        t = event.event_start - event.input_start
        e = event.event_end - event.input_start
        w = event.input_end - event.input_start
        kind = event.event_type
        window_end = self._window_end(event, w)
        dims: list[DimensionScore] = []
        if kind == "TURN_SHIFT":
            ok = not speaking(model, 0.0, t) and speaking(model, t, window_end)
            dims.append(self._dim("smooth_turn_taking", ok, latency(model, t), model))
        elif kind in ("TURN_HOLD", "SHORTPAUSE"):
            dims.append(self._dim("pause_handling", not speaking(model, t, e + PAUSE_AFTER_S),
                                  None, model))
        elif kind == "BARGE_IN":
            ok = not speaking(model, t, e) and speaking(model, e, window_end)
            dims.append(self._dim("interruption", ok, latency(model, e), model))
        elif kind == "BC":
            dims.append(DimensionScore("backchannel",
                                       {"frequency": backchannel_frequency(model)}))
        background = self._background(event, model)
        if background is not None:
            dims.append(background)
        return EventScore(event, self.name, self.version, tuple(dims))

    @staticmethod
    def _dim(dimension: str, success: bool, lat: float | None,
             model: list[SpeechSegment]) -> DimensionScore:
        values: dict[str, float | int | None] = {"success ↑": int(success)}
        if lat is not None:
            values["latency ↓"] = lat
        return DimensionScore(dimension, values,
                              extras={"frequency": backchannel_frequency(model)})

    @staticmethod
    def _window_end(event: EventView, sample_end: float) -> float:
        """The assistant window's end in wav time: the annotated round window's end
        (``mtr_round``) clipped to the sample, else the sample's end."""
        annotated = event.metadata.get("mtr_round")
        window = annotated.get("window") if isinstance(annotated, dict) else None
        if isinstance(window, list) and len(window) == 2:
            return min(sample_end, float(window[1]) - event.input_start)
        return sample_end

    @staticmethod
    def _background(event: EventView, model: list[SpeechSegment]) -> DimensionScore | None:
        annotated = event.metadata.get("mtr_round")
        span = annotated.get("background_span") if isinstance(annotated, dict) else None
        start, end = (span if isinstance(span, list) and len(span) == 2 else
                      (event.metadata.get("background_start"),
                       event.metadata.get("background_end")))
        if start is None or end is None:
            return None
        a, b = float(start) - event.input_start, float(end) - event.input_start
        return DimensionScore("background", {"success ↑": int(background_success(model, a, b))})
