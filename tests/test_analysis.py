"""Analysis of run directories: VAD segments against the truth ``scripted`` logs, the M3 metrics
from analysed audio against those from the truth, caching, and ``score RUN_DIR``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ModuleTemp
from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.analysis import _pipeline as pipeline
from duplexeval.analysis._pipeline import AnalysisOptions, analyze_run
from duplexeval.cli import main
from duplexeval.data import Need, bundled_dataset, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._accuracy import (
    ACCURACY_PROTOCOLS,
    Agreement,
    BoundaryMatch,
    boundary_matches,
    compare_scores,
    match_times,
    report_lines,
)
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._scoring import score_events
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.results import load as load_results_file
from duplexeval.runs import execute_run
from duplexeval.speech._activity import ActivityOptions, VadEngine
from duplexeval.systems import load_system

VAD_ONLY = AnalysisOptions(vad=ActivityOptions(engine=VadEngine.SILERO), asr="none")


@pytest.fixture(scope="module")
def scripted_runs(module_tmp: ModuleTemp) -> list[Path]:
    """``scripted`` (with jitter, and with a backchannel threshold) on the bundled English data
    voiced with clip-bank speech, under all three protocols: the runs of
    ``perf/analysis_accuracy.py``'s sample-en figures."""
    root = module_tmp.mktemp("analysis")
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, root / "data", 16000)
    dataset, _ = load_dataset(root / "data", audio=Need.REQUIRE)
    runs = []
    for protocol, args in ACCURACY_PROTOCOLS:
        plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol(protocol)))
        out = root / protocol
        execute_run(load_system("scripted", args), dataset, plan, out, seed=1, progress=False)
        runs.append(out)
    return runs


def _events(folder: Path) -> list:
    return read_m3_outputs(folder)[0]


def test_analysis_matches_the_logged_truth(scripted_runs: list[Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The README's accuracy figures (sample-en, Silero; ``perf/analysis_accuracy.py``
    prints them from the same runs), checked with a margin below the measured values."""
    m3 = get_variant("m3")
    bounds = {"onset": BoundaryMatch(0, 0), "offset": BoundaryMatch(0, 0)}
    agreement = Agreement()
    for run in scripted_runs:
        analysed = _events(analyze_run(run, VAD_ONLY, progress=False, cache=tmp_path))
        truth = _events(analyze_run(run, truth=True, progress=False))
        reference = run.name == "multi-ref"  # model channel = reference audio before the event
        for kind, match in boundary_matches(truth, analysed,
                                            reference_before_event=reference).items():
            bounds[kind] = bounds[kind] + match
        agreement = agreement + compare_scores(score_events(truth, m3),
                                               score_events(analysed, m3))
    with capsys.disabled():
        print("", *report_lines(bounds, agreement), sep="\n  ")
    for kind in ("onset", "offset"):  # README: precision and recall at 50 ms
        b = bounds[kind]
        assert b.truth >= 60 and b.precision >= 0.95 and b.recall >= 0.95, kind
    kinds = {event_type for event_type, _ in agreement.verdicts}
    assert kinds == {"TURN_SHIFT", "TURN_HOLD", "BC", "BARGE_IN"}
    for key, verdict in agreement.verdicts.items():  # README: verdicts per event kind
        assert verdict.n >= 4 and verdict.rate >= 0.95, key
    lat = agreement.latency_total()  # README: latencies where both sides have a real one
    assert lat.both >= 55 and lat.truth_only + lat.analysed_only <= 2
    assert lat.rate() >= 0.95


# -- the accuracy measures on hand-made cases -------------------------------------------------

def _seg(start: float, end: float, words: int = 6) -> SpeechSegment:
    return SpeechSegment.of(1, start, end, "w " * words,
                   tuple(Chunk(start, end, "w") for _ in range(words)))


def _view(kind: str, start: float, end: float, *segments: SpeechSegment, event_id: str = "e",
          input_end: float = 12.0) -> EventView:
    return EventView(event_id=event_id, event_type=kind, input_start=0.0, input_end=input_end,
                     event_start=start, event_end=end, segments=segments)


def _agreement(truth: list[EventView], analysed: list[EventView]) -> Agreement:
    m3 = get_variant("m3")
    return compare_scores(score_events(truth, m3), score_events(analysed, m3))


def test_latency_undefined_on_both_sides_is_not_agreement() -> None:
    """user  uuuu|                   SHIFT at T = 2.0
       truth                         silent        latency None
       analysis                      silent        latency None: no latency to compare, so
                                                   it counts as 'neither', never as a match"""
    a = _agreement([_view("TURN_SHIFT", 2.0, 2.5)], [_view("TURN_SHIFT", 2.0, 2.5)])
    lat = a.latencies[("TURN_SHIFT", "latency ↓")]
    assert lat.events == 1 and lat.both == 0 and lat.neither == 1 and lat.rate() is None
    assert a.verdicts[("TURN_SHIFT", "tor ↑")].equal == 1  # the verdict (no turn) does agree


def test_window_fallback_agreeing_with_itself_is_not_a_latency() -> None:
    """user  uuuu|  |uuuu            HOLD, pause [2.0, 3.0], window to 12.0
       truth                         silent: official latency 10.0 (the window, a fallback)
       analysis                      silent: 10.0 again - not a measured latency"""
    a = _agreement([_view("TURN_HOLD", 2.0, 3.0)], [_view("TURN_HOLD", 2.0, 3.0)])
    lat = a.latencies[("TURN_HOLD", "latency ↑")]
    assert lat.both == 0 and lat.neither == 1 and lat.rate() is None
    # one side silent, the other with a real response at 5.0: one-sided, not an error of 7 s
    a = _agreement([_view("TURN_HOLD", 2.0, 3.0, _seg(5.0, 6.0))],
                   [_view("TURN_HOLD", 2.0, 3.0)])
    lat = a.latencies[("TURN_HOLD", "latency ↑")]
    assert lat.both == 0 and lat.truth_only == 1


def test_real_latencies_on_both_sides_are_compared() -> None:
    """truth     MMM at 5.00  ->  3.00;  analysis  MMM at 5.04  ->  3.04: within 50 ms
       truth     MMM at 5.00  ->  3.00;  analysis  MMM at 5.10  ->  3.10: not within"""
    truth = [_view("TURN_HOLD", 2.0, 3.0, _seg(5.0, 6.0), event_id="a"),
             _view("TURN_HOLD", 2.0, 3.0, _seg(5.0, 6.0), event_id="b")]
    analysed = [_view("TURN_HOLD", 2.0, 3.0, _seg(5.04, 6.0), event_id="a"),
                _view("TURN_HOLD", 2.0, 3.0, _seg(5.10, 6.0), event_id="b")]
    lat = _agreement(truth, analysed).latencies[("TURN_HOLD", "latency ↑")]
    assert lat.both == 2 and lat.rate() == pytest.approx(0.5)
    assert sorted(lat.errors) == pytest.approx([0.04, 0.10])


def test_verdicts_are_counted_per_event_kind() -> None:
    """SHIFT: truth takes the turn at 2.5, analysis hears nothing: tor ↑ differs.
       HOLD:  both silent: tor ↓ 0 on both sides, equal."""
    a = _agreement([_view("TURN_SHIFT", 2.0, 2.5, _seg(2.5, 4.0), event_id="s"),
                    _view("TURN_HOLD", 2.0, 3.0, event_id="h")],
                   [_view("TURN_SHIFT", 2.0, 2.5, event_id="s"),
                    _view("TURN_HOLD", 2.0, 3.0, event_id="h")])
    assert a.verdicts[("TURN_SHIFT", "tor ↑")].rate == 0.0
    assert a.verdicts[("TURN_HOLD", "tor ↓")].rate == 1.0
    assert a.verdict_total().n == 2 and a.verdict_total().equal == 1


def test_spurious_segment_lowers_precision_not_recall() -> None:
    """truth     MMMMMMMMMM                     [1.0, 2.0]
       analysis  MMMMMMMMMM          MMMM       [1.0, 2.0] and a spurious [5.0, 5.5]:
                                                onsets 1 of 2 right (precision 50 %),
                                                1 of 1 found (recall 100 %)"""
    b = boundary_matches([_view("TURN_SHIFT", 0.5, 0.8, _seg(1.0, 2.0))],
                         [_view("TURN_SHIFT", 0.5, 0.8, _seg(1.0, 2.0), _seg(5.0, 5.5))])
    for kind in ("onset", "offset"):
        assert b[kind].truth == 1 and b[kind].found == 2 and b[kind].matched == 1
        assert b[kind].precision == 0.5 and b[kind].recall == 1.0


def test_one_analysed_boundary_matches_one_truth_boundary() -> None:
    """truth     MM MM                          onsets 1.00 and 1.04 (two short segments)
       analysis  MMMMM                          one onset 1.02, within 50 ms of both: it
                                                matches one of them, recall 50 %"""
    assert match_times([1.00, 1.04], [1.02]) == [(1.00, 1.02)]
    b = boundary_matches([_view("TURN_SHIFT", 0.5, 0.8, _seg(1.00, 1.02), _seg(1.04, 2.0))],
                         [_view("TURN_SHIFT", 0.5, 0.8, _seg(1.02, 2.0))])
    assert b["onset"].recall == 0.5 and b["onset"].precision == 1.0
    assert b["onset"].nearest == pytest.approx((0.02, -0.02))  # signed, per truth onset
    assert match_times([1.0], [1.05]) == [(1.0, 1.05)]  # 50 ms is inclusive
    assert match_times([1.0], [1.051]) == []


def test_reference_audio_before_a_multi_ref_event_is_left_out() -> None:
    """multi-ref, SHIFT at T = 3.0 (wav time):
       truth     (not logged)        MMMMM      the system's own reply [3.3, 5.0]
       analysis  RRRR                MMMMM      reference audio [0.5, 1.5] + the reply: the
                                                reference segment is not the system's"""
    truth = [_view("TURN_SHIFT", 3.0, 3.2, _seg(3.3, 5.0))]
    analysed = [_view("TURN_SHIFT", 3.0, 3.2, _seg(0.5, 1.5), _seg(3.3, 5.0))]
    assert boundary_matches(truth, analysed)["onset"].precision == 0.5
    b = boundary_matches(truth, analysed, reference_before_event=True)
    assert b["onset"].precision == 1.0 and b["onset"].recall == 1.0 and b["onset"].found == 1


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

    monkeypatch.setattr(pipeline, "detect_activity_many", no_vad)
    analyze_run(run, VAD_ONLY, progress=False, cache=tmp_path)
    assert {p.name: p.read_bytes() for p in folder.rglob("*.json")} == before


def test_a_callers_progress_hears_of_each_batch_as_it_is_analysed(
        scripted_runs: list[Path], tmp_path: Path) -> None:
    """``on_samples`` (``eval``'s progress bar) is told of every batch as it is done, so a
    long cell's display moves during its analysis: VAD-only batches of 8 samples, adding up
    to the run's samples."""
    run = scripted_runs[0]
    rows = len((run / "metadata.jsonl").read_text().splitlines())
    told: list[int] = []
    analyze_run(run, VAD_ONLY, progress=False, cache=tmp_path, on_samples=told.append)
    assert rows > pipeline.VAD_TASK_SAMPLES
    assert sum(told) == rows
    assert told[:-1] == [pipeline.VAD_TASK_SAMPLES] * (len(told) - 1)


def test_score_run_dir_writes_results_with_settings(scripted_runs: list[Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    run = scripted_runs[0]
    assert main(["score", str(run), "--asr", "none"]) == 0
    out = capsys.readouterr().out
    assert "SHIFT TOR% ↑" in out and run.name in out
    results = load_results_file(run / "scores" / "m3" / "results.json")
    assert results.source.kind == "run" and results.analysis is not None
    assert results.analysis["asr"] == "none" and results.variant.name == "m3"
    assert {e.language for e in results.events} == {"en"}
    assert (run / "scores" / "m3" / "aggregate.json").is_file()


def test_truth_needs_a_system_that_logs_speech(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, tmp_path / "data", 16000)
    dataset, _ = load_dataset(tmp_path / "data", audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues[:1], PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    execute_run(load_system("silence", {}), dataset, plan, tmp_path / "run", progress=False)
    assert main(["analyze", str(tmp_path / "run"), "--truth"]) == 2
    assert "logged no speech intervals" in capsys.readouterr().err


def test_the_accuracy_command_compares_a_run_with_its_logged_truth(
        scripted_runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``duplexeval accuracy RUN_DIR`` prints what :func:`run_accuracy` measures (the figures of
    the test above for one run); a system that logs no speech is one line."""
    from duplexeval.cli import main
    from duplexeval.metrics._accuracy import run_accuracy

    run = next(r for r in scripted_runs if r.name == "multi-ref")
    bounds, agreement = run_accuracy(run)
    assert bounds["onset"].truth > 0 and bounds["onset"].recall >= 0.9
    assert main(["accuracy", str(run)]) == 0
    assert capsys.readouterr().out.splitlines() == report_lines(bounds, agreement)

    silent = tmp_path / "silence"
    dataset, _ = load_dataset(run.parent / "data", audio=Need.REQUIRE)
    plan = build_plan(dataset, PlanOptions(protocol=EvalProtocol.SINGLE))
    execute_run(load_system("silence"), dataset, plan, silent, seed=1, progress=False)
    assert main(["accuracy", str(silent)]) == 2
    err = capsys.readouterr().err
    assert "--truth needs a system that logs them" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as refused:  # the option's type: one line, exit 2
        main(["accuracy", str(run), "--tolerance", "nan"])
    assert refused.value.code == 2
    assert "--tolerance: must be a finite number" in capsys.readouterr().err
