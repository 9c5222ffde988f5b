"""Counterfactual pairs: the plan's twins (the user's act removed), their run as one more
continuation of the shared prefix, and the paired effect of the act in the results.

The first bundled English dialogue (voiced with clip-bank bursts) under Multi (ref), scored by
``turnbench``: the ``scripted`` system that continues the reference's turn at each onset
(``continue_forced=1``) and stops 0.2 s into user speech, from the speech it logged
(``--truth``), and the ``reference`` system, which replays the human channel whatever it
hears, from its analysed audio (voice activity)::

    user (original)     ....|uuuuuuuu|          the barge-in or backchannel
    user (twin)         ....|                   muted from its onset
    yields, original    SSSSSSS|                stops 0.2 s into the user's speech
    yields, twin        SSSSSSSSSSSSSSSSSS|     talks on to its duration: effect of the act
    reference, both     SSSSSSSSSSS|            ends where the human's turn ends: no effect
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import ModuleTemp
from duplexeval._audio import read_audio
from duplexeval.cli import main
from duplexeval.data import Dialogue, Need, bundled_dataset, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.events import Event, EventKind
from duplexeval.metrics import DimensionScore, EventScore, EventView
from duplexeval.metrics._counterfactual import paired_effects
from duplexeval.plan._samples import (
    COUNTERFACTUAL_SUFFIX,
    EvalProtocol,
    PlanOptions,
    build_plan,
)
from duplexeval.runs import execute_run
from duplexeval.runs._driver import noise_seed
from duplexeval.runs._inputs import Cut, DialogueAudio, Grid, Inputs, signal_correlated_noise
from duplexeval.systems import load_system

SCRIPTED = {"stop_delay": "0.2", "continue_forced": "1", "delay": "1.0", "duration": "6"}
SYSTEMS: dict[str, tuple[str, dict[str, str], list[str]]] = {
    "yields": ("scripted", SCRIPTED, ["--truth"]), "reference": ("reference", {}, ["--asr",
                                                                                    "none"])}


def test_the_plan_adds_a_twin_after_each_act_and_keeps_the_official_ids() -> None:
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    options = PlanOptions(protocol=EvalProtocol.MULTI_GEN)
    plain = build_plan(source.dialogues[:1], options)
    paired = build_plan(source.dialogues[:1], PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                                          counterfactual=True))
    originals = [s for s in paired.samples if not s.counterfactual]
    assert [s.event_id for s in originals] == [s.event_id for s in plain.samples]
    assert paired.stats.by_task == plain.stats.by_task  # the official counters: originals
    acts = [s for s in plain.samples if s.event_type in (EventKind.BC, EventKind.BARGE_IN)]
    twins = [s for s in paired.samples if s.counterfactual]
    assert acts and len(twins) == len(acts)
    for act, twin in zip(acts, twins, strict=True):
        index = paired.samples.index(twin)
        assert paired.samples[index - 1] == act  # right after its original
        assert twin.event_id == act.event_id + COUNTERFACTUAL_SUFFIX
        assert twin.mute_start == twin.fork_time == act.event_start
        assert act.mute_start == act.event_end
        assert twin.to_json()["counterfactual_of"] == act.event_id
        assert "counterfactual_of" not in act.to_json()
    assert all(s.event_type not in (EventKind.BC, EventKind.BARGE_IN)
               for s in paired.samples if s.counterfactual is False
               and s.event_id + COUNTERFACTUAL_SUFFIX not in {t.event_id for t in twins})


def test_signal_correlated_noise_keeps_the_envelope_and_loses_the_waveform() -> None:
    """Each sample keeps its magnitude (so every frame its energy) and gets a seeded random
    sign: uncorrelated with the speech, the same for the same seed."""
    rng = np.random.default_rng(3)
    x = (np.sin(np.arange(16000) * 2 * np.pi * 220 / 16000) * rng.uniform(0.1, 0.5, 16000)
         ).astype(np.float32)
    y = signal_correlated_noise(x, 7)
    assert y.dtype == np.float32 and np.array_equal(np.abs(y), np.abs(x))
    assert abs(float(np.corrcoef(x, y)[0, 1])) < 0.05
    assert np.array_equal(y, signal_correlated_noise(x, 7))
    assert not np.array_equal(y, signal_correlated_noise(x, 8))


def test_a_noise_twin_hears_the_act_as_noise_and_is_muted_as_its_original() -> None:
    """The twin's input frames (native rate = dataset rate, 16 kHz, frames of 0.1 s, the pass
    from 1 s): a backchannel from 2.0375 s to 2.15 s, muted from its end as M3 mutes the
    original; the noise twin hears the same magnitudes with random signs over the act, then
    the original's silence; the silent twin hears zeros from the onset::

        t          2.0       2.0375          2.1        2.15           2.2
        original   uuuuuuuuuu|bbbbbbbbbbbbbbbb|bbbbbbbbbb|..............|
        silence    uuuuuuuuuu|................|..........|..............|
        noise      uuuuuuuuuu|~~~~~~~~~~~~~~~~|~~~~~~~~~~|..............|   |~| = |b|

    The plan and the metadata row say which twin it is."""
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    options = PlanOptions(protocol=EvalProtocol.MULTI_GEN, counterfactual=True)
    plan = build_plan(source.dialogues[:1], options)
    silent = [s for s in plan.samples if s.counterfactual]
    noisy = [s for s in build_plan(source.dialogues[:1], replace(
        options, counterfactual_replacement="noise")).samples if s.counterfactual]
    assert [s.event_id for s in noisy] == [s.event_id for s in silent]
    for twin, quiet in zip(noisy, silent, strict=True):
        original = next(s for s in plan.samples if s.event_id == twin.seed_key)
        assert twin.replaced_by == "noise" and twin.fork_time == quiet.fork_time
        assert (twin.removed_from, twin.noise_until) == (original.event_start,
                                                         original.event_end)
        assert twin.mute_start == original.mute_start == original.event_end
        assert quiet.mute_start == quiet.removed_from == original.event_start
    assert noisy[0].to_json()["counterfactual_replacement"] == "noise"
    assert "counterfactual_replacement" not in silent[0].to_json()
    assert noise_seed(silent[0]) is None and noise_seed(noisy[0]) is not None
    with pytest.raises(ValueError, match="counterfactual_replacement"):
        PlanOptions(counterfactual_replacement="babble")  # type: ignore[arg-type]
    rate, span = 16000, (2.0375, 2.15)
    audio = DialogueAudio(np.random.default_rng(0).uniform(-0.5, 0.5, (4 * rate, 2)).astype(
        np.float32), rate)
    grid = Grid(1.0, rate, 1600)
    inputs = Inputs(audio, Dialogue(id="d", events=()), 0, grid)
    onset, end = grid.sample(span[0]), grid.sample(span[1])
    noise = Cut(end, 5, span, (onset, end))
    plain = [inputs.user_frame(k) for k in (10, 11)]  # [2.0, 2.1) and [2.1, 2.2)
    heard = [inputs.user_frame(k, noise) for k in (10, 11)]
    muted = [inputs.user_frame(k, onset) for k in (10, 11)]
    assert np.array_equal(heard[0][:600], plain[0][:600])
    assert np.array_equal(muted[0][:600], plain[0][:600]) and not np.any(muted[0][600:])
    assert not np.any(muted[1])
    act = np.concatenate([heard[0][600:], heard[1][:800]])
    original = np.concatenate([plain[0][600:], plain[1][:800]])
    assert np.array_equal(np.abs(act), np.abs(original))
    assert not np.array_equal(act, original)
    assert not np.any(heard[1][800:])  # muted from the act's end, as its original
    assert np.array_equal(act, audio.noisy_channel(0, rate, span, 5)[32600:34400])


def test_with_repeats_each_try_has_its_own_twin() -> None:
    """``repeats = 2`` with twins: every sample, twin included, gets its tries, and the twin of
    try j is paired with (and seeded as) try j::

        X_r0  X_r1  X_cf_r0  X_cf_r1        X_cf_rj: counterfactual_of X_rj
    """
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    paired = build_plan(source.dialogues[:1], PlanOptions(
        protocol=EvalProtocol.MULTI_GEN, counterfactual=True, repeats=2))
    twins = [s for s in paired.samples if s.counterfactual]
    ids = {s.event_id for s in paired.samples}
    assert twins and all(t.event_id.endswith(("_cf_r0", "_cf_r1")) for t in twins)
    for twin in twins:
        original = twin.to_json()["counterfactual_of"]
        assert original == twin.seed_key and original in ids
        assert original == twin.event_id.replace(COUNTERFACTUAL_SUFFIX + "_r", "_r")


def test_a_background_twin_mutes_from_the_annotated_onset_and_forks_with_its_original() -> None:
    """An MTR-style round, unmuted: the user's turn ends at 3 s, the system replies from 3.5 s
    and a background voice starts at 5 s (the mtr record's ``background_span``)::

        t        0       3  3.5     5      7
        user     uuuuuuuu|         bbbbbbb|         b: background speech (user channel)
        system              SSSSSSSSSSSSSSSSS
        twin               (user muted from 5.0)    fork 3.0 (the original's), same seed

    A muted plan never hears the background (muted from 3 s): no twin.  A background onset
    before the fork (inside the context) makes no twin either."""
    events = (Event(EventKind.TURN, 0, 0.0, 3.0), Event(EventKind.TURN_SHIFT, 1, 3.0, 3.5),
              Event(EventKind.TURN, 1, 3.5, 9.0))
    mtr = {"version": 1, "user_channel": 0,
           "rounds": [{"round": 1, "user_span": [0.0, 3.0], "background_span": [5.0, 7.0]}]}
    d = Dialogue(id="bg", events=events, extra={"mtr": mtr})
    unmuted = PlanOptions(protocol=EvalProtocol.MULTI_REF, channels=(0,), mute=False,
                          counterfactual=True)
    original, twin = build_plan([d], unmuted).samples
    assert twin.event_id == original.event_id + COUNTERFACTUAL_SUFFIX
    assert twin.removed_from == twin.mute_start == 5.0
    assert twin.fork_time == original.fork_time == 3.0  # forcing ends where the original's does
    assert twin.seed_key == original.seed_key == original.event_id
    muted = PlanOptions(protocol=EvalProtocol.MULTI_REF, channels=(0,), counterfactual=True)
    assert len(build_plan([d], muted).samples) == 1
    early = {**mtr, "rounds": [{"round": 1, "user_span": [0.0, 3.0],
                                "background_span": [1.0, 2.0]}]}
    assert len(build_plan([Dialogue(id="e", events=events, extra={"mtr": early})],
                          unmuted).samples) == 1


def _score(event_id: str, kind: str, value: float | None, twin_of: str | None = None,
           ) -> EventScore:
    meta: dict[str, Any] = {"counterfactual_of": twin_of} if twin_of else {}
    event = EventView(event_id, kind, 0.0, 10.0, 1.0, 2.0, (), metadata=meta)
    dim = DimensionScore("user_barge_in", {"missed_stop ↓": value})
    return EventScore(event, "turnbench", "1", (dim,))


def test_paired_effects_are_with_minus_without_over_the_pairs() -> None:
    """Three barge-ins: the system stops for two (missed 0 with the act, 1 without) and misses
    the third either way; a fourth has no twin, a fifth twin has no number::

        pair     with act   without   d
        a        0          1         -1
        b        0          1         -1
        c        1          1          0        effect = mean(d) = -2/3
    """
    originals = [_score("a", "BARGE_IN", 0), _score("b", "BARGE_IN", 0),
                 _score("c", "BARGE_IN", 1), _score("d", "BARGE_IN", 0),
                 _score("e", "BARGE_IN", 0)]
    twins = [_score("a_cf", "BARGE_IN", 1, "a"), _score("b_cf", "BARGE_IN", 1, "b"),
             _score("c_cf", "BARGE_IN", 1, "c"), _score("e_cf", "BARGE_IN", None, "e"),
             _score("z_cf", "BARGE_IN", 1, "z")]
    (effect,) = paired_effects(originals, twins)
    assert (effect.event_type, effect.metric, effect.n) == ("BARGE_IN", "missed_stop ↓", 3)
    assert effect.effect == pytest.approx(-2 / 3)
    assert effect.mean_with_act == pytest.approx(1 / 3) and effect.mean_without_act == 1.0
    assert effect.ci95_low <= effect.effect <= effect.ci95_high <= 0.0
    assert paired_effects(originals, []) == []


@pytest.fixture(scope="module")
def scored(module_tmp: ModuleTemp) -> dict[str, tuple[Path, dict[str, Any]]]:
    root = module_tmp.mktemp("counterfactual")
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, root / "data", 16000)
    dataset, _ = load_dataset(root / "data", audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues[:1], PlanOptions(protocol=EvalProtocol.MULTI_REF,
                                                         counterfactual=True))
    out = {}
    for name, (system, args, score) in SYSTEMS.items():
        run = root / name
        execute_run(load_system(system, args), dataset, plan, run, seed=1, progress=False)
        assert main(["score", str(run), "--variant", "turnbench", *score]) == 0
        scores = "scores-truth" if "--truth" in score else "scores"
        results = run / scores / "turnbench" / "results.json"
        out[name] = (run, json.loads(results.read_text(encoding="utf-8")))
    return out


def _effects(results: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["event_type"], e["metric"]): e for e in results["counterfactual"]}


def test_a_system_that_stops_for_the_act_shows_its_effect_and_one_that_stops_anyway_none(
        scored: dict[str, tuple[Path, dict[str, Any]]]) -> None:
    yields, anyway = _effects(scored["yields"][1]), _effects(scored["reference"][1])
    barge = yields[("BARGE_IN", "missed_stop ↓")]
    assert barge["n"] >= 1 and barge["effect"] == -1.0  # it stops for every barge-in only
    assert barge["ci95_high"] < 0
    backchannel = yields[("BC", "false_stop ↓")]
    assert backchannel["effect"] == 1.0  # it yields to every backchannel, never without one
    assert yields[("BC", "penalty_s ↓")]["effect"] > 0
    assert ("BARGE_IN", "missed_stop ↓") in anyway
    for key, effect in anyway.items():
        assert effect["effect"] == 0.0, key
        assert effect["ci95_low"] == effect["ci95_high"] == 0.0
        assert effect["p_value"] == 1.0


def test_a_system_that_stops_at_every_onset_shows_no_effect_of_the_acts_content(
        tmp_path: Path) -> None:
    """The same runs as above with the acts replaced by noise: ``scripted`` hears by energy, so
    it stops 0.2 s into the noise as into the speech (effect 0 on every pair), where the silent
    twins showed the act's whole effect; the twin's saved user channel is the noise it heard."""
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, tmp_path / "data", 16000)
    run = tmp_path / "noise"
    args = [a for k, v in SCRIPTED.items() for a in ("--system-arg", f"{k}={v}")]
    assert main(["run", "--system", "scripted", *args,
                 "--dataset", str(tmp_path / "data"), "--protocol",
                 "multi-ref", "--counterfactual", "noise", "--out", str(run)]) == 0
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    assert "counterfactual_replacement" in json.dumps(config)
    assert main(["score", str(run), "--variant", "turnbench", "--truth"]) == 0
    results = json.loads((run / "scores-truth" / "turnbench" / "results.json").read_text())
    effects = _effects(results)
    assert effects[("BARGE_IN", "missed_stop ↓")]["n"] >= 1
    assert effects[("BC", "false_stop ↓")]["n"] >= 1
    for key, effect in effects.items():
        assert effect["effect"] == 0.0, key
    rows = [json.loads(line) for line in (run / "metadata.jsonl").read_text().splitlines()]
    twin = next(r for r in rows if r.get("counterfactual_of"))
    assert twin["counterfactual_replacement"] == "noise"
    original = next(r for r in rows if r["event_id"] == twin["counterfactual_of"])
    a, rate = read_audio(run / original["output_audio_path"])
    b, _ = read_audio(run / twin["output_audio_path"])
    onset = round((twin["event_start"] - twin["input_start"]) * rate)
    end = round((original["event_end"] - original["input_start"]) * rate)
    assert np.any(b[onset:end, 0]) and not np.array_equal(a[onset:end, 0], b[onset:end, 0])
    assert np.allclose(np.abs(a[onset:end, 0]), np.abs(b[onset:end, 0]), atol=1e-4)


def test_twins_stay_out_of_the_events_and_aggregates_and_share_the_prefix(
        scored: dict[str, tuple[Path, dict[str, Any]]]) -> None:
    run, results = scored["yields"]
    assert not any(e["event_id"].endswith(COUNTERFACTUAL_SUFFIX) for e in results["events"])
    per_event = (run / "scores-truth" / "turnbench" / "per_event.jsonl").read_text()
    assert COUNTERFACTUAL_SUFFIX + '"' not in per_event
    rows = [json.loads(line) for line in (run / "metadata.jsonl").read_text().splitlines()]
    twins = [r for r in rows if r.get("counterfactual_of")]
    assert twins
    for twin in twins:
        original = next(r for r in rows if r["event_id"] == twin["counterfactual_of"])
        a, rate = read_audio(run / original["output_audio_path"])
        b, _ = read_audio(run / twin["output_audio_path"])
        onset = round((twin["event_start"] - twin["input_start"]) * rate)
        assert np.array_equal(a[:onset, 1], b[:onset, 1])  # one prefix, two continuations
        assert not np.any(b[onset:, 0])  # the twin hears no act
        assert np.any(a[onset:, 0])


def test_a_background_twin_runs_as_its_original_until_the_onset(tmp_path: Path) -> None:
    """The first TURN_SHIFT of the voiced bundled dialogue, unmuted under Multi (ref), with a
    background voice annotated 1 s after the shift: the twin's system output equals the
    original's up to the onset (one prefix, the same seed), and its user input is silent from
    there::

        user      uuuuuuu|        bbbbbbb          original: hears the background
        user      uuuuuuu|        .......          twin: muted from the onset
        system             SSSS?                   identical until the onset
                  t = shift   t + 1
    """
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, tmp_path / "data", 16000)
    dataset, _ = load_dataset(tmp_path / "data", audio=Need.REQUIRE)
    first = dataset.dialogues[0]
    plain = build_plan([first], PlanOptions(protocol=EvalProtocol.MULTI_REF, mute=False))
    shift = next(s for s in plain.samples if s.event_type is EventKind.TURN_SHIFT)
    onset = shift.event_start + 1.0
    mtr = {"version": 1, "user_channel": shift.user_channel,
           "rounds": [{"round": 1, "user_span": [shift.input_start, shift.event_start],
                       "background_span": [onset, onset + 1.0]}]}
    annotated = replace(first, extra={**first.extra, "mtr": mtr})
    dataset = replace(dataset, dialogues=(annotated, *dataset.dialogues[1:]))
    plan = build_plan([annotated], PlanOptions(protocol=EvalProtocol.MULTI_REF, mute=False,
                                               counterfactual=True))
    original = next(s for s in plan.samples if s.event_id == shift.event_id)
    twin = next(s for s in plan.samples if s.event_id == shift.event_id + COUNTERFACTUAL_SUFFIX)
    assert twin.removed_from == onset
    run = tmp_path / "run"
    execute_run(load_system("scripted", SCRIPTED), dataset, plan, run, seed=1, progress=False)
    a, rate = read_audio(run / "samples" / first.id / f"{original.event_id}.wav")
    b, _ = read_audio(run / "samples" / first.id / f"{twin.event_id}.wav")
    cut = round((onset - original.input_start) * rate)
    assert np.array_equal(a[:cut], b[:cut])
    assert not np.any(b[cut:, 0])
    assert a.shape == b.shape


def test_realism_from_the_truth_analysis_is_one_line_and_writes_nothing(
        scored: dict[str, tuple[Path, dict[str, Any]]], capsys: pytest.CaptureFixture[str],
        ) -> None:
    """The realism variant reads the analysed user and reference channels, which a truth
    analysis (the system's logged speech) has not."""
    run, _ = scored["yields"]
    capsys.readouterr()
    assert main(["score", str(run), "--variant", "realism", "--truth"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "without --truth" in err[0] and str(run) in err[0]
    assert not (run / "scores-truth" / "realism").exists()


def test_the_run_configuration_names_counterfactual_only_when_set(
        scored: dict[str, tuple[Path, dict[str, Any]]]) -> None:
    """A plain plan's configuration is as before the option existed (its hash unchanged, so an
    older run directory resumes); a run with twins records them."""
    from duplexeval.runs._execution import _plan_config

    run, _ = scored["yields"]
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    assert config["config"]["plan"]["counterfactual"] is True
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    plain = build_plan(source.dialogues[:1], PlanOptions(protocol=EvalProtocol.MULTI_REF))
    assert "counterfactual" not in _plan_config(plain)
