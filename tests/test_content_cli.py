"""``duplexeval score RUN_DIR --judge-url URL --judge-model MODEL`` end to end: a real run, the
analysis ASR, the judges over a loopback OpenAI-compatible server (real HTTP, the real
``openai`` client), ``content.jsonl`` and the results; then a re-score makes no request."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import needs_extra
from fake_judge import FakeJudge

from duplexeval.cli import main
from duplexeval.metrics.results import load_results

FIELDS = {"event_id", "dimension", "score", "unscored_reason", "judge_model", "prompt_id",
          "prompt_version", "raw"}


@pytest.fixture(scope="module")
def qa_run(sample_voiced: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The voiced sample as a task-domain dataset, run with the reference system."""
    root = tmp_path_factory.mktemp("content-cli")
    data = root / "data"
    shutil.copytree(sample_voiced, data)
    meta = json.loads((data / "dataset.json").read_text())
    (data / "dataset.json").write_text(json.dumps({**meta, "domain": "task"}))
    run = root / "run"
    assert main(["run", "--system", "reference", "--dataset", str(data), "--protocol",
                 "multi-ref", "--out", str(run)]) == 0
    return run


@needs_extra("asr")
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
        lines = [json.loads(x) for x in (qa_run / "scores" / "content.jsonl").read_text()
                 .splitlines()]
        assert lines and all(FIELDS <= set(x) for x in lines)
        assert {x["dimension"] for x in lines} == {"relevance", "consistency", "qa"}
        called = [x for x in lines if x["judge_model"] == "fake-judge"]
        assert len(called) == first > 0  # every call is one line; rule lines made none
        assert all(x["score"] == 1 and x["prompt_version"] >= 1 for x in called)
        results = load_results(qa_run / "scores" / "results.json")
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
