"""Annotated items under ``interactive``: the user's own pauses and background speech kept,
and each FLEXI item's record and MTR dialogue's rounds moved onto the realised timeline with
the user items the simulated user played.

Roles: user channel 0, system channel 1; times in seconds; ``=`` speech, ``.`` silence;
``scripted`` frames are 20 ms.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from duplexeval.data import Dialogue
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._score_run import _flexi_anchor, with_rounds
from duplexeval.metrics._scoring import score_events
from duplexeval.metrics.content._rounds import RoundFinder
from duplexeval.plan import EvalProtocol, PlanOptions
from duplexeval.runs._interactive import played_items, run_interactive
from duplexeval.runs._interactive_run import realised_dialogue, realised_samples
from duplexeval.runs._realised_items import realised_items
from duplexeval.runs._simulated_user import UserPolicy
from duplexeval.systems.builtin._scripted import ScriptedSystem
from test_interactive import SPF, _dialogue

POLICY = UserPolicy(gaps=(0.4,), patience=3.0)


def _frame(log: list[dict[str, Any]], item: int) -> int:
    """The frame whose end the user decided to start ``item`` at."""
    return int(next(r["frame"] for r in log if r.get("action") == "start" and r["item"] == item))
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
    assert _frame(silent.log, 1) + 1 == round(3.0 / SPF)
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
    t1 = (_frame(run.log, 1) + 1) * SPF
    assert 2.0 + 1.0 < t1 < 4.0  # 1 s after the system's onset, far before the reference's 6.0
    item = realised_items(d, 0, run.log, run.system_spans, run.duration)
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
    timeline = {**run.timeline_json(0), "items": item.to_json(0)}
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
    item = realised_items(d, 0, run.log, run.system_spans, run.duration)
    assert item is not None and item.record is None
    assert item.unscored == ("user_backchannel: user item 1 (reference 5.000-5.400 s) was not "
                             "played: system stopped before the backchannel")
    assert realised_dialogue("d1", {**run.timeline_json(0), "items": item.to_json(0)}) \
        .events == ()


def test_a_dialogue_without_a_flexi_item_is_planned_from_its_realised_events() -> None:
    d, audio = _dialogue(PAUSE)
    run = run_interactive(ScriptedSystem(delay="0.3"), d, audio, 0, POLICY, 0)
    assert realised_items(d, 0, run.log, run.system_spans, run.duration) is None


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


MTR_EVENTS = [("TURN", 0, 0.5, 2.0), ("TURN_HOLD", 0, 2.0, 3.0), ("TURN", 0, 3.0, 4.0),
              ("TURN_SHIFT", 1, 4.0, 4.4), ("TURN", 1, 4.4, 9.0),
              ("TURN", 0, 8.0, 10.0), ("BARGE_IN", 0, 8.0, 9.0),
              ("TURN_SHIFT", 1, 10.0, 10.3), ("TURN", 1, 10.3, 13.0), ("BC", 0, 11.0, 11.4)]
MTR_ROUNDS = [
    {"round": 1, "features": ["pause", "background"], "user_span": [0.5, 4.0],
     "window": [0.5, 10.0], "reply_span": [4.4, 9.0], "pause_span": [2.0, 3.0],
     "background_span": [5.0, 6.0], "background_text": "x", "background_gain_db": -20.0},
    {"round": 2, "features": ["interruption", "backchannel"], "user_span": [8.0, 10.0],
     "window": [8.0, 14.0], "reply_span": [10.3, 13.0], "interruption_span": [8.0, 10.0],
     "overlap_span": [8.0, 9.0], "backchannel_spans": [[11.0, 11.4]]}]


def _mtr_dialogue() -> tuple[Dialogue, Any]:
    """Two MTR rounds; background speech (quiet noise, no words) on the user's channel 0.6 s
    into the reference system's first reply::

        reference  user |==0==|.pause.|=1=|          bg            |===2 barge===|   bc
                   sys                     .|=====reply 1========|    .|==reply 2===|
                        0.5   2.0     3.0 4.0 4.4  5.0-6.0     8.0  9.0 10.0 10.3 11.0 13.0
    """
    d, audio = _dialogue(MTR_EVENTS, seconds=14.0)
    noise = np.random.default_rng(1).standard_normal(24000)
    audio.audio[5 * 24000:6 * 24000, 0] = 0.02 * noise
    return Dialogue(id="m1", events=d.events, extra={
        "mtr": {"version": 1, "group": "combination", "label": "S+I+P+B", "user_channel": 0,
                "rounds": MTR_ROUNDS},
        "background_speech": [{"channel": 0, "start": 5.0, "end": 6.0, "text": "x",
                               "gain_db": -20.0}]}), audio


def test_mtr_rounds_move_with_the_items_the_user_played() -> None:
    """A system that answers 1.5 s after the user (so not inside the 1 s pause), talks 4 s and
    never yields; the user resumes after its pause, plays the background 0.6 s into the
    heard reply, barges in 1 s into it, and skips the backchannel (no second reply within
    patience)::

        realised  user |==0==|.pause.|=1=|.......|bg| |===2 barge===|
                  sys                      1.5 |======4 s=======|......3 s patience: bc skipped
                       0.5   2.0     3.0 4.0  5.5   t_bg  t_2          ^ 9.48

    Round 1 keeps its times, its background moves to t_bg; round 2's user span and
    interruption move to t_2 (a shift of t_2 - 8.0), its window ends where the realised
    dialogue ends, its backchannel is left out with why; no reference system span is kept.
    """
    d, audio = _mtr_dialogue()
    run = run_interactive(ScriptedSystem(delay="1.5", duration="4", stop_delay="100"), d,
                          audio, 0, POLICY, 0)
    actions = [(r["action"], r["item"]) for r in run.log[1:]]
    assert actions == [("start", 0), ("start", 1), ("start", 2), ("start", 3), ("skip", 4)]
    why = {r["item"]: r["why"] for r in run.log[1:]}
    assert why[2].startswith("background 0.6") and why[4].startswith("patience 3.0")
    starts = {i: real.start for i, (_ref, real) in played_items(run.log).items()}
    onset = run.system_spans[0].start
    assert starts[1] == 3.0 and onset == pytest.approx(5.5)
    # the background 0.6 s (30 frames) and the barge-in 1 s after the frame the onset was
    # declared
    decided = {r["item"]: r for r in run.log[1:]}
    for i, lead in ((2, 0.6), (3, 1.0)):
        assert decided[i]["frame"] == decided[i]["heard"]["onset_frame"] + round(lead / SPF)
    t_bg, t_2 = starts[2], starts[3]
    item = realised_items(d, 0, run.log, run.system_spans, run.duration)
    assert item is not None and item.field == "mtr" and item.record is not None
    r1, r2 = item.record["rounds"]
    assert r1["user_span"] == [0.5, 4.0] and r1["pause_span"] == [2.0, 3.0]
    assert r1["background_span"] == pytest.approx([t_bg, t_bg + 1.0])
    assert r1["window"] == pytest.approx([0.5, t_2 + 2.0])  # to round 2's realised end
    assert r2["user_span"] == r2["interruption_span"] == pytest.approx([t_2, t_2 + 2.0])
    assert r2["window"] == pytest.approx([t_2, run.duration])
    assert r2["backchannel_spans"] == [] and r2["unplayed"] == [
        "backchannel_spans: user item 4 (reference 11.000-11.400 s) was not played: "
        "patience 3.0 s: no system speech to backchannel into"]
    assert not {"reply_span", "overlap_span"} & {*r1, *r2}
    # planned: the held pause, both shifts onto the system, and the barge-in (the realised
    # system speaks at its onset), each in the round its event starts in
    timeline = {**run.timeline_json(0), "items": item.to_json(0)}
    planned = realised_dialogue("m1", timeline)
    samples = realised_samples(planned, 0, OPTIONS, run.duration)
    assert [(s.event_type.value, round(s.event_start, 6)) for s in samples] == [
        ("TURN_HOLD", 2.0), ("TURN_SHIFT", 4.0), ("BARGE_IN", round(t_2, 6)),
        ("TURN_SHIFT", round(t_2 + 2.0, 6))]
    views = [EventView(event_id=s.event_id, event_type=s.event_type.value,
                       input_start=s.input_start, input_end=s.input_end,
                       event_start=s.event_start, event_end=s.event_end, segments=(),
                       sample_id="m1", metadata={"user_channel": 0}) for s in samples]
    rounds = [v.metadata.get("round") for v in with_rounds(views, {"m1": planned},
                                                           RoundFinder(), context=False)]
    assert rounds == [1, 1, 2, 2]


def test_background_speech_is_skipped_where_the_system_stopped_before_it() -> None:
    """Background speech waits for system speech as a backchannel does: it is skipped where
    the system is no longer heard 0.6 s into a 0.1 s reply (0.1 s plus the 0.5 s
    hangover)."""
    d, audio = _mtr_dialogue()
    run = run_interactive(ScriptedSystem(delay="1.5", duration="0.1"), d, audio, 0, POLICY, 0)
    skipped = {r["item"]: r["why"] for r in run.log[1:] if r["action"] == "skip"}
    assert skipped[2] == "system stopped before the background speech"
    item = realised_items(d, 0, run.log, run.system_spans, run.duration)
    assert item is not None and item.record is not None
    r1 = item.record["rounds"][0]
    assert "background_span" not in r1
    assert r1["unplayed"][0].startswith("background_span: user item 2 (reference "
                                        "5.000-6.000 s) was not played: system stopped")


def test_a_malformed_items_entry_is_one_line_and_nothing_is_written(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``score`` of an interactive run whose timeline holds an ``items`` entry with an event
    that is no event kind: one line naming the timeline file, exit 2, the run unchanged; a
    resumed ``run`` treats the unit as unfinished and runs it again."""
    from duplexeval.cli import main

    out = tmp_path / "run"
    args = ["run", "--system", "scripted", "--dataset", str(sample_voiced), "--protocol",
            "interactive", "--out", str(out)]
    assert main(args) == 0
    path = sorted((out / "interactive").glob("*.timeline.json"))[0]
    timeline = json.loads(path.read_text())
    timeline["items"] = {"field": "mtr", "record": {"rounds": []},
                         "events": [{"role": "user", "event": "NOPE", "time": [1.0, 2.0]}]}
    path.write_text(json.dumps(timeline))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["score", str(out), "--variant", "mtr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"duplexeval: {path}: not a realised timeline (ValueError: 'NOPE' is not a "
                   "valid EventKind)"]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert main(args) == 0  # the unreadable unit runs again
    assert "items" not in json.loads(path.read_text())
