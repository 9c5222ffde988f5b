"""The ``fdb-v1`` timing variant: Full-Duplex-Bench v1/v1.5 definitions over our runs' events.

The rules are :mod:`duplexeval.metrics.timing._fdb_rules` (FDB's code, value for value); this module
maps M3 events onto FDB's tasks.  Times are seconds from the output wav's start
(``input_start``); channel 0 is the user as fed, channel 1 the system; ``T`` is the event start
relative to the wav.  FDB scores whole output files, so the system's words over the whole
sample count (including any speech during the user's turn), as its evaluators read them.

``TURN_SHIFT`` -> ``smooth_turn_taking`` (``eval_smooth_turn_taking.py``)::

    user    uuuuuuuuuuu|                 TOR = 1 if the system's words span >= 1 s or are
    system             |  w w w w         more than 3 (the 1 s / 3-word rule), else 0
                       T                  latency = first word start - T, clamped at 0 (takeovers)

``TURN_HOLD`` / ``SHORTPAUSE`` -> ``pause_handling`` (``eval_pause_handling.py``): TOR (lower is
better) by the same rule over the whole sample; no pause window.

``BARGE_IN`` -> ``user_interruption`` (``eval_user_interruption.py``): FDB transcribes only the
audio after the interruption ends, so only words starting at or after the barge-in end ``E``
(``event_end``) count; TOR (higher is better) by the rule, latency = first word start - E,
clamped at 0::

    user    uuuu|~~~~~ barge-in ~~~~|
    system  wwwwwwww                |   w w w w
                                    E   (words before E are not transcribed by FDB)

``BC`` and ``BARGE_IN`` -> ``overlap_timing`` (v1.5 ``get_timing.py``): user segments merged
across gaps <= 0.6 s and system segments across gaps <= 0.5 s (VAD segments, our analysis);
``stop_latency`` = the mean length of their overlaps, ``response_latency`` = the mean gap from a
user segment's end to the next system start (per-sample lists in ``info``).

``backchannel`` (the model as listener, ``eval_backchannel.py``) on an item that annotates it: a
FLEXI model-backchannel item's anchor (``flexi`` in the event metadata, scenario
``model_backchannel``, with its ``reference_backchannels`` distribution).  The system's VAD
segments during the user's narrative ``[0, T]`` are classified (``compat``, the default: the
code's "last segment wins" and short turns listed; else the paper's reading); ``freq`` =
backchannels / narrative seconds; JSD against the reference bins covering the sample,
renormalised: scipy's distance (code), 1 without backchannels::

    user    ======= narrative =======|T
    system      mm        uh-huh     |        two backchannels: freq 2 / T

Words: the rule needs every word of the system channel, so :attr:`full_transcript_events` asks
the analysis for full transcripts of these event types (``duplexeval score --variant fdb-v1``
does so).

Passes (``run --repeats``: pass@k, pass^k, :mod:`duplexeval.metrics._stability`), from FDB's
take-over verdicts: smooth_turn_taking ``tor ↑ = 1`` (took the turn), pause_handling
``tor ↓ = 0`` (did not take over), user_interruption ``tor ↑ = 1`` (answered after the
barge-in), backchannel ``TOR ↓ = 0`` (took no turn during the narrative); overlap_timing has
only latencies, with no threshold in FDB, so it gets no pass rates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

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
from duplexeval.metrics.timing._fdb_rules import (
    JSD_WINDOW_S,
    MODEL_MERGE_GAP_S,
    USER_MERGE_GAP_S,
    Word,
    backchannel_jsd,
    backchannels_code,
    backchannels_paper,
    interval_lengths,
    mean_or_none,
    merge_segments,
    response_latency_intervals,
    stop_latency_intervals,
    takeover,
)
from duplexeval.timeline import Span

__all__ = ["FdbV1Timing"]

USER, SYSTEM = 0, 1


def _words(event: EventView, channel: int, after: float | None = None) -> list[Word]:
    chunks = sorted((c for s in event.segments if s.channel == channel for c in s.chunks),
                    key=lambda c: (c.start, c.end))
    return [Word(c.text, c.start, c.end) for c in chunks if after is None or c.start >= after]


def _segments(event: EventView, channel: int) -> list[Span]:
    return [s.span for s in event.segments if s.channel == channel]


ORIGINS: dict[str, MeasurementOrigin] = {
    "smooth_turn_taking/latency ↓": MeasurementOrigin(
        f"the user's turn end (event_start, annotated) {INPUT_CHANNEL}",
        f"the system's first ASR word start, clamped at the turn end {SYSTEM_CHANNEL}"),
    "user_interruption/latency ↓": MeasurementOrigin(
        f"the barge-in end (event_end, annotated) {INPUT_CHANNEL}",
        f"the system's first ASR word start at or after it {SYSTEM_CHANNEL}"),
    "overlap_timing/stop_latency ↓": MeasurementOrigin(
        f"an overlap's start: a user VAD segment (merged across 0.6 s) starting while the "
        f"system speaks, {INPUT_CHANNEL}",
        f"the end of that overlap (the system segment's end, merged across 0.5 s) "
        f"{SYSTEM_CHANNEL}; the mean over the sample"),
    "overlap_timing/response_latency ↓": MeasurementOrigin(
        f"a user VAD segment's end {INPUT_CHANNEL}",
        f"the next system VAD segment's start {SYSTEM_CHANNEL}; the mean over the sample"),
}
"""Where each fdb-v1 latency starts and ends."""

_HELD = PassRule("pause_handling", "tor ↓", 0, "did not take over the pause (tor ↓ = 0)")
PASS_RULES: dict[str, PassRule] = {
    "TURN_SHIFT/smooth_turn_taking": PassRule("smooth_turn_taking", "tor ↑", 1,
                                              "took the turn (tor ↑ = 1)"),
    "TURN_SHIFT/backchannel": PassRule("backchannel", "TOR ↓", 0,
                                       "took no turn during the narrative (TOR ↓ = 0)"),
    "TURN_HOLD": _HELD, "SHORTPAUSE": _HELD,
    "BARGE_IN/user_interruption": PassRule("user_interruption", "tor ↑", 1,
                                           "answered after the barge-in (tor ↑ = 1)"),
}
"""A pass per FDB task with a take-over verdict (see the module docstring)."""

class FdbV1Timing(TimingVariant):
    """Full-Duplex-Bench v1/v1.5 timing over M3 events (see the module docstring)."""

    name: ClassVar[str] = "fdb-v1"
    version: ClassVar[str] = "1"
    source: ClassVar[str] = ("Full-Duplex-Bench v1/v1.5, DanielLin94144/Full-Duplex-Bench "
                             "v1_v1.5/evaluation @d7336bd")
    measurement_origins: ClassVar[Mapping[str, MeasurementOrigin]] = ORIGINS
    pass_rules: ClassVar[Mapping[str, PassRule]] = PASS_RULES
    full_transcript_events: ClassVar[tuple[str, ...]] = (
        "TURN_SHIFT", "TURN_HOLD", "SHORTPAUSE", "BARGE_IN")

    def __init__(self, compat: bool = True) -> None:
        self.compat = compat

    def definition(self) -> Definition:
        """``official code`` (the default, FDB's released code) or ``paper``."""
        return "official code" if self.compat else "paper"

    def dimensions(self, event_type: str) -> tuple[str, ...]:
        return {"TURN_SHIFT": ("smooth_turn_taking", "backchannel"),
                "TURN_HOLD": ("pause_handling",),
                "SHORTPAUSE": ("pause_handling",), "BC": ("overlap_timing",),
                "BARGE_IN": ("user_interruption", "overlap_timing")}.get(event_type, ())

    def settings(self) -> dict[str, Any]:
        return {"user_merge_gap_s": USER_MERGE_GAP_S, "model_merge_gap_s": MODEL_MERGE_GAP_S,
                "compat": self.compat}

    def score(self, event: EventView) -> EventScore:
        t = event.event_start - event.input_start
        dims: list[DimensionScore] = []
        kind = event.event_type
        record = event.metadata.get("flexi")
        if isinstance(record, dict) and record.get("scenario") == "model_backchannel":
            dims.append(self._backchannel(event, record, t))
        elif kind == "TURN_SHIFT":
            dims.append(self._takeover("smooth_turn_taking", "tor ↑", "latency ↓",
                                       _words(event, SYSTEM), t))
        elif kind in ("TURN_HOLD", "SHORTPAUSE"):
            dims.append(self._takeover("pause_handling", "tor ↓", None,
                                       _words(event, SYSTEM), None))
        if kind == "BARGE_IN":
            end = event.event_end - event.input_start
            dims.append(self._takeover("user_interruption", "tor ↑", "latency ↓",
                                       _words(event, SYSTEM, after=end), end))
        if kind in ("BC", "BARGE_IN"):
            dims.append(self._overlap(event))
        return EventScore(event, self.name, self.version, tuple(dims))

    @staticmethod
    def _takeover(dimension: str, tor_name: str, latency_name: str | None,
                  words: Sequence[Word], reference: float | None) -> DimensionScore:
        result = takeover(words, reference)
        values: dict[str, float | int | None] = {tor_name: result.tor}
        info: dict[str, Any] = {"words": len(words)}
        if latency_name is not None:
            values[latency_name] = result.latency
            info["latency_raw"] = result.latency_raw
        return DimensionScore(dimension, values, info)

    @staticmethod
    def _overlap(event: EventView) -> DimensionScore:
        user = merge_segments(_segments(event, USER), USER_MERGE_GAP_S)
        model = merge_segments(_segments(event, SYSTEM), MODEL_MERGE_GAP_S)
        stops = stop_latency_intervals(user, model)
        responses = response_latency_intervals(user, model)
        return DimensionScore(
            "overlap_timing",
            {"stop_latency ↓": mean_or_none(interval_lengths(stops)),
             "response_latency ↓": mean_or_none(interval_lengths(responses))},
            {"latency_stop_list": stops, "latency_resp_list": responses})

    def _backchannel(self, event: EventView, record: dict[str, Any], t: float) -> DimensionScore:
        segments = [Span(s.start, min(s.end, t)) for s in event.segments
                    if s.channel == SYSTEM and s.start < t]
        words = _words(event, SYSTEM)
        found = (backchannels_code if self.compat else backchannels_paper)(segments, words)
        freq = len(found.backchannels) / t if t > 0 else None
        ref = record.get("reference_backchannels") or {}
        dist, width = ref.get("distribution"), float(ref.get("bin_s", JSD_WINDOW_S))
        jsd = None
        if isinstance(dist, list) and t > 0:
            first = int(event.input_start / width)
            part = [float(x) for x in dist[first:first + int(t / width) + 1]]
            if len(part) >= 2 and sum(part) > 0:
                jsd = backchannel_jsd(found.backchannels, t, [x / sum(part) for x in part],
                                      divergence=not self.compat)
        return DimensionScore("backchannel", {"TOR ↓": found.tor, "freq": freq, "JSD ↓": jsd},
                              {"classes": found.classes, "comparable_with_fdb": False})
