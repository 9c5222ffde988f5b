"""The ``m3`` timing variant: M3-DuplexBench's timing evaluators, value for value.

Source: M3-DuplexBench (paper: seeds 000, section 4.2.1 and Table 5; code:
nttcslab-sp/m3-duplexbench ``m3_duplexbench/evaluation/dimensions/timing.py`` at 6e3abb4).
Re-implemented from the definitions; values equal the official code's on any input, including
its exact float comparisons and its quirks, which are kept on purpose and listed per rule.

Conventions: times are seconds from the start of the output wav (``input_start``).  The model
is channel 1; only its segments are read.  ``T`` below is ``event_start - input_start``.
Diagrams: ``u`` user speech, ``M`` model segments, ``|`` reference times.

Smooth turn-taking (TURN_SHIFT; ``tor ↑``, ``latency ↓``)::

    user  uuuuuuuuuuuuu|            T = user's turn end
    model       MMM    |  MMMMM     candidate: end > T and start >= T - 0.4 (both inclusive
                       |<>|          as written); the one whose start is closest to T (absolute
                    T-0.4  latency   distance: an early start can beat a later one) is the turn

  No candidate: TOR 0, latency None, and ``tor_err_silence`` (no segment ends after ``T``) or
  ``tor_err_long_overlap`` (some do, but all started before ``T - 0.4``).  No model-side
  backchannel filter here (the official ``allow_short_utterance=True``).  Extra (paper):
  ``human_latency = event_end - event_start`` and ``latency_abs_err_to_human``, whose mean is
  the MAE to human timing.

Pause handling (TURN_HOLD, SHORTPAUSE; ``tor ↓``, ``latency ↑``)::

    user  uuuuuuu|           |uuuu    the *reference* pause [event_start, event_end] - the model
    model          MMMMMMM            hears silence there - is what overlaps are tested against
                 |<->|  latency = first overlapping segment's start - pause start

  Overlapping: ``end > pause_start`` and ``start < pause_end``, not a model backchannel
  (``duration < 1.0 and words < 4``; words are the segment's ``chunks``).  ``tor ↓`` = 1 if any.
  Otherwise the latency is to the earliest segment of any length starting at or after the pause
  end, or ``input_end - event_start`` when none.  ``latency_wo_long_overlap`` is None when an
  overlapping segment started more than 0.4 s before the pause; ``tor_err_normal`` marks a
  takeover without such a long overlap.

  Latency conventions (higher is better: the model waits longer before speaking into a held
  pause).  ``latency ↑`` is the *official* value: a system that stays silent for the whole
  window gets the window length (10 s for TURN_HOLD), the best possible score, so a silent
  system tops the official column; ``info["latency_fallback"]`` is True for those events.
  Extra (paper, section 4.2.1: "computed over samples with a response onset no later than
  Delta s after the event onset; samples without a response by this time are excluded"):
  ``latency_responders ↑`` = the same first response onset (a non-backchannel segment
  overlapping the pause, else the first segment starting at or after the pause end) minus the
  pause start, only when that onset is at most ``response_window`` (Delta = 10 s, inclusive
  as 4.2.1 words it, with the 1e-6 s time tolerance; the appendix's half-open window differs
  only at exactly Delta) after the pause start, else None.  Its aggregate ``n`` counts the
  responders.  Negative values (a long overlap into the pause) are responses and count::

      user  uuuuuuu|  |uuuu            pause [2, 3], window to 12
      model               MMM          response at 5.0: official 3.0, responders 3.0
      model                            silent:          official 10.0, responders None

User backchannel (BC; ``stop_latency ↑``) and barge-in (BARGE_IN; ``stop_latency ↓``)::

    user  |uu              onset = event_start - input_start (usually 0)
    model MMMMMMMMM|       target: the earliest-starting segment with start < onset + 0.5
          |<------>|       stop_latency = target end - onset; no end test, no BC filter:
                           a segment that ended before the onset still counts

  No target: ``stop_latency`` None and ``is_speaking`` 0.  Since segments merge gaps < 0.5 s,
  "stopped" means the first silence of 0.5 s or more.

  ``paper=True`` applies the paper's definition instead (stop latency only if the model speaks
  at the onset; :meth:`M3Timing.definition` is then ``paper``)::

    user  |uu              target: the segment with start <= onset < end
    model MMMMMMMMM|       (a segment starting after the onset, or one that ended before
          |<------>|       it, is no target: stop_latency None, is_speaking 0)

Passes (``run --repeats``: pass@k, pass^k, :mod:`duplexeval.metrics._stability`): a TURN_SHIFT
passes when the system took the turn (``tor ↑ = 1``), a TURN_HOLD or SHORTPAUSE when it did not
take over (``tor ↓ = 0``); BC and BARGE_IN have only a stop latency, with no threshold in M3,
so they get no pass rates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from duplexeval.analysis._segments import SpeechSegment
from duplexeval.events import EVENT_TO_DIMENSION
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
from duplexeval.timeline import TOL

__all__ = ["M3_DIMENSIONS", "M3Timing"]

M3_DIMENSIONS: dict[str, str] = EVENT_TO_DIMENSION
"""Event type -> official timing dimension (from :data:`~duplexeval.events.TASK_TABLE`)."""


_PAUSE = MeasurementOrigin(
    f"the pause start (event_start, the annotated user turn end) {INPUT_CHANNEL}",
    f"the start of the first non-backchannel system segment overlapping the pause, else of the "
    f"first system segment at or after the pause end, else input_end, {SYSTEM_CHANNEL}")
_STOP = MeasurementOrigin(
    f"the user's onset (event_start, annotated) {INPUT_CHANNEL}",
    f"the end of the earliest system segment starting before onset + stop_grace (its first "
    f"silence of 0.5 s or more) {SYSTEM_CHANNEL}")
ORIGINS: dict[str, MeasurementOrigin] = {
    "smooth_turn_taking/latency ↓": MeasurementOrigin(
        f"the user's turn end (event_start, annotated) {INPUT_CHANNEL}",
        f"the start of the system segment taken as the turn (VAD) {SYSTEM_CHANNEL}"),
    "smooth_turn_taking/human_latency": MeasurementOrigin(
        "the user's turn end (event_start) in the reference dialogue",
        "the reference system's turn start (event_end) in the reference dialogue"),
    "pause_handling/latency ↑": _PAUSE,
    "pause_handling/latency_wo_long_overlap": _PAUSE,
    "pause_handling/latency_responders ↑": _PAUSE,
    "user_backchanneling/stop_latency ↑": _STOP,
    "user_barge_in/stop_latency ↓": _STOP,
}
"""Where each m3 latency starts and ends (``latency_abs_err_to_human`` is a difference of two
of them, not an interval)."""

_HELD = PassRule("pause_handling", "tor ↓", 0, "kept the floor to the user: no take-over "
                 "into the pause (tor ↓ = 0)")
PASS_RULES: dict[str, PassRule] = {
    "TURN_SHIFT": PassRule("smooth_turn_taking", "tor ↑", 1,
                           "took the turn after the user's turn end (tor ↑ = 1)"),
    "TURN_HOLD": _HELD,
    "SHORTPAUSE": _HELD,
}
"""A pass per M3 event type, from M3's own take-over verdicts (TOR).  BC and BARGE_IN have no
binary verdict in M3 (only a stop latency, with no threshold), so they get no pass rates."""


def _target_json(seg: SpeechSegment | None) -> dict[str, Any] | None:
    if seg is None:
        return None
    return {"channel": seg.channel, "text": seg.text, "timestamp": [seg.start, seg.end]}


class M3Timing(TimingVariant):
    """M3-DuplexBench timing metrics (official code, 2026 release)."""

    name: ClassVar[str] = "m3"
    version: ClassVar[str] = "1"
    source: ClassVar[str] = ("M3-DuplexBench, nttcslab-sp/m3-duplexbench "
                             "evaluation/dimensions/timing.py @6e3abb4")
    measurement_origins: ClassVar[Mapping[str, MeasurementOrigin]] = ORIGINS
    pass_rules: ClassVar[Mapping[str, PassRule]] = PASS_RULES

    def __init__(self, model_channel: int = 1, max_overlap: float = 0.4,
                 bc_max_duration: float = 1.0, bc_max_words: int = 4,
                 stop_grace: float = 0.5, response_window: float = 10.0,
                 paper: bool = False) -> None:
        self.paper = paper
        """The paper's stop latency (speaking at the onset) instead of the code's grace."""
        self.model_channel = model_channel
        self.max_overlap = max_overlap
        self.bc_max_duration = bc_max_duration
        self.bc_max_words = bc_max_words
        self.stop_grace = stop_grace
        self.response_window = response_window
        """Delta (s): the paper's responders-only pause latency counts a response only when it
        starts at most this long after the pause start (extra metric; official values
        unaffected)."""

    def settings(self) -> dict[str, Any]:
        return {"model_channel": self.model_channel, "max_overlap": self.max_overlap,
                "bc_max_duration": self.bc_max_duration, "bc_max_words": self.bc_max_words,
                "stop_grace": self.stop_grace, "response_window": self.response_window,
                "paper": self.paper}

    def definition(self) -> Definition:
        """``official code`` (M3's released code), or ``paper`` with ``paper=True``."""
        return "paper" if self.paper else "official code"

    def dimensions(self, event_type: str) -> tuple[str, ...]:
        dim = M3_DIMENSIONS.get(event_type)
        return (dim,) if dim else ()

    def score(self, event: EventView) -> EventScore:
        model = [s for s in event.segments if s.channel == self.model_channel]
        dims: tuple[DimensionScore, ...] = ()
        kind = event.event_type
        if kind == "TURN_SHIFT":
            dims = (self.smooth_turn_taking(event, model),)
        elif kind in ("TURN_HOLD", "SHORTPAUSE"):
            dims = (self.pause_handling(event, model),)
        elif kind in ("BC", "BARGE_IN"):
            dims = (self.stop(event, model, barge_in=kind == "BARGE_IN"),)
        return EventScore(event, self.name, self.version, dims)

    # -- rules ---------------------------------------------------------------------------------

    def _is_backchannel(self, seg: SpeechSegment) -> bool:
        duration = max(0.0, seg.end - seg.start)
        return duration < self.bc_max_duration and len(seg.chunks) < self.bc_max_words

    def smooth_turn_taking(self, event: EventView, model: Iterable[SpeechSegment],
                           ) -> DimensionScore:
        t = event.event_start - event.input_start
        candidates: list[SpeechSegment] = []
        silence = True
        for seg in model:
            if seg.end <= t:
                continue
            silence = False
            if seg.start < t - self.max_overlap:
                continue
            candidates.append(seg)
        human = event.event_end - event.event_start
        if not candidates:
            miss = "silence" if silence else "long_overlap"
            return DimensionScore(
                "smooth_turn_taking",
                {"tor ↑": 0, "latency ↓": None,
                 "tor_err_silence": int(miss == "silence"),
                 "tor_err_long_overlap": int(miss == "long_overlap")},
                {"user_turn_end": t, "target_segment": None, "miss_type": miss},
                {"human_latency": human, "latency_abs_err_to_human": None})
        target = min(candidates, key=lambda s: abs(s.start - t))
        latency = target.start - t
        return DimensionScore(
            "smooth_turn_taking",
            {"tor ↑": 1, "latency ↓": latency, "tor_err_silence": 0, "tor_err_long_overlap": 0},
            {"user_turn_end": t, "target_segment": _target_json(target), "miss_type": "none"},
            {"human_latency": human, "latency_abs_err_to_human": abs(latency - human)})

    def pause_handling(self, event: EventView, model: Iterable[SpeechSegment]) -> DimensionScore:
        """TURN_HOLD / SHORTPAUSE.  ``latency ↑`` (higher is better) is the official value:
        ``input_end - event_start`` (the window, 10 s for a hold) when the model never speaks,
        flagged ``info["latency_fallback"]``; the extra ``latency_responders ↑`` is the
        paper's (section 4.2.1): the same latency for responders within ``response_window``,
        None otherwise (see the module docstring)."""
        model = list(model)
        pause_start = event.event_start - event.input_start
        pause_end = event.event_end - event.input_start
        overlaps: list[SpeechSegment] = []
        long_overlap = False
        for seg in model:
            if seg.end <= pause_start or seg.start >= pause_end:
                continue
            if self._is_backchannel(seg):
                continue
            overlaps.append(seg)
            if seg.start < pause_start - self.max_overlap:
                long_overlap = True
        overlaps.sort(key=lambda s: s.start)
        tor = 1 if overlaps else 0
        takeover = tor == 1 and not long_overlap
        fallback = False
        if tor:
            latency = overlaps[0].start - pause_start
        else:
            later = [s.start for s in model if s.start >= pause_end]
            fallback = not later
            latency = (min(later) - pause_start if later
                       else event.input_end - event.event_start)
        responded = not fallback and latency <= self.response_window + TOL
        miss = "long_overlap" if long_overlap else "takeover" if takeover else "none"
        return DimensionScore(
            "pause_handling",
            {"tor ↓": tor, "latency ↑": latency,
             "latency_wo_long_overlap": None if long_overlap else latency,
             "tor_err_normal": int(takeover), "tor_err_long_overlap": int(long_overlap)},
            {"pause_start": pause_start, "pause_end": pause_end, "miss_type": miss,
             "latency_fallback": fallback},
            {"latency_responders ↑": latency if responded else None})

    def stop(self, event: EventView, model: Iterable[SpeechSegment], barge_in: bool,
             ) -> DimensionScore:
        onset = event.event_start - event.input_start
        if self.paper:
            candidates = [s for s in model if s.start <= onset + TOL and s.end > onset]
        else:
            candidates = [s for s in model if s.start < onset + self.stop_grace]
        dim = "user_barge_in" if barge_in else "user_backchanneling"
        key = "stop_latency ↓" if barge_in else "stop_latency ↑"
        if not candidates:
            return DimensionScore(dim, {key: None, "is_speaking": 0}, {"target_segment": None})
        target = min(candidates, key=lambda s: s.start)
        return DimensionScore(dim, {key: target.end - onset, "is_speaking": 1},
                              {"target_segment": _target_json(target)})
