"""``duplexeval score RUN_DIR --judge-url URL --judge-model MODEL`` end to end: a real run, the
analysis ASR, the judges over a loopback OpenAI-compatible server (real HTTP, the real
``openai`` client), ``content.jsonl`` and the results; then a re-score makes no request."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ModuleTemp, needs_extra
from duplexeval.cli import main
from duplexeval.results import load as load_results_file
from fake_batch_api import FakeBatchApi
from fake_judge import FakeJudge

FIELDS = {"event_id", "dimension", "score", "unscored_reason", "judge_model", "prompt_id",
          "prompt_version", "raw"}


@pytest.fixture(scope="module")
def qa_run(sample_voiced: Path, module_tmp: ModuleTemp) -> Path:
    """The voiced sample as a task-domain dataset, run with the reference system."""
    root = module_tmp.mktemp("content-cli")
    data = root / "data"
    shutil.copytree(sample_voiced, data)
    meta = json.loads((data / "dataset.json").read_text())
    (data / "dataset.json").write_text(json.dumps({**meta, "domain": "task"}))
    run = root / "run"
    assert main(["run", "--system", "reference", "--dataset", str(data), "--protocol",
                 "multi-ref", "--out", str(run)]) == 0
    return run


@needs_extra("asr")
@pytest.mark.slow
def test_score_judges_over_http_and_rescoring_is_free(
        qa_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "judge.sqlite"
    args = ["score", str(qa_run), "--judge-url", "", "--judge-model", "fake-judge",
            "--judge-cache", str(cache), "--judge-concurrency", "2"]
    with FakeJudge() as server:
        args[3] = server.base_url
        assert main(args) == 0
        first = len(server.requests)
        out = capsys.readouterr().out
        lines = [json.loads(x) for x in (qa_run / "scores" / "m3" / "content.jsonl").read_text()
                 .splitlines()]
        assert lines and all(set(x) >= FIELDS for x in lines)
        assert {x["dimension"] for x in lines} == {"relevance", "consistency", "qa"}
        called = [x for x in lines if x["judge_model"] == "fake-judge"]
        assert len(called) == first > 0  # every call is one line; rule lines made none
        assert all(x["score"] == 1 and x["prompt_version"] >= 1 for x in called)
        results = load_results_file(qa_run / "scores" / "m3" / "results.json")
        assert results.content is not None
        relevance = next(a for a in results.content.aggregates
                         if a.dimension == "relevance" and a.language == "all")
        assert relevance.n + relevance.unscored == len(
            [x for x in lines if x["dimension"] == "relevance"])
        assert "relevance ↑" in out and f"judge fake-judge: {first} requests" in out
        assert main(args) == 0  # re-scoring: everything from the cache
        assert len(server.requests) == first
        assert f"{first} cached" in capsys.readouterr().out


def test_judge_options_go_together(qa_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(qa_run), "--judge-url", "http://127.0.0.1:9/v1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["duplexeval: --judge-url and --judge-model go together"]


@needs_extra("asr")
@pytest.mark.slow  # the content analysis of the whole run (Whisper on both channels)
def test_score_in_batch_api_mode(qa_run: Path, tmp_path: Path) -> None:
    """The same scoring through one Batch API job: every call goes in the batch, none direct."""
    out = tmp_path / "scores"
    with FakeBatchApi(polls_before_done=1) as api:
        assert main(["score", str(qa_run), "-o", str(out), "--judge-url", api.base_url,
                     "--judge-model", "batch-judge", "--judge-cache", str(tmp_path / "c.sqlite"),
                     "--judge-batch-api", "--judge-batch-poll", "0.01"]) == 0
        assert api.calls[:2] == ["upload", "create"] and "direct" not in api.calls
    lines = [json.loads(x) for x in (out / "content.jsonl").read_text().splitlines()]
    called = [x for x in lines if x["judge_model"] == "batch-judge"]
    assert len(called) == len(api.uploaded) > 0 and all(x["score"] == 2 for x in called)


def test_a_timing_only_analysis_says_content_was_not_computed(
        qa_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without ASR there are no words: the content metrics are listed as not computed, never
    reported as zero words."""
    out = tmp_path / "scores"
    assert main(["score", str(qa_run), "-o", str(out), "--asr", "none"]) == 0
    results = load_results_file(out / "results.json")
    assert results.content is not None and results.content.aggregates == []
    assert {n.dimension for n in results.content.not_computed} >= {"qa_f1", "response_words"}
    assert "timing-only" in capsys.readouterr().out
