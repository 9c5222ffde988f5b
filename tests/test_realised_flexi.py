"""FLEXI items under ``interactive``: the user's own pauses kept, and each item's record moved
onto the realised timeline with the user items the simulated user played.

Roles: user channel 0, system channel 1; times in seconds; ``=`` speech, ``.`` silence;
``scripted`` frames are 20 ms.
"""

from __future__ import annotations

from typing import Any

import pytest

from duplexeval.data import Dialogue
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._score_run import _flexi_anchor
from duplexeval.metrics._scoring import score_events
from duplexeval.plan import EvalProtocol, PlanOptions
from duplexeval.runs._interactive import UserPolicy, played_items, run_interactive
from duplexeval.runs._interactive_run import realised_dialogue, realised_samples
from duplexeval.runs._realised_flexi import realised_flexi
from duplexeval.systems.builtin._scripted import ScriptedSystem
from test_interactive import SPF, _dialogue, _starts

POLICY = UserPolicy(gaps=(0.4,), patience=3.0)
OPTIONS = PlanOptions(protocol=EvalProtocol.INTERACTIVE, window=4.0)

PAUSE = [("TURN", 0, 0.5, 2.0), ("TURN_HOLD", 0, 2.0, 3.0), ("TURN", 0, 3.0, 4.5),
         ("TURN_SHIFT", 1, 4.5, 5.0), ("TURN", 1, 5.0, 7.0)]


def _with(d: Dialogue, record: dict[str, Any]) -> Dialogue:
    return Dialogue(id=d.id, events=d.events,
                    extra={"flexi": {"version": 1, "user_channel": 0, "system_channel": 1,
                                     **record}})


def test_the_user_resumes_its_own_turn_after_its_pause_not_after_patience() -> None:
    """The second item continues the user's turn after a 1 s pause (a user TURN_HOLD)::

        silent system   user |==1==|..1 s..|==2==|        as the reference: not patience (3 s)
        eager system    user |==1==|.....................|==2==|
                        sys          .3|=1 s=|-25f-.4|    took the floor in the pause: the
                                                          user waits for its offset, + gap
    """
    d, audio = _dialogue(PAUSE)
    silent = run_interactive(ScriptedSystem(delay="1000"), d, audio, 0, POLICY, 0)
    assert _starts(silent.log)[1] + 1 == round(3.0 / SPF)
    why = next(r["why"] for r in silent.log if r.get("action") == "start" and r["item"] == 1)
    assert isinstance(why, str) and why.startswith("pause 1.0")
    assert silent.log[0]["items"][1]["pause"] == pytest.approx(1.0)
    assert "pause" not in silent.log[0]["items"][0]
    eager = run_interactive(ScriptedSystem(delay="0.3", duration="1"), d, audio, 0, POLICY, 0)
    start = next(r for r in eager.log if r.get("action") == "start" and r["item"] == 1)
    heard = start["heard"]
    assert isinstance(heard, dict)
    assert start["frame"] + 1 == heard["offset_frame"] + round(0.4 / SPF)
    assert start["why"].startswith("gap")


INTERRUPT = [("TURN", 0, 0.5, 2.0), ("TURN_SHIFT", 1, 2.0, 2.4), ("TURN", 1, 2.4, 8.0),
             ("TURN", 0, 6.0, 9.5), ("BARGE_IN", 0, 6.0, 8.0)]
INTERRUPT_RECORD = {"scenario": "user_interrupt", "protocol": "multi-ref",
                    "anchor": {"event": "BARGE_IN", "channel": 0, "time": [6.0, 8.0]},
                    "user_turn": [0.5, 2.0], "response": [10.0, 12.0],
                    "system_turn": [2.4, 8.0], "interruption": [6.0, 9.5]}


def test_a_user_interrupt_moves_with_the_barge_in_the_user_played() -> None:
    """The reference user interrupts at 6.0; the simulated user barges in 1 s after it hears
    the system start, so the interruption (and the anchor) move with that item::

        reference  user |==0==|..............|====1 (3.5 s)====|
                   sys          |=======5.6 s=======|
        realised   user |==0==|......|====1====|                    shift d1 = t1 - 6.0
                   sys          .3|=====6 s (talks on)=====|
        record     user_turn [0.5, 2.0] (item 0, not moved), interruption [t1, t1 + 3.5],
                   anchor [t1, t1 + 2.0], no reference system spans
    """
    d, audio = _dialogue(INTERRUPT, seconds=12.0)
    d = _with(d, INTERRUPT_RECORD)
    run = run_interactive(ScriptedSystem(delay="0.3", duration="6", stop_delay="100"), d,
                          audio, 0, POLICY, 0)
    t1 = (_starts(run.log)[1] + 1) * SPF
    assert 2.0 + 1.0 < t1 < 4.0  # 1 s after the system's onset, far before the reference's 6.0
    item = realised_flexi(d, 0, run.log, run.system_spans)
    assert item is not None and item.record is not None and item.unscored is None
    record = item.record
    assert record["user_turn"] == [0.5, 2.0]
    assert record["interruption"] == pytest.approx([t1, t1 + 3.5])
    assert record["anchor"]["time"] == pytest.approx([t1, t1 + 2.0])
    assert "response" not in record and "system_turn" not in record
    assert record["realised"]["shifts"] == pytest.approx({"0": 0.0, "1": t1 - 6.0})
    assert {i: real.start for i, (_ref, real) in played_items(run.log).items()} == \
        pytest.approx({0: 0.5, 1: t1})
    # planned from the moved events: one BARGE_IN sample at the realised onset, on which the
    # scorer finds the realised record
    timeline = {**run.timeline_json(0), "flexi": item.to_json(0)}
    planned = realised_dialogue("d1", timeline)
    (sample,) = realised_samples(planned, 0, OPTIONS, run.duration)
    assert sample.event_type.value == "BARGE_IN"
    assert sample.event_start == pytest.approx(t1)
    assert sample.event_end == pytest.approx(t1 + 3.5)  # the user's turn end, as static runs
    view = EventView(event_id=sample.event_id, event_type="BARGE_IN",
                     input_start=sample.input_start, input_end=sample.input_end,
                     event_start=sample.event_start, event_end=sample.event_end,
                     segments=(), metadata={"context_mode": "interactive"})
    assert _flexi_anchor(planned, view) == record


def test_a_backchannel_the_system_stopped_before_leaves_the_item_unscored() -> None:
    """The system speaks 0.2 s and stops; the backchannel is due 1 s after its onset, when
    it is silent, so the user skips it, and the item says why it is not scored::

        user |==0==|.........(bc skipped)
        sys          .3|=|
    """
    events = [("TURN", 0, 0.5, 2.0), ("TURN", 1, 2.4, 8.0), ("BC", 0, 5.0, 5.4)]
    d, audio = _dialogue(events)
    d = _with(d, {"scenario": "user_backchannel", "protocol": "multi-ref",
                  "anchor": {"event": "BC", "channel": 0, "time": [5.0, 5.4]},
                  "user_turn": [0.5, 2.0], "system_turn": [2.4, 8.0],
                  "backchannel": [5.0, 5.4]})
    run = run_interactive(ScriptedSystem(delay="0.3", duration="0.2"), d, audio, 0, POLICY, 0)
    item = realised_flexi(d, 0, run.log, run.system_spans)
    assert item is not None and item.record is None
    assert item.unscored == ("user_backchannel: user item 1 (reference 5.000-5.400 s) was not "
                             "played: system stopped before the backchannel")
    assert realised_dialogue("d1", {**run.timeline_json(0), "flexi": item.to_json(0)}) \
        .events == ()


def test_a_dialogue_without_a_flexi_item_is_planned_from_its_realised_events() -> None:
    d, audio = _dialogue(PAUSE)
    run = run_interactive(ScriptedSystem(delay="0.3"), d, audio, 0, POLICY, 0)
    assert realised_flexi(d, 0, run.log, run.system_spans) is None


def test_the_jsd_bins_start_at_the_records_origin() -> None:
    """The same narrative and backchannels, played 1 s later than the reference: with the
    realised record's ``origin_s`` (1.0) the JSD is the reference-time one; without it the
    sample would be compared with the bins 1 s later."""
    dist = [0.0] * 51
    dist[10] = dist[30] = 0.5
    from test_metrics_flexi import _words

    words = _words((2.0, 2.3), (6.0, 6.3))

    def jsd(input_start: float, origin: float | None) -> float:
        ref: dict[str, Any] = {"bin_s": 0.2, "distribution": dist}
        if origin is not None:
            ref["origin_s"] = origin
        record = {"scenario": "model_backchannel", "reference_backchannels": ref}
        event = EventView(event_id="e", event_type="TURN_SHIFT", input_start=input_start,
                          input_end=input_start + 12.0, event_start=input_start + 10.0,
                          event_end=input_start + 10.5, segments=words,
                          metadata={"flexi": record})
        (score,) = score_events([event], get_variant("flexi"))
        value = score.dimensions[0].values["JSD ↓"]
        assert isinstance(value, float)
        return value

    assert jsd(1.0, 1.0) == jsd(0.0, None)
    assert jsd(1.0, None) != jsd(0.0, None)
