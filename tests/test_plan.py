"""Evaluation plans: every window and filter rule on hand-computed dialogues.

Dialogue "h" (seconds)::

    time   0    2    4    6    8    10   12   14   16
    ch0      |==A=====|         |=====C=======|        |==E==|
             1        4         7             12       15.5  18
    ch1              |==B==|         |bc|        |==D===|
                     4.5   6         9 9.5       12.3   15

    TURN_SHIFT A->B [4, 4.5] on ch1,  B->C [6, 7] on ch0,  C->D [12, 12.3] on ch1,
    D->E [15, 15.5] on ch0,  BC [9, 9.5] on ch1 inside C.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_dataset
from duplexeval.cli import main
from duplexeval.data import Dialogue
from duplexeval.events import Event, EventKind
from duplexeval.plan import SAMPLE_JSON_KEYS, EvalProtocol, PlanOptions, build_plan

K = EventKind
SINGLE, GEN, REF = EvalProtocol.SINGLE, EvalProtocol.MULTI_GEN, EvalProtocol.MULTI_REF


def dialogue(did: str, ch0: list[tuple[EventKind, float, float]],
             ch1: list[tuple[EventKind, float, float]]) -> Dialogue:
    events = [Event(k, 0, s, e) for k, s, e in ch0] + [Event(k, 1, s, e) for k, s, e in ch1]
    return Dialogue(id=did, events=tuple(events))


H = dialogue(
    "h",
    [(K.TURN, 1.0, 4.0), (K.TURN, 7.0, 12.0), (K.TURN_SHIFT, 6.0, 7.0), (K.TURN, 15.5, 18.0),
     (K.TURN_SHIFT, 15.0, 15.5)],
    [(K.TURN_SHIFT, 4.0, 4.5), (K.TURN, 4.5, 6.0), (K.BC, 9.0, 9.5), (K.TURN_SHIFT, 12.0, 12.3),
     (K.TURN, 12.3, 15.0)],
)


def plan(dialogues: list[Dialogue], protocol: EvalProtocol, **kw):
    return build_plan(dialogues, PlanOptions(protocol=protocol, **kw))


def rows(p) -> list[tuple]:
    return [(s.event_id, s.input_start, s.input_end, s.context_start, s.context_end, s.fork_time)
            for s in p.samples]


def test_multi_gen_samples_of_h() -> None:
    # channels in record order (ch0 list first), events in file order; k counts kept samples
    assert rows(plan([H], GEN)) == [
        ("h_ch1_0000_smooth_turn_taking", 4.5, 16.0, 0.0, 4.5, 6.0),    # B ends 6: W after it
        ("h_ch1_0001_smooth_turn_taking", 12.3, 25.0, 0.0, 12.3, 15.0),
        ("h_ch0_0002_smooth_turn_taking", 1.0, 14.0, 0.0, 1.0, 4.0),
        ("h_ch1_0003_backchanneling", 9.0, 19.0, 0.0, 9.0, 9.5),        # fork at the BC end
        ("h_ch0_0004_smooth_turn_taking", 7.0, 22.0, 0.0, 7.0, 12.0),
    ]
    sample = plan([H], GEN).samples[3]
    assert (sample.user_channel, sample.system_channel) == (1, 0)
    assert sample.mute_start == 9.5


def test_single_drops_bc_before_counting_so_ids_differ() -> None:
    p = plan([H], SINGLE)
    assert [s.event_id for s in p.samples] == [
        "h_ch1_0000_smooth_turn_taking", "h_ch1_0001_smooth_turn_taking",
        "h_ch0_0002_smooth_turn_taking",
        "h_ch0_0003_smooth_turn_taking",  # 0004 with context: the BC was counted before it
    ]
    assert all(s.context_start == s.context_end == 0.0 for s in p.samples)
    assert all(s.fork_time == s.input_start for s in p.samples)


def test_multi_ref_forks_at_the_event_start() -> None:
    assert [s.fork_time for s in plan([H], REF).samples] == [6.0, 15.0, 4.0, 9.0, 12.0]


def test_channels_option_keeps_only_those_user_channels() -> None:
    p = plan([H], GEN, channels=(1,))
    assert [s.event_id for s in p.samples] == [
        "h_ch1_0000_smooth_turn_taking", "h_ch1_0001_smooth_turn_taking",
        "h_ch1_0002_backchanneling"]


def test_context_max_len_starts_at_the_earliest_turn_start_in_range() -> None:
    # L = 5.  Sample with input_start 12.3: range [7.3, 12.3) holds no TURN start (C starts at
    # 7.0, D at 12.3, which is excluded) -> 7.3.  input_start 7.0: [2.0, 7.0) holds B (4.5).
    # input_start 1.0: [0, 1.0) holds nothing -> max(0, 1 - 5) = 0.
    p = plan([H], GEN, context_max_len=5.0)
    starts = {s.event_id: s.context_start for s in p.samples}
    assert starts["h_ch1_0001_smooth_turn_taking"] == pytest.approx(7.3)
    assert starts["h_ch0_0004_smooth_turn_taking"] == 4.5
    assert starts["h_ch0_0002_smooth_turn_taking"] == 0.0


def test_costs_by_hand() -> None:
    gen = plan([H], GEN)
    # per event: sum(input_end - context_start) = 16 + 25 + 14 + 19 + 22
    assert gen.model_seconds_per_event() == pytest.approx(96.0)
    # shared prefix: user ch1 pass 0..15 + (16-6) + (25-15) + (19-9.5) = 44.5;
    #                user ch0 pass 0..12 + (14-4) + (22-12)            = 32
    assert gen.model_seconds_shared_prefix() == pytest.approx(76.5)
    ref = plan([H], REF)  # the BC forks at its start: 45 + 32
    assert ref.model_seconds_shared_prefix() == pytest.approx(77.0)
    single = plan([H], SINGLE)  # sum(input_end - input_start), nothing shared
    assert single.model_seconds_per_event() == pytest.approx(11.5 + 12.7 + 13 + 15)
    assert single.model_seconds_shared_prefix() == single.model_seconds_per_event()
    capped = plan([H], GEN, context_max_len=5.0)
    assert capped.model_seconds_shared_prefix() == capped.model_seconds_per_event()


# Dialogue "g"::
#
#   time   0    2    4    6    8    10   12
#   ch0    |======A=====|                |==D====|        A [0,5]      D [10.8, 13]
#   ch1          |=======B=======| |===C==|               B [3,8]      C [9, 11]
#                ^ BARGE_IN [3, 5] (overlap 2 s)  TURN_HOLD [8, 9] on ch1
#                                          ^ TURN_SHIFT [11, 10.8] on ch0 (overlap 0.2 s)
#   SHORTPAUSE [9.5, 9.8] inside C;  BARGE_IN [12.0, 12.5] on ch1 with no ch1 TURN at 12.0
G = dialogue(
    "g",
    [(K.TURN, 0.0, 5.0), (K.TURN, 10.8, 13.0), (K.TURN_SHIFT, 11.0, 10.8)],
    [(K.TURN, 3.0, 8.0), (K.BARGE_IN, 3.0, 5.0), (K.TURN_HOLD, 8.0, 9.0), (K.TURN, 9.0, 11.0),
     (K.SHORTPAUSE, 9.5, 9.8), (K.BARGE_IN, 12.0, 12.5)],
)


def test_barge_in_end_hold_filter_and_invalid_counting() -> None:
    p = plan([G], GEN)
    assert rows(p) == [
        # BARGE_IN: event_end := end of the ch1 TURN starting at 3.0 (8.0); input 3 + max(10, 5)
        ("g_ch1_0000_barge_in", 3.0, 13.0, 0.0, 3.0, 8.0),
        ("g_ch1_0001_pause_handling", 3.0, 18.0, 0.0, 3.0, 8.0),     # HOLD: B ends at 8
    ]
    assert p.samples[0].event_end == 8.0
    # the overlapping SHIFT is filtered (system ch0 is inside D at 11.0); the BARGE_IN at 12.0
    # has no TURN starting there: invalid, and not counted in total_events
    assert (p.stats.total_events, p.stats.skipped_filtered, p.stats.skipped_invalid) == (3, 1, 1)


def test_shortpause_needs_a_parent_turn_and_the_flag() -> None:
    assert "pause_handling" in {s.task for s in plan([G], GEN).samples}  # (the HOLD)
    p = plan([G], GEN, include_short_pause=True)
    sp = [s for s in p.samples if s.event_type == K.SHORTPAUSE]
    assert [(s.input_start, s.input_end, s.fork_time) for s in sp] == [(9.0, 21.0, 9.5)]
    # a SHORTPAUSE inside a BC has no parent TURN: invalid
    bc = dialogue("b", [(K.TURN, 0.0, 5.0)], [(K.BC, 1.0, 1.6), (K.SHORTPAUSE, 1.2, 1.3)])
    p = plan([bc], GEN, include_short_pause=True)
    assert [s.event_type for s in p.samples] == [K.BC]
    assert p.stats.skipped_invalid == 1 and p.stats.total_events == 2


def test_barge_in_window_grows_with_a_long_turn() -> None:
    # ch0 |=================|          A [0, 20]
    # ch1    |===============|        B [2, 14.5]: BARGE_IN [2, 20] -> event_end 14.5
    d = dialogue("l", [(K.TURN, 0.0, 20.0)], [(K.TURN, 2.0, 14.5), (K.BARGE_IN, 2.0, 20.0)])
    (sample,) = plan([d], GEN, window=10.0).samples
    assert (sample.input_start, sample.input_end) == (2.0, 14.5)  # 2 + max(10, 12.5)


def test_zero_gap_shift_is_filtered_by_the_inclusive_test() -> None:
    # ch0 |====|        A [0, 2]
    # ch1      |====|   B [2, 4]: TURN_SHIFT [2, 2]; the system (ch1) TURN contains 2.0
    d = dialogue("z", [(K.TURN, 0.0, 2.0)], [(K.TURN_SHIFT, 2.0, 2.0), (K.TURN, 2.0, 4.0)])
    p = plan([d], SINGLE)
    assert p.samples == () and p.stats.skipped_filtered == 1


def test_event_at_zero_gets_an_empty_context() -> None:
    d = dialogue("o", [(K.TURN, 0.0, 3.0)], [(K.BC, 0.0, 0.5)])
    (sample,) = plan([d], GEN).samples
    assert (sample.context_start, sample.context_end, sample.input_start) == (0.0, 0.0, 0.0)


def test_times_written_with_other_decimals_still_match() -> None:
    # the official code needs TURN end == event start exactly; 1e-6 s tolerance here
    d = dialogue("t", [(K.TURN, 1.0, 4.0000004)], [(K.TURN_SHIFT, 4.0, 4.5), (K.TURN, 4.5, 6.0)])
    (sample,) = plan([d], SINGLE).samples
    assert sample.input_start == 1.0


def test_shifting_the_dialogue_shifts_every_window() -> None:
    base = plan([H, G], GEN, include_short_pause=True)
    moved = plan([H.shifted(7.25), G.shifted(7.25)], GEN, include_short_pause=True)
    assert [s.event_id for s in base.samples] == [s.event_id for s in moved.samples]
    for a, b in zip(base.samples, moved.samples, strict=True):
        for field in ("event_start", "event_end", "input_start", "input_end", "fork_time",
                      "context_end"):
            assert getattr(b, field) - getattr(a, field) == pytest.approx(7.25)
        assert b.context_start == 0.0


def test_official_toy_counts(m3_toy: dict[str, Path]) -> None:
    # counts of the official rules on the toy annotations (references/m3-official.md section 2)
    from duplexeval.data import load_dataset

    chat, _ = load_dataset(m3_toy["chat"])
    task, _ = load_dataset(m3_toy["task"])
    p = plan(list(chat.dialogues), SINGLE)
    assert dict(p.stats.by_task) == {"smooth_turn_taking": 27, "pause_handling": 20}
    assert p.stats.skipped_filtered == 11
    p = plan(list(chat.dialogues), GEN)
    assert dict(p.stats.by_task) == {"smooth_turn_taking": 27, "pause_handling": 20,
                                     "backchanneling": 12, "barge_in": 8}
    assert p.stats.skipped_filtered == 31
    # shared-prefix execution feeds the model at least 3.5x less audio on the chat toy set
    assert p.model_seconds_per_event() / p.model_seconds_shared_prefix() >= 3.5
    p = plan(list(task.dialogues), SINGLE, channels=(1,))
    assert dict(p.stats.by_task) == {"smooth_turn_taking": 35, "pause_handling": 6}
    p = plan(list(task.dialogues), GEN, channels=(1,))
    assert dict(p.stats.by_task) == {"smooth_turn_taking": 35, "pause_handling": 6,
                                     "backchanneling": 6, "barge_in": 3}


def test_cli_json_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_dataset(tmp_path / "d", {
        "0": [(e.kind.value, e.start, e.end) for e in H.events if e.channel == 0],
        "1": [(e.kind.value, e.start, e.end) for e in H.events if e.channel == 1]},
        words=None, audio_seconds=None, dialogue_id="h")
    assert main(["plan", str(root), "--protocol", "multi-gen", "--json"]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert [tuple(x) for x in lines] == [SAMPLE_JSON_KEYS] * 5
    assert lines[3]["event_type"] == "BC" and lines[3]["fork_time"] == 9.5
    assert "audio missing" in err  # planning works on annotations alone, with a warning
    assert main(["plan", str(root), "--protocol", "multi-gen", "--summary-json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary == {
        "samples": 5,
        "by_task": {"smooth_turn_taking": 4, "pause_handling": 0, "backchanneling": 1,
                    "barge_in": 0},
        "total_events": 5, "skipped_invalid": 0, "skipped_filtered": 0,
        "model_seconds_per_event": 96.0, "model_seconds_shared_prefix": 76.5,
    }
    assert main(["plan", str(root), "--protocol", "single", "--channels", "1",
                 "--window", "5"]) == 0
    assert "single" in capsys.readouterr().out


def test_events_plans_only_the_kinds_named(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``--events BC`` keeps the one BC sample of the five (above), ``SHIFT,bc`` the four
    shifts and the BC (table labels, any case); an unknown kind is one line, exit 2."""
    root = make_dataset(tmp_path / "d", {
        "0": [(e.kind.value, e.start, e.end) for e in H.events if e.channel == 0],
        "1": [(e.kind.value, e.start, e.end) for e in H.events if e.channel == 1]},
        words=None, audio_seconds=None, dialogue_id="h")

    def kinds(*extra: str) -> list[str]:
        assert main(["plan", str(root), "--protocol", "multi-gen", "--json", *extra]) == 0
        return [json.loads(line)["event_type"] for line in capsys.readouterr().out.splitlines()]

    assert kinds("--events", "BC") == ["BC"]
    assert sorted(kinds("--events", "SHIFT,bc")) == ["BC"] + ["TURN_SHIFT"] * 4
    assert kinds("--events", "BARGE_IN") == []
    for bad in ("NOPE", ",", "BC,TURN"):
        with pytest.raises(SystemExit) as exit_:
            main(["plan", str(root), "--protocol", "multi-gen", "--events", bad])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and "events must be a comma-separated list" in err
        assert "Traceback" not in err


def test_a_dataset_plans_its_own_user_channels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A dataset whose ``dataset.json`` says ``user_channels: [0]`` (as every suite build
    writes it: mtr-en's user is channel 0) is planned on channel 0 alone, from the command
    line and from Python; any other folder on both, and an explicit ``channels`` still
    decides."""
    from duplexeval.data import load_dataset

    events = {"0": [(e.kind.value, e.start, e.end) for e in H.events if e.channel == 0],
              "1": [(e.kind.value, e.start, e.end) for e in H.events if e.channel == 1]}

    def channels(root: Path, *extra: str) -> set[int]:
        assert main(["plan", str(root), "--protocol", "multi-gen", "--json", *extra]) == 0
        return {json.loads(line)["user_channel"] for line in capsys.readouterr().out.splitlines()}

    plain = make_dataset(tmp_path / "plain", events, audio_seconds=None, dialogue_id="h")
    built = make_dataset(tmp_path / "built", events, audio_seconds=None, dialogue_id="h")
    (built / "dataset.json").write_text(json.dumps({"name": "mtr-en", "user_channels": [0]}))
    assert channels(plain) == {0, 1}
    assert channels(built) == {0}
    assert channels(built, "--channels", "0,1") == {0, 1}

    dataset, _ = load_dataset(built)
    assert dataset.user_channels == (0,)
    planned = build_plan(dataset, PlanOptions(protocol=GEN))
    assert planned.options.channels == (0,)
    assert {s.user_channel for s in planned.samples} == {0}
    assert build_plan(dataset.dialogues, PlanOptions(protocol=GEN)).options.channels == (0, 1)
    assert build_plan(dataset, PlanOptions(protocol=GEN, channels=(1,))).options.channels == (1,)


@pytest.mark.parametrize("value", [[], [2], [0, 0], "0", [True], None])
def test_malformed_user_channels_are_one_line_naming_dataset_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: object) -> None:
    root = make_dataset(tmp_path / "d", {"0": [("TURN", 1.0, 4.0)]}, audio_seconds=None)
    (root / "dataset.json").write_text(json.dumps({"user_channels": value}))
    code = main(["plan", str(root), "--protocol", "multi-gen"])
    err = capsys.readouterr().err
    if value is None:  # absent: both channels
        assert code == 0
        return
    assert code == 2 and "Traceback" not in err
    assert f"{root / 'dataset.json'}" in err and "user_channels must be" in err
