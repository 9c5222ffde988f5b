"""``duplexeval sweep``: the grid's syntax, the table's rules (preserve rate, monotone within
the intervals), bad input refused in one line with nothing written, and a sweep end to end."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from duplexeval.app.sweep import parse_grid
from duplexeval.cli import main
from duplexeval.errors import DuplexevalError
from duplexeval.report._sweep import SweepCell, SweepMetric


def test_grid_sweeps_one_parameter_and_holds_the_others() -> None:
    grid = parse_grid(["noise:snr=30,20,10,0,color=white", "gain:db=-6"])
    assert grid.parameter == "noise:snr"
    assert [p.value for p in grid.points] == [30.0, 20.0, 10.0, 0.0]
    assert [p.name for p in grid.points] == ["noise-snr=30", "noise-snr=20", "noise-snr=10",
                                             "noise-snr=0"]
    assert [c.spec() for c in grid.fixed] == ["gain:db=-6"]
    assert [c.spec() for c in grid.points[2].conditions] == ["gain:db=-6",
                                                             "noise:color=white,snr=10"]


@pytest.mark.parametrize(("texts", "message"), [
    (["noise:snr=30"], "exactly one condition parameter over a list, e.g."),
    (["noise:snr=30", "gain:db=1"], "(got 0 lists)"),
    (["noise:snr=30,20", "gain:db=1,2"], "(got 2 lists)"),
    (["fog:depth=1,2"], "unknown kind 'fog'"),
    (["noise:snr=30,99"], "snr must be a finite number in [-20, 60], got 99"),
    (["noise:snr=30,30"], "snr=30 is given twice"),
    (["noise:snr=30,loud"], "snr='loud' is not a number"),
    (["noise:snr=30,nan"], "snr=nan is not finite"),
    (["noise:30,20"], "'30' is not key=value"),
    (["noise:snr=30,,20"], "an empty value in the list"),
    (["noise:snr=30,20", "gain:db=99"], "db must be a finite number in [-60, 40], got 99"),
])
def test_bad_grids_are_one_error(texts: list[str], message: str) -> None:
    with pytest.raises(DuplexevalError) as found:
        parse_grid(texts)
    assert message in str(found.value) and "\n" not in str(found.value)


def _cells(*spans: tuple[float, float, float]) -> tuple[SweepCell, ...]:
    return tuple(SweepCell(20, m, lo, hi, None) for m, lo, hi in spans)


def test_monotone_within_the_intervals() -> None:
    """``tor ↑`` (higher is better) from clean to strong::

        clean  0.9 [0.8, 1.0]
        step   0.92 [0.85, 0.97]   better, but the intervals overlap: allowed
        step   0.5 [0.4, 0.6]      worse
        step   0.7 [0.62, 0.78]    better and apart from [0.4, 0.6]: not monotone
    """
    ok = SweepMetric("TURN_SHIFT", "tor ↑", _cells((0.9, 0.8, 1.0), (0.92, 0.85, 0.97),
                                                   (0.5, 0.4, 0.6)))
    assert ok.better == "higher" and ok.monotone is True
    bad = SweepMetric("TURN_SHIFT", "tor ↑", (*ok.cells, *_cells((0.7, 0.62, 0.78))))
    assert bad.monotone is False
    latency = SweepMetric("TURN_SHIFT", "latency ↓", _cells((0.3, 0.2, 0.4), (0.6, 0.5, 0.7)))
    assert latency.better == "lower" and latency.monotone is True
    assert SweepMetric("TURN_SHIFT", "latency ↓", _cells((0.6, 0.5, 0.7),
                                                         (0.3, 0.2, 0.4))).monotone is False
    assert SweepMetric("TURN_HOLD", "tor_err_normal", ok.cells).monotone is None
    assert SweepMetric("TURN_SHIFT", "tor ↑", (ok.cells[0], None)).monotone is None


@pytest.mark.parametrize("extra", [
    ["--condition", "noise:snr=30"],
    ["--condition", "noise:snr=30,99"],
    ["--condition", "reverb-typo:x=1,2"],
    ["--condition", "noise:snr=30,20", "--variant", "nope"],
    ["--condition", "noise:snr=30,20", "--patience", "2"],
])
def test_bad_input_is_one_line_and_writes_nothing(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        extra: list[str]) -> None:
    out = tmp_path / "sweep"
    try:
        code = main(["sweep", "--system", "scripted", "--dataset", str(sample_voiced), "-o",
                     str(out), *extra])
    except SystemExit as exc:  # an option's value refused by argparse (--variant)
        code = int(exc.code or 0)
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("duplexeval: ")
    assert not out.exists()


def test_sweep_runs_scores_tabulates_plots_and_resumes(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scripted`` hears the user through a -45 dBFS energy detector, so pink noise at 10 dB
    SNR (over the whole user channel, played through the window: ``--no-mute``) mostly keeps
    it from hearing the user stop: its SHIFT TOR falls from 1 clean and at 40 dB to under
    0.5 at 10 dB (a few pink-noise lulls fall under the threshold).  The
    table's numbers are each run's own, the preserve rate their ratio; a rerun resumes every
    run (no frame stepped) and writes the same files."""
    out = tmp_path / "sweep"
    args = ["sweep", "--system", "scripted", "--dataset", str(sample_voiced), "--no-mute",
            "--condition", "noise:snr=40,10", "--asr", "none", "-o", str(out)]
    assert main(args) == 0
    summary = json.loads((out / "sweep.json").read_text())
    assert summary["runs"] == ["runs/clean", "runs/noise-snr=40", "runs/noise-snr=10"]
    tor = next(m for m in summary["metrics"]
               if (m["event_type"], m["metric"]) == ("TURN_SHIFT", "tor ↑"))
    means = [c["mean"] for c in tor["cells"]]
    assert means[0] == means[1] == 1.0 and means[2] < 0.5
    assert [c["preserve_rate"] for c in tor["cells"]] == [1.0, 1.0, means[2]]
    assert tor["monotone_within_ci"] is True
    for run, cell in zip(summary["runs"], tor["cells"], strict=True):
        results = json.loads((out / run / "scores" / "m3" / "results.json").read_text())
        row = next(r for r in results["aggregates"] if r["event_type"] == "TURN_SHIFT"
                   and r["metric"] == "tor ↑" and r["language"] == "all"
                   and r["domain"] == "all" and r["round"] is None)
        assert (row["n"], row["mean"], row["ci95_low"], row["ci95_high"]) == (
            cell["n"], cell["mean"], cell["ci95_low"], cell["ci95_high"])
    config = json.loads((out / "runs" / "noise-snr=10" / "config.json").read_text())
    assert config["config"]["conditions"] == [{"kind": "noise", "color": "pink", "snr": 10.0}]
    assert json.loads((out / "runs" / "clean" / "config.json").read_text())["config"][
        "conditions"] == []
    rows = list(csv.DictReader(io.StringIO((out / "sweep.csv").read_text())))
    shift = [r for r in rows if (r["event_type"], r["metric"]) == ("TURN_SHIFT", "tor ↑")]
    assert [(r["point"], r["value"], r["preserve_rate"]) for r in shift] == [
        ("clean", "", "1.0"), ("noise-snr=40", "40", "1.0"), ("noise-snr=10", "10",
                                                              repr(means[2]))]
    assert {r["definition"] for r in rows} == {"m3 variant, official code"}
    table = (out / "sweep.md").read_text()
    assert "| TURN_SHIFT | tor ↑ | 1.000 [" in table and f"pr {means[2]:.2f} | yes |" in table
    plot = out / "plots" / "TURN-SHIFT-tor.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    def frames() -> list[int]:
        return [json.loads((out / r / "run_summary.json").read_text())["frames_stepped"]
                for r in summary["runs"]]

    before = frames(), {p: p.read_bytes() for p in (out / "sweep.md", out / "sweep.csv",
                                                    out / "sweep.json", plot)}
    capsys.readouterr()
    assert main(args) == 0
    assert frames() == before[0]
    assert {p: p.read_bytes() for p in before[1]} == before[1]


@pytest.mark.slow
def test_cascade_latency_degrades_with_noise_within_the_intervals(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The acceptance sweep on a small subset (sample-en's QA dialogue, the user unmuted):
    the cascade's SHIFT TOR and latency degrade monotonically within their intervals from
    clean through 30 dB to 0 dB of pink noise, and its latency at 0 dB is above the clean one
    (its end-of-turn detector hears the noise go on; ``perf/sweep_snr.py`` is the full grid)."""
    import shutil

    data = tmp_path / "qa"
    shutil.copytree(sample_voiced, data)
    lines = (data / "test.jsonl").read_text().splitlines()
    (data / "test.jsonl").write_text("\n".join(x for x in lines if '"sample_qa_' in x) + "\n")
    out = tmp_path / "sweep"
    assert main(["sweep", "--system", "cascade", "--dataset", str(data), "--no-mute",
                 "--condition", "noise:snr=30,0", "--asr", "none", "-o", str(out)]) == 0
    metrics = {(m["event_type"], m["metric"]): m
               for m in json.loads((out / "sweep.json").read_text())["metrics"]}
    tor, latency = metrics[("TURN_SHIFT", "tor ↑")], metrics[("TURN_SHIFT", "latency ↓")]
    assert tor["monotone_within_ci"] is True and latency["monotone_within_ci"] is True
    assert latency["cells"][2]["mean"] > latency["cells"][0]["mean"]
