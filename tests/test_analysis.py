"""Analysis of run directories: VAD segments against the truth ``scripted`` logs, the M3 metrics
from analysed audio against those from the truth, caching, and ``score RUN_DIR``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.analysis import pipeline
from duplexeval.analysis.pipeline import AnalysisOptions, analyze_run
from duplexeval.cli import main
from duplexeval.data.locate import bundled_dataset
from duplexeval.data.validate import Need, load_dataset
from duplexeval.data.voice_bursts import voice_bursts
from duplexeval.metrics import get_variant
from duplexeval.metrics.accuracy import boundary_errors, compare_scores, describe
from duplexeval.metrics.m3_outputs import read_m3_outputs
from duplexeval.metrics.results import load_results
from duplexeval.metrics.scoring import score_events
from duplexeval.protocols import PlanOptions, Protocol, build_plan
from duplexeval.runs import execute_run
from duplexeval.speech.activity import ActivityOptions, VadEngine
from duplexeval.systems.registry import load_system

VAD_ONLY = AnalysisOptions(vad=ActivityOptions(engine=VadEngine.SILERO), asr="none")


@pytest.fixture(scope="module")
def scripted_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """``scripted`` (with jitter, and with a backchannel threshold) on the bundled English data
    voiced with clip-bank speech, under all three protocols."""
    root = tmp_path_factory.mktemp("analysis")
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, root / "data", 16000)
    dataset, _ = load_dataset(root / "data", audio=Need.REQUIRE)
    runs = []
    for protocol, args in [(Protocol.MULTI_GEN, {"jitter": "0.15"}),
                           (Protocol.SINGLE, {"jitter": "0.15", "delay": "0.5"}),
                           (Protocol.MULTI_REF, {"ignore_shorter": "0.6", "stop_delay": "0.4"})]:
        plan = build_plan(dataset.dialogues, PlanOptions(protocol=protocol))
        out = root / protocol.value
        execute_run(load_system("scripted", args), dataset, plan, out, seed=1, progress=False)
        runs.append(out)
    return runs


def _events(folder: Path) -> list:
    return read_m3_outputs(folder)[0]


def test_analysis_matches_the_logged_truth(scripted_runs: list[Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    m3 = get_variant("m3")
    onsets, offsets, agreements = [], [], []
    for run in scripted_runs:
        analysed = _events(analyze_run(run, VAD_ONLY, progress=False, cache=tmp_path))
        truth = _events(analyze_run(run, truth=True, progress=False))
        on, off = boundary_errors(truth, analysed)
        onsets += on
        offsets += off
        agreements.append(compare_scores(score_events(truth, m3), score_events(analysed, m3)))
    boundaries = onsets + offsets
    with capsys.disabled():
        print(f"\nboundaries: {describe(boundaries)}")
    assert len(boundaries) >= 100
    assert sum(e <= 0.05 for e in boundaries) >= 0.95 * len(boundaries)
    verdicts = sum(a.verdicts for a in agreements)
    assert verdicts >= 50
    assert sum(a.verdicts_equal for a in agreements) >= 0.98 * verdicts
    latencies = [e for a in agreements for e in a.latency_errors]
    one_sided = sum(a.both_defined_mismatch for a in agreements)
    assert sum(e <= 0.05 for e in latencies) >= 0.95 * (len(latencies) + one_sided)


def test_analysis_output_layout_and_cache(scripted_runs: list[Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    run = scripted_runs[0]
    folder = analyze_run(run, VAD_ONLY, progress=False, cache=tmp_path)
    meta = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines()]
    run_meta = (run / "metadata.jsonl").read_text().splitlines()
    assert len(meta) == len(run_meta) and all(m["output_asr_path"] for m in meta)
    transcript = json.loads((folder / meta[0]["output_asr_path"]).read_text())
    assert {s["channel"] for s in transcript["segments"]} == {0, 1}
    settings = json.loads((folder / "settings.json").read_text())
    assert settings["vad"]["engine"] == VAD_ONLY.vad.engine.value and settings["asr"] == "none"
    before = {p.name: p.read_bytes() for p in folder.rglob("*.json")}

    def no_vad(*args: object, **kwargs: object) -> None:
        raise AssertionError("re-analysis must come from the cache")

    monkeypatch.setattr(pipeline, "detect_activity", no_vad)
    analyze_run(run, VAD_ONLY, progress=False, cache=tmp_path)
    assert {p.name: p.read_bytes() for p in folder.rglob("*.json")} == before


def test_score_run_dir_writes_results_with_settings(scripted_runs: list[Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    run = scripted_runs[0]
    assert main(["score", str(run), "--asr", "none"]) == 0
    out = capsys.readouterr().out
    assert "SHIFT TOR% ↑" in out and run.name in out
    results = load_results(run / "scores" / "results.json")
    assert results.source.kind == "run" and results.analysis is not None
    assert results.analysis["asr"] == "none" and results.variant.name == "m3"
    assert {e.language for e in results.events} == {"en"}
    assert (run / "scores" / "aggregate.json").is_file()


def test_truth_needs_a_system_that_logs_speech(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, tmp_path / "data", 16000)
    dataset, _ = load_dataset(tmp_path / "data", audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues[:1], PlanOptions(protocol=Protocol.MULTI_GEN))
    execute_run(load_system("silence", {}), dataset, plan, tmp_path / "run", progress=False)
    assert main(["analyze", str(tmp_path / "run"), "--truth"]) == 2
    assert "logged no speech intervals" in capsys.readouterr().err
