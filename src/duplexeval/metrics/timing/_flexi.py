"""The ``flexi`` timing variant: FLEXI's six scenarios scored on our runs of a FLEXI suite.

The rules are :mod:`duplexeval.metrics.timing._flexi_rules` (FLEXI's code, with the paper's
conventions as options); this module applies them to the anchor event of each item, which carries
the item's record (``flexi`` in the event metadata, :mod:`duplexeval.data._flexi_record`).  Times
are output-wav seconds (``input_start`` = 0, dialogue times minus ``input_start``); ``T`` the
event start; channel 1 the system, whose ASR words are ``w``.  Defaults follow the paper;
``compat=True`` reproduces the released code (the differences are listed per rule).

turn_taking (TURN_SHIFT anchor; ``eval_turn_taking.py``, paper eq. 7)::

    user   =======|T
    system          w w w w      TOR = the words form a turn (>= 1 s or > 3 words)
                  |<>| latency   kept only when >= 0; a negative one is a jump-in (JIR)

pause_handling (TURN_HOLD anchor; the sample mutes the user from the pause start, as M3
does)::

    user   =====|  pause  |(muted)
                ps        pe      window [ps, pe + L] (paper: the pause plus L);
                                  compat: [ps, pe + max(L - (pe - ps), 0)] (the code:
                                  max(pause, L))
    system           w              first word inside the window: TOR 1 (bad)

  ``L`` is ``latency`` if given, else the mean turn-taking latency of the run's turn_taking
  items (the paper: the model's own latency; the code: ``--latency``, default 0 under
  ``compat``).  A first word after the reference user turn's end scores 0; a silent system
  scores 0 (the code leaves it out of the denominator: ``compat``).

user_interrupt (BARGE_IN anchor, ``eval_user_interrupt.py``): the system's words overlapping
the interruption form a cluster; TTR = 1 - TOR where TOR = 1 when the cluster lasts 3 s or
more (did not yield); latency = the cluster's length (code) or the time from the interruption
start to the cluster's end (paper: when the turn was terminated).  The cluster only holds
speech inside the interruption, so an interruption shorter than 3 s is always a yield by this
rule (``flexi-en``'s last 2.3-2.7 s): there the latency says how long the system talked on.

model_interrupt (TURN_SHIFT anchor, ``eval_model_interrupt.py``): ``interrupted`` = the
system's first word starts more than 0.5 s before the user's statement ends (wanted: the
statement is an emergency or a dangerous false claim); ``reaction`` (extra) = first word start
minus the annotated ``recognisable_at``.

user_backchannel (BC anchor, ``eval_user_backchannel.py``): the system yields when its words
have a gap longer than 1 s (paper; 1.5 s under ``compat``) at the backchannel; ``resumed`` =
it did not yield and kept talking after it (the paper's coherence count k/n).

model_backchannel (TURN_SHIFT anchor at the end of the narrative,
``eval_model_backchannel.py``): the system's VAD segments during the narrative ``[0, T]`` are
classified (a segment over 3 s or a turn-like one: TOR 1); BCR = backchannels per second of
narrative; JSD against the item's reference distribution (the bins covering the sample, each
+ 1e-10 as in FLEXI's ground truth, renormalised: a window without a reference backchannel is
uniform, as FLEXI's ground truth for an item without one): the paper's base-2 divergence (0-1),
or under ``compat`` scipy's natural-log distance (at most 0.83); 1 without backchannels.  The
rule behind such a value is in ``info["jsd_rule"]``; no value (no distribution) has its reason
in ``info["reasons"]``, never a NaN.  The bundled suite's reference positions are
the project's, not FLEXI's GPT-4o ones: JSD values are not comparable with FLEXI's.

Each item is scored in runs of the protocol its record names: ``multi-ref`` for user_interrupt
and user_backchannel (the reference system turn is teacher-forced up to the user's onset, so
the system is speaking when the user acts), ``multi-gen`` for the others (under teacher
forcing the system channel is the reference until the event, so it could not cut in).  An
``interactive`` run scores all six on the realised record
(:mod:`duplexeval.runs._realised_items`): the simulated user interrupts and backchannels the
system's own speech.  The reference distribution's bins start at ``origin_s`` (default 0: the
audio's start; a realised record's: where the narrative's reference time 0 was played).

Latencies are in seconds; FLEXI's levels (1 below 150 ms, 2 below 400 ms) are in ``info``.

Passes (``run --repeats``: pass@k, pass^k, :mod:`duplexeval.metrics._stability`), one per
scenario, from its own verdict: turn_taking ``TOR ↑ = 1`` (took the turn), pause_handling
``TOR ↓ = 0`` (no take-over in the window; a silent system under ``compat``, no value, is not
judged), user_interrupt ``TTR ↑ = 1`` (yielded), model_interrupt ``interrupted ↑ = 1`` (cut in
on the statement), user_backchannel ``interrupted ↓ = 0`` (talked through it), model_backchannel
``TOR ↓ = 0`` (no turn during the narrative).  BCR and JSD are rates, not verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

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
from duplexeval.metrics.timing import _flexi_rules as rules

__all__ = ["FlexiTiming"]

SYSTEM = 1


def _words(event: EventView) -> list[rules.Word]:
    chunks = sorted((c for s in event.segments if s.channel == SYSTEM for c in s.chunks),
                    key=lambda c: (c.start, c.end))
    return [rules.Word(c.text, c.start, c.end) for c in chunks]


def _protocol_matches(event: EventView, record: dict[str, Any]) -> bool:
    """An item is scored in runs of the protocol its record names (``multi-ref`` where the
    system must already be speaking, ``multi-gen`` where it must be free to cut in); a run
    whose protocol is unknown scores every item, and so does an ``interactive`` one (the
    simulated user acts on what the system does: it interrupts or backchannels the system's
    own speech, and the system is free to cut in; its record is the realised one,
    :mod:`duplexeval.runs._realised_items`)."""
    wanted, run = record.get("protocol"), event.metadata.get("context_mode")
    return wanted is None or run is None or run == "interactive" or wanted == run


def _rel(event: EventView, value: Any) -> float:
    return float(value) - event.input_start


ORIGINS: dict[str, MeasurementOrigin] = {
    "turn_taking/latency ↓": MeasurementOrigin(
        f"the user's turn end (event_start, annotated) {INPUT_CHANNEL}",
        f"the system's first ASR word start {SYSTEM_CHANNEL}"),
    "user_interrupt/latency ↓": MeasurementOrigin(
        f"the interruption start (annotated; compat: the start of the system's word cluster "
        f"in it) {INPUT_CHANNEL}",
        f"the end of the system's word cluster inside the interruption {SYSTEM_CHANNEL}"),
    "model_interrupt/reaction_s": MeasurementOrigin(
        f"the annotated moment the statement becomes recognisable {INPUT_CHANNEL}",
        f"the system's first ASR word start {SYSTEM_CHANNEL}"),
}
"""Where each flexi latency starts and ends."""

PASS_RULES: dict[str, PassRule] = {
    "TURN_SHIFT/turn_taking": PassRule("turn_taking", "TOR ↑", 1,
                                       "took the turn after the user's turn end (TOR ↑ = 1)"),
    "TURN_SHIFT/model_interrupt": PassRule("model_interrupt", "interrupted ↑", 1,
                                           "cut in on the statement (interrupted ↑ = 1)"),
    "TURN_SHIFT/model_backchannel": PassRule(
        "model_backchannel", "TOR ↓", 0, "took no turn during the narrative (TOR ↓ = 0)"),
    "TURN_HOLD/pause_handling": PassRule("pause_handling", "TOR ↓", 0,
                                         "no take-over in the pause window (TOR ↓ = 0)"),
    "BARGE_IN/user_interrupt": PassRule("user_interrupt", "TTR ↑", 1,
                                        "yielded to the interruption (TTR ↑ = 1)"),
    "BC/user_backchannel": PassRule("user_backchannel", "interrupted ↓", 0,
                                    "talked through the backchannel (interrupted ↓ = 0)"),
}
"""A pass per FLEXI scenario (see the module docstring)."""

class FlexiTiming(TimingVariant):
    """FLEXI's scenario metrics on FLEXI suite runs (see the module docstring)."""

    name: ClassVar[str] = "flexi"
    version: ClassVar[str] = "2"
    source: ClassVar[str] = ("FLEXI (Ge et al. 2025), ChristineCHEN274/FLEXI "
                             "evaluate/eval_*.py @2247b0d")
    measurement_origins: ClassVar[Mapping[str, MeasurementOrigin]] = ORIGINS
    pass_rules: ClassVar[Mapping[str, PassRule]] = PASS_RULES
    full_transcript_events: ClassVar[tuple[str, ...]] = (
        "TURN_SHIFT", "TURN_HOLD", "BARGE_IN", "BC")
    full_transcript_channels: ClassVar[tuple[int, ...]] = (SYSTEM,)  # its rules read no user word

    def __init__(self, compat: bool = False, latency: float | None = None) -> None:
        self.compat = compat
        self.latency = latency
        self._allowance = latency if latency is not None else 0.0
        self._allowance_source = "given" if latency is not None else "default 0"

    def settings(self) -> dict[str, Any]:
        return {"compat": self.compat, "latency": self.latency,
                "pause_allowance_s": self._allowance,
                "pause_allowance_source": self._allowance_source}

    def definition(self) -> Definition:
        """``paper`` by default; ``compat`` reproduces FLEXI's released code."""
        return "compat" if self.compat else "paper"

    def dimensions(self, event_type: str) -> tuple[str, ...]:
        return {"TURN_SHIFT": ("turn_taking", "model_interrupt", "model_backchannel"),
                "TURN_HOLD": ("pause_handling",), "BARGE_IN": ("user_interrupt",),
                "BC": ("user_backchannel",)}.get(event_type, ())

    def prepare(self, events: Sequence[EventView]) -> None:
        """The pause allowance: the run's mean turn-taking latency (paper), unless given."""
        if self.latency is not None or self.compat:
            return
        latencies = []
        for e in events:
            record = e.metadata.get("flexi")
            if isinstance(record, dict) and record.get("scenario") == "turn_taking":
                tt = rules.turn_taking(_words(e), e.event_start - e.input_start)
                if tt.latency is not None and tt.latency >= 0:
                    latencies.append(tt.latency)
        if latencies:
            self._allowance = sum(latencies) / len(latencies)
            self._allowance_source = f"mean turn-taking latency of {len(latencies)} item(s)"

    def score(self, event: EventView) -> EventScore:
        record = event.metadata.get("flexi")
        dims: tuple[DimensionScore, ...] = ()
        if isinstance(record, dict) and _protocol_matches(event, record):
            rule = getattr(self, f"_{record.get('scenario')}", None)
            if rule is not None:
                dims = (rule(event, record, _words(event)),)
        return EventScore(event, self.name, self.version, dims)

    def _turn_taking(self, event: EventView, record: dict[str, Any],
                     words: list[rules.Word]) -> DimensionScore:
        tt = rules.turn_taking(words, event.event_start - event.input_start)
        kept = tt.latency if tt.latency is not None and tt.latency >= 0 else None
        info = {"latency_raw": tt.latency}
        if kept is not None:
            info["latency_level"] = rules.latency_level(kept)
        return DimensionScore("turn_taking", {"TOR ↑": tt.tor, "latency ↓": kept,
                                              "jump_in ↓": int(tt.jump_in)}, info)

    def _pause_handling(self, event: EventView, record: dict[str, Any],
                        words: list[rules.Word]) -> DimensionScore:
        ps, pe = (_rel(event, x) for x in record["pause"])
        user_end = _rel(event, record["user_turn"][1])
        window = rules.pause_window_end if self.compat else rules.pause_window_end_paper
        end = window(ps, pe, self._allowance)
        if not words:
            value = None if self.compat else 0
            return DimensionScore("pause_handling", {"TOR ↓": value}, {"silent": True})
        tor = rules.pause_takeover(words[0].start or 0.0, ps, end, user_end)
        return DimensionScore("pause_handling", {"TOR ↓": tor},
                              {"window": [ps, end], "allowance_s": self._allowance})

    def _user_interrupt(self, event: EventView, record: dict[str, Any],
                        words: list[rules.Word]) -> DimensionScore:
        ui = [_rel(event, x) for x in record["interruption"]]
        outcome = rules.interrupt_outcome(words, ui[0], ui[1], paper=not self.compat)
        latency = None
        if outcome.cluster is not None:
            start, end = outcome.cluster
            latency = end - start if self.compat else (max(end - ui[0], 0.0)
                                                       if outcome.tor == 0 else None)
        responded, response_latency = rules.new_response(words, ui[1])
        return DimensionScore("user_interrupt", {"TTR ↑": 1 - outcome.tor,
                                                 "latency ↓": latency},
                              {"responded": responded, "response_latency": response_latency})

    def _model_interrupt(self, event: EventView, record: dict[str, Any],
                         words: list[rules.Word]) -> DimensionScore:
        if not words:
            return DimensionScore("model_interrupt", {"interrupted ↑": 0}, {"silent": True})
        user_end = _rel(event, record["user_turn"][1])
        delay, interrupted = rules.model_interrupt_delay(user_end, words[0].start or 0.0)
        extras: dict[str, float | int | None] = {}
        if record.get("recognisable_at") is not None:
            extras["reaction_s"] = (words[0].start or 0.0) - _rel(event,
                                                                   record["recognisable_at"])
        return DimensionScore("model_interrupt", {"interrupted ↑": int(interrupted)},
                              {"delay": delay, "emergency": record.get("emergency")}, extras)

    def _user_backchannel(self, event: EventView, record: dict[str, Any],
                          words: list[rules.Word]) -> DimensionScore:
        b = event.event_start - event.input_start
        gap = rules.BACKCHANNEL_GAP_CODE if self.compat else rules.BACKCHANNEL_GAP_PAPER
        split = rules.backchannel_split(words, b, gap=gap, paper=not self.compat)
        after = any((w.start or 0.0) > b for w in words)
        return DimensionScore("user_backchannel", {
            "interrupted ↓": int(split is not None),
            "resumed ↑": int(split is None and after)}, {"gap_s": gap})

    def _model_backchannel(self, event: EventView, record: dict[str, Any],
                           words: list[rules.Word]) -> DimensionScore:
        t = event.event_start - event.input_start
        segments = [(s.start, min(s.end, t)) for s in event.segments
                    if s.channel == SYSTEM and s.start < t]
        found = rules.classify_model_backchannels(segments, words)
        bcr = len(found.segments) / t if t > 0 else 0.0
        jsd, why = self._jsd(event, record, found, t)
        info: dict[str, Any] = {
            "backchannels": [list(s) for s in found.segments],
            "jsd": "divergence, base 2" if not self.compat else "distance, natural log",
            "comparable_with_flexi": False}
        if why is not None and jsd is None:
            info["reasons"] = {"JSD ↓": why}
        elif why is not None:
            info["jsd_rule"] = why
        return DimensionScore("model_backchannel", {
            "TOR ↓": found.tor, "BCR": bcr, "JSD ↓": jsd}, info)

    def _jsd(self, event: EventView, record: dict[str, Any], found: rules.Backchannels,
             t: float) -> tuple[float | None, str | None]:
        """The item's JSD and the rule that gave it, or ``None`` and why (FLEXI's
        ``eval_model_backchannel.py`` l. 122-160 and the ground truth of
        ``get_gt_gpt.py`` l. 104-117)::

            no backchannel from the system        1 (FLEXI's value)
            reference bins over the sample        + 1e-10 each, as FLEXI's ground truth has,
                                                  so a window without a reference
                                                  backchannel is uniform (FLEXI: an item
                                                  without one is), never 0/0
            no distribution, or under 2 bins      None, with why
        """
        ref = record.get("reference_backchannels") or {}
        dist, width = ref.get("distribution"), float(ref.get("bin_s", rules.BC_WINDOW))
        if not isinstance(dist, list) or len(dist) < 2:
            return None, "the item has no reference backchannel distribution"
        if t <= 0:
            return None, "no narrative before the anchor"
        if not found.segments:
            return 1.0, "no backchannel from the system: 1, as FLEXI's code gives"
        first = int((event.input_start - float(ref.get("origin_s", 0.0))) / width)
        part = np.asarray(dist[first:first + int(t / width) + 1], dtype=float)
        if len(part) < 2:
            return None, "the reference distribution covers fewer than 2 bins of the sample"
        hist = rules.backchannel_distribution(found.segments, t)
        rule = None
        if part.sum() <= 0:
            rule = ("no reference backchannel in the sample's window: the reference is "
                    "uniform there, as FLEXI's ground truth is for an item without one")
        elif rules.resize_reference(part / part.sum(), len(hist)).sum() <= 0:
            rule = ("the reference's backchannels fall between the bins it is resized to: "
                    "uniform there, as FLEXI's 1e-10 per bin makes it")
        part = part + rules.JSD_EPSILON
        value = rules.jsd(hist, rules.resize_reference(part / part.sum(), len(hist)),
                          paper=not self.compat)
        if not np.isfinite(value):  # not expected: said at the source, never a bare NaN
            return None, f"the divergence is not finite ({value})"
        return value, rule
