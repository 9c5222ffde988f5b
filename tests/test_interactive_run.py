"""An ``interactive`` run as a run directory: realised samples, the simulated user's options,
and the protocol in the tables and the eval benchmarks.

Roles: user channel 0, system channel 1; times in seconds; ``=`` speech, ``.`` silence.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.benchmarks import BENCHMARKS, Benchmark, Cell, EvalManifest
from duplexeval.benchmarks._m3 import M3
from duplexeval.cli import main
from duplexeval.plan import EvalProtocol, PlanOptions
from duplexeval.runs._interactive import run_interactive
from duplexeval.runs._interactive_run import realised_dialogue, realised_samples
from duplexeval.runs._simulated_user import UserPolicy
from duplexeval.systems import Capabilities, ClockKind, Session, SessionSpec, System, load_system
from duplexeval.systems.builtin._scripted import ScriptedSystem
from test_interactive import BARGE, SPF, TWO_TURNS, _dialogue, _starts

OPTIONS = PlanOptions(protocol=EvalProtocol.INTERACTIVE, window=10.0)


def test_realised_events_are_planned_on_the_realised_timeline() -> None:
    """The samples come from the realised dialogue, not the reference: the slow system's
    TURN_SHIFTs are 1.5 s long where the fast one's are 0.3 s, and its second user turn (and
    so its second sample) starts 1.2 s later::

        fast  user |==1==|.............|==2==|
              sys        .3|==2 s==|.88.     .3|==2 s==|
        slow  user |==1==|.........................|==2==|
              sys        ...1.5...|==2 s==|.88.            ...1.5...|==2 s==|
        sample 0: event [2.0, 2.0 + delay], input [0.5, 0.5 + 1.5 + W], context [0, 0.5]
    """
    d, audio = _dialogue(TWO_TURNS)
    got = {}
    for delay in (0.3, 1.5):
        run = run_interactive(ScriptedSystem(delay=str(delay)), d, audio, 0,
                              UserPolicy(gaps=(0.88,), patience=3.0, tail=10.0), 0)
        realised = realised_dialogue("d1", run.timeline_json(0))
        got[delay] = realised_samples(realised, 0, OPTIONS, run.duration)
    for delay, samples in got.items():
        assert [s.event_type.value for s in samples] == ["TURN_SHIFT", "TURN_SHIFT"]
        first = samples[0]
        assert (first.event_start, first.input_start) == (2.0, 0.5)
        assert first.event_end == pytest.approx(2.0 + delay, abs=1e-9)
        assert first.input_end == pytest.approx(2.0 + 10.0, abs=1e-9)
        assert (first.context_start, first.context_end) == (0.0, 0.5)
        assert not first.muted and first.user_channel == 0
        assert [s.event_id for s in samples] == ["d1_ch0_0000_smooth_turn_taking",
                                                 "d1_ch0_0001_smooth_turn_taking"]
    fast, slow = got[0.3][1], got[1.5][1]
    assert slow.input_start - fast.input_start == pytest.approx(1.2, abs=1e-9)
    assert slow.event_end - slow.event_start == pytest.approx(1.5, abs=1e-9)


def test_user_that_does_not_yield_talks_its_turn_out() -> None:
    """``yield_to_barge_in=False`` (``--no-yield``): the reference says the user yielded to
    the system's barge-in, but this user talks its 3 s turn out::

        user |==1==|.32|=====2 (3 s)=====|       (no yield in the log)
        sys          .3|=======2 s=======|
    """
    turns = [("TURN", 0, 0.5, 1.0), ("TURN", 0, 1.2, 4.2), ("TURN", 1, 1.6, 3.6),
             ("BARGE_IN", 1, 1.6, 2.0)]
    d, audio = _dialogue(turns)
    system = ScriptedSystem(delay="0.3", duration="2", stop_delay="100")
    yielding = run_interactive(system, d, audio, 0, UserPolicy(gaps=(0.0,), patience=0.32), 0)
    stubborn = run_interactive(system, d, audio, 0, UserPolicy(
        gaps=(0.0,), patience=0.32, yield_to_barge_in=False), 0)
    assert [r["action"] for r in yielding.log if r.get("action") == "yield"] == ["yield"]
    assert not [r for r in stubborn.log if r.get("action") == "yield"]
    assert abs(stubborn.user_spans[1].duration - 3.0) < SPF + 1e-9
    assert yielding.user_spans[1].duration < 3.0 - 0.5


@pytest.mark.parametrize("after", [0.4, 1.6])
def test_barge_in_point_moves_with_the_policy(after: float) -> None:
    """The barge-in starts ``barge_in_after`` after the heard system onset, whatever it is::

        user |==1==|.................|====barge====|
        sys          .3|==========6 s=============...
                         ^onset +after^
    """
    d, audio = _dialogue(BARGE)
    run = run_interactive(ScriptedSystem(delay="0.3", duration="6", stop_delay="100"), d,
                          audio, 0, UserPolicy(gaps=(0.4,), barge_in_after=after), 0)
    start = next(r for r in run.log if r.get("action") == "start" and r["item"] == 1)
    assert start["frame"] == start["heard"]["onset_frame"] + round(after / SPF)


def test_patience_sets_when_a_silent_system_gets_the_next_turn() -> None:
    """A system that never answers: the next turn comes ``patience`` after the last one, for
    1 s and for 2 s of patience; the 2 s user's dialogue is 1 s longer::

        user |==1==|..p..|==2==|
        sys   (silent)
    """
    d, audio = _dialogue(TWO_TURNS)
    runs = {p: run_interactive(ScriptedSystem(delay="1000"), d, audio, 0,
                               UserPolicy(gaps=(0.4,), patience=p), 0) for p in (1.0, 2.0)}
    starts = {p: _starts(r.log)[1] for p, r in runs.items()}
    assert isinstance(starts[1.0], int) and isinstance(starts[2.0], int)
    assert starts[2.0] - starts[1.0] == round(1.0 / SPF)
    assert runs[2.0].duration - runs[1.0].duration == pytest.approx(1.0, abs=1e-9)


def _run(dataset: Path, out: Path, *extra: str) -> int:
    return main(["run", "--system", "scripted", "--dataset", str(dataset), "--protocol",
                 "interactive", "--out", str(out), *extra])


def test_run_writes_realised_samples_policy_and_resumes(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``run --protocol interactive`` writes a run directory like any other: one sample per
    realised event, its wav the realised dialogue over its window, its metadata the realised
    times; the policy options are recorded; a rerun resumes past every sample."""
    out = tmp_path / "run"
    args = ("--patience", "2.5", "--barge-in-after", "0.6", "--bc-after", "0.7",
            "--yield-delay", "0.1", "--no-yield")
    assert _run(sample_voiced, out, *args) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["protocol"] == "interactive"
    policy = config["config"]["user_policy"]
    assert (policy["patience"], policy["barge_in_after"], policy["bc_after"],
            policy["yield_delay"], policy["yield_to_barge_in"]) == (2.5, 0.6, 0.7, 0.1, False)
    assert policy["tail"] == 10.0 and len(policy["gaps"]) > 1  # the window; suite's gaps
    rows = [json.loads(line) for line in (out / "metadata.jsonl").read_text().splitlines()]
    assert rows and {r["context_mode"] for r in rows} == {"interactive"}
    for row in rows:
        stem = f"{row['sample_id']}_ch{row['user_channel']}"
        timeline = json.loads((out / "interactive" / f"{stem}.timeline.json").read_text())
        ch = {"user": row["user_channel"], "system": 1 - row["user_channel"]}
        events = {(e["event"], ch[e["role"]], round(e["time"][0], 9))
                  for e in timeline["events"]}  # sample times are kept to 9 decimals
        kind_channel = row["system_channel"] if row["event_type"] == "TURN_SHIFT" \
            else row["user_channel"]
        assert (row["event_type"], kind_channel, row["event_start"]) in events
        whole, rate = sf.read(out / "interactive" / f"{stem}.wav", dtype="float32")
        part, rate2 = sf.read(out / row["output_audio_path"], dtype="float32")
        lo = round(row["input_start"] * rate)
        assert rate2 == rate and np.array_equal(part, whole[lo:lo + len(part)])
        assert row["input_end"] <= timeline["duration"] + 1e-9
    head = json.loads((out / "interactive" / f"{rows[0]['sample_id']}_ch"
                       f"{rows[0]['user_channel']}.decisions.jsonl").read_text().splitlines()[0])
    assert head["policy"]["patience"] == 2.5
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
              and p.name != "run_summary.json"}
    capsys.readouterr()
    assert _run(sample_voiced, out, *args) == 0
    assert f"resumed past {len(rows)}" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in before} == before
    assert main(["replay", str(out), "--dataset", str(sample_voiced)]) == 0


def test_conditions_apply_under_interactive_and_replay_applies_them_again(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--condition noise:snr=10`` under interactive: the user's items carry the noise (the
    realised user channel differs from the clean run's), the configuration and every log's
    header name it, and ``replay`` puts the audio under it again (reproduced)."""
    clean, noisy = tmp_path / "clean", tmp_path / "noisy"
    assert _run(sample_voiced, clean) == 0
    assert _run(sample_voiced, noisy, "--condition", "noise:snr=10") == 0
    config = json.loads((noisy / "config.json").read_text())
    assert config["config"]["conditions"] == [{"kind": "noise", "color": "pink", "snr": 10.0}]
    logs = sorted((noisy / "interactive").glob("*.decisions.jsonl"))
    for log in logs:
        head = json.loads(log.read_text().splitlines()[0])
        assert head["conditions"] == [{"kind": "noise", "color": "pink", "snr": 10.0}]
        wav = log.name.replace(".decisions.jsonl", ".wav")
        a, _ = sf.read(noisy / "interactive" / wav, dtype="float32")
        b, _ = sf.read(clean / "interactive" / wav, dtype="float32")
        n = min(len(a), len(b))
        assert not np.array_equal(a[:n, 0], b[:n, 0])
    capsys.readouterr()
    assert main(["replay", str(noisy), "--dataset", str(sample_voiced)]) == 0
    assert capsys.readouterr().out.count("reproduced") == len(logs)


@pytest.mark.parametrize("bad", [["--patience", "-1"], ["--patience", "nan"],
                                 ["--barge-in-after", "61"], ["--bc-after", "inf"],
                                 ["--yield-delay", "x"]])
def test_bad_policy_values_are_one_line_and_write_nothing(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        bad: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _run(sample_voiced, tmp_path / "run", *bad)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and bad[0] in err[0]
    assert not (tmp_path / "run").exists()


def test_policy_options_need_the_interactive_protocol(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--system", "scripted", "--dataset", str(sample_voiced), "--protocol",
                 "multi-gen", "--patience", "2", "--no-yield", "--out",
                 str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--patience, --no-yield" in err[0] and "interactive" in err[0]
    assert not (tmp_path / "run").exists()


class FileClock(System):
    """A whole-file system: it cannot react frame by frame."""

    name = "file-clock"
    version = "1"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.capabilities = Capabilities(sample_rate=16000, frame_size=320,
                                         clock=ClockKind.FILE)

    def open(self, spec: SessionSpec) -> Session:
        return load_system("silence", {"sample_rate": "16000"}).open(spec)


TINY = Benchmark(
    name="tiny-m3i", version="0", title="tiny M3 interactive", seed="a test",
    cells=(Cell("m3-qa-en", EvalProtocol.MULTI_GEN, "m3", content_events=()),
           Cell("m3-qa-en", EvalProtocol.INTERACTIVE, "m3", content_events=())),
    write_tables=M3.write_tables)


@pytest.fixture
def tiny() -> object:
    BENCHMARKS.add(TINY.name, TINY)
    yield TINY
    BENCHMARKS.remove(TINY.name)


def test_eval_gives_interactive_its_cell_and_column_and_verifies(
        tiny: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An interactive cell beside Multi (gen): scored, in Table 5 as a row and in Table 6 as
    the ``Inter.`` column, and the bundle verifies; a whole-file system gets it skipped with
    the reason."""
    out = tmp_path / "bundle"
    assert main(["eval", "tiny-m3i", "--system", "scripted", "--limit", "1", "-o",
                 str(out)]) == 0
    assert "2 of 2 cells run" in capsys.readouterr().out
    manifest = EvalManifest.model_validate_json((out / "eval.json").read_text())
    cell = next(c for c in manifest.cells if c.protocol == "interactive")
    assert cell.status == "done" and cell.samples > 0
    results = json.loads((out / cell.results).read_text())
    assert results["source"]["protocol"] == "interactive"
    assert any(r["event_type"] == "TURN_SHIFT" and r["metric"] == "tor ↑"
               for r in results["aggregates"])
    table5 = (out / "tables" / "tiny-m3i" / "table5.md").read_text()
    assert "scripted (Gen.)" in table5 and "scripted (Inter.)" in table5
    table6 = (out / "tables" / "tiny-m3i" / "table6.md").read_text()
    assert "SHIFT TOR↑ Inter." in table6 and "Inter.: interactive" in table6
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    skipped = tmp_path / "skipped"
    assert main(["eval", "tiny-m3i", "--system", "test_interactive_run:FileClock", "--limit",
                 "1", "-o", str(skipped)]) == 0
    assert "skipped m3-qa-en-interactive: file-clock: interactive needs a system that " \
           "answers frame by frame" in capsys.readouterr().out


@pytest.mark.slow
def test_eval_m3_protocol_interactive_writes_the_column_and_verifies(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval m3 --protocol multi-gen --protocol interactive`` (the first dialogue of each
    suite): the eight cells run, Table 5 has the interactive rows and Table 6 the column beside
    Multi (gen), the bundle verifies."""
    out = tmp_path / "bundle"
    assert main(["eval", "m3", "--system", "scripted", "--protocol", "multi-gen", "--protocol",
                 "interactive", "--limit", "1", "-o", str(out)]) == 0
    assert "M3-DuplexBench (v3): 8 of 8 cells run" in capsys.readouterr().out
    assert "scripted (Inter.)" in (out / "tables" / "m3" / "table5.md").read_text()
    table6 = (out / "tables" / "m3" / "table6.md").read_text()
    assert "SHIFT TOR↑ Gen." in table6 and "SHIFT TOR↑ Inter." in table6
    assert main(["verify", str(out)]) == 0


def test_an_interactive_run_tells_its_caller_of_every_planned_sample(sample_voiced: Path,
                                                                     tmp_path: Path) -> None:
    """``on_samples`` (``eval``'s progress bar, whose total is the planned samples) hears of
    every planned sample of an interactive run, as of a static one's, and again on resume:
    the bar of an evaluation with interactive cells ends at 100 %, not short of it."""
    from duplexeval.data import Need, load_dataset
    from duplexeval.plan import build_plan
    from duplexeval.runs import execute_run

    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    plan = build_plan(dataset, OPTIONS)
    assert plan.samples
    for _ in ("run", "resume"):
        told: list[int] = []
        execute_run(ScriptedSystem(delay="0.3"), dataset, plan, tmp_path / "run",
                    progress=False, on_samples=told.append)
        assert sum(told) == len(plan.samples)
