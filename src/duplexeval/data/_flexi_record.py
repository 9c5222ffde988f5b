"""FLEXI item annotations: the ``flexi`` field of a dialogue record (suite ``flexi-en``).

Each dialogue of a FLEXI suite is one item of one of FLEXI's six scenarios (FLEXI, section
2.2).  Its record in ``{split}.jsonl`` carries, beside the M3 ``events``, an object ``flexi``
with what the scenario's metrics need.  Conventions: times are seconds from the start of the
dialogue audio; a span is ``[start, end]`` with ``start < end``; channel 0 is the user and
channel 1 the system in the bundled suite (``user_channel`` / ``system_channel`` say so)::

    {"version": 1, "scenario": "user_interrupt", "user_channel": 0, "system_channel": 1,
     "protocol": "multi-ref",
     "anchor": {"event": "BARGE_IN", "channel": 0, "time": [5.12, 5.71]},
     "user_turn": [0.5, 2.31], "response": [8.02, 10.9],
     "system_turn": [2.9, 5.71], "interruption": [5.12, 7.4]}

Fields (all scenarios):

* ``scenario``: one of :data:`SCENARIOS`;
* ``anchor``: the M3 event (kind, channel, time exactly as in ``events``) whose evaluation
  sample covers the scenario: TURN_SHIFT onto the system after the user's last turn
  (turn_taking, model_interrupt, model_backchannel), TURN_HOLD of the pause (pause_handling),
  BARGE_IN of the interruption (user_interrupt), BC of the user's backchannel
  (user_backchannel);
* ``protocol``: the protocol the scenario is meant to run under: ``multi-ref`` where the system
  must already be speaking when the user acts (user_interrupt, user_backchannel: the reference
  system turn is teacher-forced up to the user's onset), ``multi-gen`` otherwise;
* ``user_turn``: the user's speech the scenario is about (the query, with its pause; the
  emergency statement; the narrative; the first query before the system turn);
* ``response``: the reference system's last turn (its answer; the user channel is silent from
  the end of the user's last turn to the end of the audio).  The TURN_SHIFT onto the system
  channel that ends at ``response[0]`` is the turn-shift sample before it: in pause_handling
  its pass hears the whole query unmuted, pause included (the TURN_HOLD sample, as in M3, mutes
  the user from the pause start), and a multi-turn run keeps the audio before its input in the
  sample's context file.

Per scenario:

* pause_handling: ``pause``, the silence inside ``user_turn`` (the TURN_HOLD);
* user_interrupt: ``system_turn``, the reference system speech interrupted, and
  ``interruption``, the user's interrupting question (it starts inside ``system_turn``);
* user_backchannel: ``system_turn`` and ``backchannel`` (inside it) with ``backchannel_text``;
* model_interrupt: ``emergency`` (true: a good system should cut in), ``hazard_kind``
  (``emergency`` or ``false_claim``), ``hazard`` (a few words) and ``recognisable_at``, the
  end of the key word after which the danger is recognisable (inside ``user_turn``);
* model_backchannel: ``reference_backchannels``: ``bin_s`` (bin width), ``sigma_s``,
  ``positions`` (reference onsets), ``distribution`` (one probability per bin ``[i * bin_s,
  (i + 1) * bin_s)`` from the start of the audio, summing to 1), ``source`` and
  ``comparable_with_flexi`` (false: the positions are the project's, FLEXI's are GPT-4o's).

``version`` (1) marks this format.  A record without it holds FLEXI's own annotation values, as
``duplexeval data import flexi`` writes them for FLEXI's released folders (``user_end``,
``pause``, ``interrupt``, ``backchannel_time``); only its ``scenario`` is checked here.
"""

from __future__ import annotations

import math
from typing import Any

from duplexeval.data._dialogue import Dialogue
from duplexeval.events import EventKind
from duplexeval.timeline import TOL

__all__ = ["ANCHOR_KINDS", "FLEXI_FIELD", "FLEXI_VERSION", "SCENARIOS", "flexi_problems"]

FLEXI_FIELD = "flexi"
"""The record field that holds a FLEXI item's annotations."""
FLEXI_VERSION = 1
SCENARIOS: tuple[str, ...] = ("turn_taking", "pause_handling", "user_interrupt",
                              "model_interrupt", "user_backchannel", "model_backchannel")
"""FLEXI's six scenarios, in the paper's order."""
ANCHOR_KINDS: dict[str, EventKind] = {
    "turn_taking": EventKind.TURN_SHIFT,
    "pause_handling": EventKind.TURN_HOLD,
    "user_interrupt": EventKind.BARGE_IN,
    "model_interrupt": EventKind.TURN_SHIFT,
    "user_backchannel": EventKind.BC,
    "model_backchannel": EventKind.TURN_SHIFT,
}
"""The M3 event kind that anchors each scenario (its evaluation sample)."""
_SPANS: dict[str, tuple[str, ...]] = {
    "turn_taking": (),
    "pause_handling": ("pause",),
    "user_interrupt": ("system_turn", "interruption"),
    "model_interrupt": (),
    "user_backchannel": ("system_turn", "backchannel"),
    "model_backchannel": (),
}
"""The spans each scenario adds to ``user_turn`` and ``response``."""
SUM_TOLERANCE = 1e-6
"""How far a reference distribution's sum may be from 1."""


def _span(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, list) or len(value) != 2 or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
            for x in value):
        return None
    start, end = float(value[0]), float(value[1])
    return (start, end) if start < end else None


def _within(inner: tuple[float, float], outer: tuple[float, float]) -> bool:
    return outer[0] - TOL <= inner[0] and inner[1] <= outer[1] + TOL


def _spans(record: dict[str, Any], names: tuple[str, ...], duration: float | None,
           problems: list[str]) -> dict[str, tuple[float, float]]:
    out = {}
    for name in names:
        span = _span(record.get(name))
        if span is None:
            problems.append(f"{name} must be [start, end] with start < end (seconds)")
        elif span[0] < -TOL or (duration is not None and span[1] > duration + TOL):
            problems.append(f"{name} {list(span)} lies outside the audio")
        else:
            out[name] = span
    return out


def _anchor_problems(dialogue: Dialogue, scenario: str, anchor: Any) -> list[str]:
    if not isinstance(anchor, dict):
        return ["anchor must be {event, channel, time}"]
    kind, time = anchor.get("event"), anchor.get("time")
    if kind != ANCHOR_KINDS[scenario].value:
        return [f"anchor event {kind!r}: a {scenario} item is anchored on "
                f"{ANCHOR_KINDS[scenario].value}"]
    found = isinstance(time, list) and len(time) == 2 and any(
        e.kind.value == kind and e.channel == anchor.get("channel")
        and abs(e.start - time[0]) <= TOL and abs(e.end - time[1]) <= TOL
        for e in dialogue.events)
    return [] if found else [f"anchor {kind} {time} on channel {anchor.get('channel')} is not "
                             "among the dialogue's events"]


def _scenario_problems(record: dict[str, Any], scenario: str,
                       spans: dict[str, tuple[float, float]]) -> list[str]:
    problems = []
    user = spans.get("user_turn")
    if scenario == "pause_handling" and user and "pause" in spans \
            and not _within(spans["pause"], user):
        problems.append("pause lies outside user_turn")
    system = spans.get("system_turn")
    for name in ("interruption", "backchannel"):
        if name in spans and system and not system[0] < spans[name][0] < system[1]:
            problems.append(f"{name} does not start while the system speaks (system_turn)")
    if scenario == "model_interrupt":
        at = record.get("recognisable_at")
        if record.get("emergency") is not True or record.get("hazard_kind") not in (
                "emergency", "false_claim") or not record.get("hazard"):
            problems.append("model_interrupt needs emergency: true, hazard_kind and hazard")
        if not isinstance(at, int | float) or user is None or not user[0] < at <= user[1]:
            problems.append("recognisable_at must lie inside user_turn")
    if scenario == "model_backchannel":
        problems += _distribution_problems(record.get("reference_backchannels"))
    return problems


def _distribution_problems(ref: Any) -> list[str]:
    if not isinstance(ref, dict):
        return ["reference_backchannels missing"]
    dist, bin_s = ref.get("distribution"), ref.get("bin_s")
    if not isinstance(bin_s, int | float) or bin_s <= 0:
        return ["reference_backchannels.bin_s must be > 0 (seconds)"]
    if not isinstance(dist, list) or not dist or not all(
            isinstance(p, int | float) and p >= 0 for p in dist):
        return ["reference_backchannels.distribution must be a list of probabilities"]
    if abs(sum(dist) - 1.0) > SUM_TOLERANCE:
        return [f"reference_backchannels.distribution sums to {sum(dist):.9f}, not 1"]
    positions = ref.get("positions")
    if not isinstance(positions, list) or not positions or any(
            not isinstance(p, int | float) or not 0 <= p < len(dist) * bin_s
            for p in positions):
        return ["reference_backchannels.positions must be times inside the binned range"]
    if ref.get("comparable_with_flexi") is not False:
        return ["reference_backchannels.comparable_with_flexi must be false (the project's "
                "positions, not FLEXI's GPT-4o annotations)"]
    return []


def flexi_problems(dialogue: Dialogue) -> list[str]:
    """What is wrong with a dialogue's ``flexi`` field (nothing when it has none; for a record
    without ``version``, only an unknown scenario): the fields
    its scenario needs, spans inside the audio, the pause inside the user turn, the
    interruption and the backchannel starting while the system speaks, the emergency time
    inside the user turn, a reference distribution summing to 1, an anchor among the events."""
    record = dialogue.extra.get(FLEXI_FIELD)
    if record is None:
        return []
    if not isinstance(record, dict):
        return ["flexi must be an object"]
    scenario = record.get("scenario")
    if scenario not in SCENARIOS:
        return [f"flexi scenario {scenario!r} is not one of {', '.join(SCENARIOS)}"]
    if "version" not in record:
        return []  # FLEXI's own annotation values (``duplexeval data import flexi``)
    if record["version"] != FLEXI_VERSION:
        return [f"flexi version {record['version']!r} is not {FLEXI_VERSION}"]
    problems: list[str] = []
    if record.get("user_channel") not in (0, 1) or \
            record.get("system_channel") != 1 - record.get("user_channel", -1):
        problems.append("user_channel and system_channel must be 0 and 1, distinct")
    if record.get("protocol") not in ("multi-gen", "multi-ref"):
        problems.append("protocol must be multi-gen or multi-ref")
    duration = dialogue.audio.duration if dialogue.audio is not None else None
    spans = _spans(record, ("user_turn", "response", *_SPANS[scenario]), duration, problems)
    problems += _scenario_problems(record, scenario, spans)
    problems += _anchor_problems(dialogue, scenario, record.get("anchor"))
    return [f"flexi: {p}" for p in problems]
