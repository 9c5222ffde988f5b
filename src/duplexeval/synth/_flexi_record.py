"""The ``flexi`` record of a synthesized FLEXI item: its scenario's annotations, measured on the
placed turns (format: :mod:`duplexeval.data._flexi_record`).

Times are seconds from the start of the dialogue audio, rounded to the millisecond as the word
alignments are, so spans and the anchor equal the annotated events exactly.  A scenario the
synthesized audio does not realise (an anchor event missing, a backchannel dropped) raises
:class:`~duplexeval.errors.DuplexevalError` naming the item: the spec must change.

Reference backchannel distribution (model_backchannel)
------------------------------------------------------
The reference positions are the onsets of the reference system's backchannels, which the spec
places after clause- and sentence-final words of the narrative (the synthesizer starts each
50-250 ms after its word).  Each position is spread over the bins by a normal kernel of
standard deviation :data:`SIGMA_S` truncated at 3 sigma (the mass of each bin is the kernel's
integral over it, renormalised), the positions weigh equally, and the bins are
:data:`BIN_S` wide from the start of the audio to its end (0.2 s, the bin width of FLEXI's and
Full-Duplex-Bench's backchannel JSD)::

    narrative  |==clause,==|==clause.==|==sentence,==|==end.==|
    system                 |mm|        |yeah|         (reference onsets p1, p2)
    bins       ....|.|.|.|.|.|.|.|.|.|.|.|.|.|....   0.2 s each
    mass               .:|:.        .:|:.            N(p, 0.2 s) per onset, total 1

These positions were chosen by the project, not annotated by GPT-4o as FLEXI's were, so a JSD
against them is **not comparable** with FLEXI's published JSD (``comparable_with_flexi``:
false in every record).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from duplexeval.data._flexi_record import ANCHOR_KINDS, FLEXI_VERSION
from duplexeval.errors import DuplexevalError
from duplexeval.events import Event, EventKind
from duplexeval.synth._placement import PlacedTurn
from duplexeval.synth._spec import DialogueSpec
from duplexeval.timeline import TOL, Span

__all__ = ["BIN_S", "REFERENCE_SOURCE", "SIGMA_S", "flexi_record", "spread"]

BIN_S = 0.2
"""Width of the reference distribution's time bins (seconds)."""
SIGMA_S = 0.2
"""Standard deviation of the normal kernel that spreads each reference onset (seconds)."""
REFERENCE_SOURCE = ("duplexeval: onsets of the reference system's backchannels, placed by the "
                    "project after clause- and sentence-final words; not GPT-4o annotations, so "
                    "JSD against this reference is not comparable with FLEXI's")
_MULTI_REF = ("user_interrupt", "user_backchannel")
"""Scenarios whose user acts while the reference system speaks (teacher-forced up to then)."""


def _pair(span: Span) -> list[float]:
    return [span.start, span.end]


def _cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def spread(positions: Sequence[float], n_bins: int, bin_s: float = BIN_S,
           sigma_s: float = SIGMA_S) -> list[float]:
    """The distribution over ``n_bins`` bins ``[i * bin_s, (i + 1) * bin_s)`` (seconds) of
    ``positions``: each an equal share of mass, spread by a normal kernel of ``sigma_s``
    truncated at 3 sigma and at the binned range; the result sums to 1."""
    if not positions or n_bins <= 0:
        raise ValueError("spread needs at least one position and one bin")
    out = [0.0] * n_bins
    for p in positions:
        lo, hi = max(0.0, p - 3 * sigma_s), min(n_bins * bin_s, p + 3 * sigma_s)
        masses: dict[int, float] = {}
        for i in range(max(0, int(lo // bin_s)), min(n_bins, int(hi // bin_s) + 1)):
            a, b = max(lo, i * bin_s), min(hi, (i + 1) * bin_s)
            if b > a:
                masses[i] = _cdf((b - p) / sigma_s) - _cdf((a - p) / sigma_s)
        total = sum(masses.values())
        for i, m in masses.items():
            out[i] += m / total / len(positions)
    return out


def _anchor(events: Sequence[Event], kind: EventKind, channel: int, start: float | None,
            end: float | None, item: str) -> dict[str, Any]:
    for e in events:
        if e.kind is kind and e.channel == channel and (
                start is None or abs(e.start - start) <= TOL) and (
                end is None or abs(e.end - end) <= TOL):
            return {"event": kind.value, "channel": channel, "time": [e.start, e.end]}
    raise DuplexevalError(f"flexi item {item}: the synthesized audio has no {kind.value} on "
                          f"channel {channel} at [{start}, {end}]; the scenario is not realised "
                          "(change the spec: longer speech, another position)")


def _pause(turn: PlacedTurn, spec: DialogueSpec) -> Span:
    (pause,) = spec.turns[turn.index].all_pauses()
    words = turn.words()
    i = turn.word_index(pause)
    return Span(words[i].end, words[i + 1].start)


def _backchannels(turn: PlacedTurn, expected: int, item: str) -> tuple[Span, ...]:
    if len(turn.backchannels) != expected:
        raise DuplexevalError(f"flexi item {item}: {len(turn.backchannels)} of {expected} "
                              "backchannels placed (the listener had no room); change the spec")
    return turn.backchannels


def _scenario_fields(spec: DialogueSpec, turns: Sequence[PlacedTurn], events: Sequence[Event],
                     duration: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario's own fields and its anchor event."""
    assert spec.flexi is not None
    name, item = spec.flexi.scenario, spec.id
    user, system = turns[0].channel, 1 - turns[0].channel
    kind = ANCHOR_KINDS[name]
    fields: dict[str, Any] = {}
    if name == "pause_handling":
        pause = _pause(turns[0], spec)
        fields["pause"] = _pair(pause)
        return fields, _anchor(events, kind, user, pause.start, pause.end, item)
    if name == "user_interrupt":
        fields["system_turn"] = _pair(turns[1].span)
        fields["interruption"] = _pair(turns[2].span)
        return fields, _anchor(events, kind, user, turns[2].span.start, None, item)
    if name == "user_backchannel":
        (bc,) = _backchannels(turns[1], 1, item)
        fields["system_turn"] = _pair(turns[1].span)
        fields["backchannel"] = _pair(bc)
        fields["backchannel_text"] = spec.turns[1].backchannels[0].text
        return fields, _anchor(events, kind, user, bc.start, bc.end, item)
    if name == "model_interrupt":
        flexi = spec.flexi
        assert flexi.recognisable is not None
        fields.update(emergency=True, hazard_kind=flexi.hazard_kind, hazard=flexi.hazard,
                      recognisable_at=turns[0].time_after(flexi.recognisable))
    if name == "model_backchannel":
        onsets = [s.start for s in _backchannels(turns[0], len(spec.turns[0].backchannels),
                                                 item)]
        n_bins = math.ceil(duration / BIN_S - 1e-9)
        fields["reference_backchannels"] = {
            "bin_s": BIN_S, "sigma_s": SIGMA_S, "positions": onsets,
            "distribution": [round(p, 9) for p in spread(onsets, n_bins)],
            "source": REFERENCE_SOURCE, "comparable_with_flexi": False}
    return fields, _anchor(events, kind, system, None, turns[-1].span.start, item)


def flexi_record(spec: DialogueSpec, turns: Sequence[PlacedTurn], events: Sequence[Event],
                 duration: float) -> dict[str, Any]:
    """The ``flexi`` field of a synthesized item (``spec.flexi`` set): its scenario, roles,
    protocol, anchor event, user turn, reference response and the scenario's own spans,
    measured on the placed ``turns``; ``duration`` is the audio's length in seconds."""
    if spec.flexi is None:
        raise ValueError(f"{spec.id}: not a FLEXI item")
    name = spec.flexi.scenario
    fields, anchor = _scenario_fields(spec, turns, events, duration)
    user = turns[0].channel
    return {"version": FLEXI_VERSION, "scenario": name, "user_channel": user,
            "system_channel": 1 - user,
            "protocol": "multi-ref" if name in _MULTI_REF else "multi-gen",
            "anchor": anchor, "user_turn": _pair(turns[0].span if name == "user_interrupt"
                                                 else turns[-2].span),
            "response": _pair(turns[-1].span), **fields}
