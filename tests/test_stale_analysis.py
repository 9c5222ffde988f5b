"""``score RUN_DIR`` reuses an analysis only when it was made with the requested settings from
the run's current samples and audio; otherwise it analyses again and says why in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.analysis import _pipeline as pipeline
from duplexeval.analysis._pipeline import AnalysisOptions, stale_reason
from duplexeval.app._demo import bundled_dataset
from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import execute_run
from duplexeval.speech._activity import ActivityOptions, VadEngine
from duplexeval.systems import load_system


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``silence`` on the first bundled English dialogue voiced with clip-bank speech (the
    system never speaks, so the default analysis needs no ASR model)."""
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, tmp_path / "data", 16000)
    dataset, _ = load_dataset(tmp_path / "data", audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues[:1], PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    execute_run(load_system("silence", {}), dataset, plan, tmp_path / "run", progress=False)
    return tmp_path / "run"


def _asr(run: Path) -> object:
    return json.loads((run / "analysis" / "settings.json").read_text())["asr"]


def test_score_reanalyses_an_analysis_made_with_other_settings(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(run), "--asr", "none"]) == 0
    assert _asr(run) == "none"
    capsys.readouterr()
    assert main(["score", str(run)]) == 0
    err = capsys.readouterr().err
    assert isinstance(_asr(run), dict) and _asr(run)["model"] == "base-packaged"
    lines = [line for line in err.splitlines() if "analysing again" in line]
    assert lines == [f"analysis in {run / 'analysis'} was made with asr=none; analysing again "
                     "with asr=base-packaged"]
    results = json.loads((run / "scores" / "m3" / "results.json").read_text())
    assert results["analysis"]["asr"]["model"] == "base-packaged"


def test_score_reuses_an_analysis_with_the_same_settings_and_audio(
        run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["score", str(run), "--asr", "none"]) == 0
    capsys.readouterr()

    def no_analysis(*args: object, **kwargs: object) -> None:
        raise AssertionError("a current analysis must be reused")

    monkeypatch.setattr(pipeline, "analyze_run", no_analysis)
    assert main(["score", str(run), "--asr", "none"]) == 0
    assert "analys" not in capsys.readouterr().err
    assert stale_reason(run, AnalysisOptions(asr="none")) is None


def test_changed_audio_or_samples_or_vad_settings_are_reanalysed(
        run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vad_only = AnalysisOptions(asr="none")
    pipeline.analyze_run(run, vad_only, progress=False)
    assert stale_reason(run, vad_only) is None
    other_vad = AnalysisOptions(vad=ActivityOptions(engine=VadEngine.SILERO,
                                                    silero_threshold=0.7), asr="none")
    reason = stale_reason(run, other_vad)
    assert reason is not None and "silero_threshold=0.5" in reason \
        and "silero_threshold=0.7" in reason
    # the system "speaks" in one sample now: same file name, other audio
    meta = json.loads((run / "metadata.jsonl").read_text().splitlines()[0])
    wav = run / meta["output_audio_path"]
    x, rate = sf.read(str(wav), dtype="float32", always_2d=True)
    t = np.arange(rate) / rate
    x[rate // 2: rate // 2 + rate, 1] = 0.3 * np.sin(2 * np.pi * 220 * t)
    sf.write(str(wav), x, rate, subtype="PCM_16")
    reason = stale_reason(run, vad_only)
    assert reason is not None and "other audio (1 of" in reason
    assert main(["score", str(run), "--asr", "none"]) == 0
    assert "other audio (1 of" in capsys.readouterr().err
    assert stale_reason(run, vad_only) is None
    # a sample added to (or removed from) the run's metadata
    meta_path = run / "metadata.jsonl"
    meta_path.write_text("\n".join(meta_path.read_text().splitlines()[1:]) + "\n")
    reason = stale_reason(run, vad_only)
    assert reason is not None and "other samples" in reason


def test_an_interrupted_analysis_is_never_current(run: Path) -> None:
    vad_only = AnalysisOptions(asr="none")
    pipeline.analyze_run(run, vad_only, progress=False)
    (run / "analysis" / "settings.json").unlink()
    reason = stale_reason(run, vad_only)
    assert reason is not None and reason.startswith("no complete analysis")
