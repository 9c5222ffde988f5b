"""Analysis and judge calls on the Dask executor (``duplexeval analyze|score --executor dask``):
the analysis folder of a run is byte-identical whether its batches ran here or on a two-worker
LocalCluster (each with its own cache, so nothing is read back from the other), the workers
share one analysis cache, and judge calls spread over the workers reach a loopback judge once:
a second scoring is all cache hits."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import ModuleTemp, needs_extra
from duplexeval.analysis._pipeline import AnalysisOptions, analyze_run
from duplexeval.cli import main
from duplexeval.judge import (
    AnswerCache,
    JudgeClient,
    JudgeItem,
    JudgePrompt,
    cache_key,
    judge_batch,
)
from duplexeval.judge._store import CachedAnswer
from duplexeval.metrics.content._spread import prefetch_on_workers
from duplexeval.runs import DaskExecutor
from fake_judge import FakeJudge

pytestmark = needs_extra("dask")

PROMPT = JudgePrompt("test-spread", 1, 0, 2)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A two-worker LocalCluster (processes, loopback, one thread each)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.CRITICAL) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def qa_run(sample_voiced: Path, module_tmp: ModuleTemp) -> Path:
    """The voiced sample as a task-domain dataset, run with ``reference`` under multi-ref
    (22 samples whose system channel is speech)."""
    root = module_tmp.mktemp("dask-analysis")
    data = root / "data"
    shutil.copytree(sample_voiced, data)
    meta = json.loads((data / "dataset.json").read_text())
    (data / "dataset.json").write_text(json.dumps({**meta, "domain": "task"}))
    run = root / "run"
    assert main(["run", "--system", "reference", "--dataset", str(data), "--protocol",
                 "multi-ref", "--out", str(run)]) == 0
    return run


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def analyse(run: Path, options: AnalysisOptions, cache: Path,
            executor: DaskExecutor | None = None) -> dict[str, bytes]:
    folder = analyze_run(run, options, progress=False, cache=cache, executor=executor)
    return folder_bytes(folder)


def test_vad_analysis_on_two_workers_is_byte_identical(qa_run: Path, tmp_path: Path,
                                                       scheduler: str) -> None:
    options = AnalysisOptions(asr="none")
    local = analyse(qa_run, options, tmp_path / "cache-local")
    with DaskExecutor(scheduler) as executor:
        spread = analyse(qa_run, options, tmp_path / "cache-dask", executor)
    # 22 samples in tasks of 8: three tasks; the workers filled the one cache folder with the
    # entries a local analysis makes
    entries = sorted(p.name for p in (tmp_path / "cache-dask").rglob("*.json"))
    assert entries and entries == sorted(p.name for p in (tmp_path / "cache-local").rglob("*.json"))
    assert sum(k.endswith(".json") and "/" in k for k in local) == 22
    assert local == spread


@needs_extra("asr")
@pytest.mark.slow
def test_asr_analysis_on_two_workers_is_byte_identical(qa_run: Path, tmp_path: Path,
                                                       scheduler: str) -> None:
    # timing ASR (segments under 1 s of the system channel), Whisper window groups of 6
    # samples: four tasks over the two workers
    options = replace(AnalysisOptions(), asr_shared_samples=6, content_event_types=())
    local = analyse(qa_run, options, tmp_path / "cache-local")
    with DaskExecutor(scheduler) as executor:
        spread = analyse(qa_run, options, tmp_path / "cache-dask", executor)
    transcripts = [json.loads(v) for k, v in local.items() if k.count("/") == 1]
    assert any(seg["text"].strip() for t in transcripts for seg in t["segments"])
    assert local == spread


def item(i: int, spec: str = "score=2") -> JudgeItem:
    return JudgeItem(item_id=f"e{i}", prompt=PROMPT,
                     messages=(("system", "Judge the reply; answer with JSON."),
                               ("user", f"Item {i}: the reply to judge.\nfake: {spec}")))


def test_judge_calls_spread_over_workers_and_a_second_scoring_is_cached(
        tmp_path: Path, scheduler: str) -> None:
    items = [item(i, f"score={i % 3}") for i in range(9)] + [item(9, "fail=400xinf")]
    logged: list[str] = []
    with FakeJudge() as server, DaskExecutor(scheduler) as executor:
        client = JudgeClient(server.base_url, "fake-judge", timeout=5.0)
        with AnswerCache(tmp_path / "answers.sqlite") as cache:
            cache.put(cache_key("fake-judge", items[0], client.sampling), items[0],
                      "fake-judge", CachedAnswer('{"score": 2, "reason": "cached"}', 0, 0))
            stored = prefetch_on_workers(client, cache, items, tasks=executor, per_task=3,
                                         concurrency=2, log=logged.append)
            # 9 uncached items in three tasks of three; the 400 is not retried, not cached
            assert stored == 8 and len(cache) == 9
            answers = [cache.get(cache_key("fake-judge", x, client.sampling)) for x in items]
            tokens = sum(a.prompt_tokens + a.completion_tokens for a in answers[1:9] if a)
            assert tokens > 0 and answers[9] is None
            assert logged == [f"judge on workers: 9 item(s) in 3 task(s), 9 request(s), "
                              f"{tokens} token(s); 8 answer(s) cached, "
                              "1 failed (asked again directly)"]
            asked = len(server.requests)
            outcome = judge_batch(client, items, cache, max_concurrency=2)
            # the batch finds the workers' answers; the failed item is asked once more here
            assert len(server.requests) == asked + 1 == 10
            assert [r.score for r in outcome.results[:9]] == [2] + [i % 3 for i in range(1, 9)]
            assert outcome.results[9].score is None and outcome.results[9].unscored_reason
            assert outcome.meter.cached == 9
            # a second scoring: nothing left to ask on the workers
            assert prefetch_on_workers(client, cache, items[:9], tasks=executor,
                                       log=logged.append) == 0
            assert len(server.requests) == 10 and len(logged) == 1
        client.close()


def test_judge_batch_api_does_not_go_with_dask(qa_run: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(qa_run), "--judge-url", "http://127.0.0.1:9/v1",
                 "--judge-model", "m", "--judge-batch-api", "--executor", "dask",
                 "--scheduler", "tcp://127.0.0.1:1", "-o", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["duplexeval: --judge-batch-api sends the calls as one remote job; it does "
                   "not go with --executor dask"]


def test_analyze_and_score_take_the_dask_executor(qa_run: Path, tmp_path: Path, scheduler: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    shutil.copytree(qa_run, run)
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    dask = ["--executor", "dask", "--scheduler", scheduler]
    assert main(["analyze", str(run), "--asr", "none", *dask]) == 0
    spread = folder_bytes(run / "analysis")
    assert main(["analyze", str(run), "--asr", "none"]) == 0
    assert folder_bytes(run / "analysis") == spread
    assert main(["score", str(run), "--asr", "none", "-o", str(tmp_path / "s"), *dask]) == 0
    assert (tmp_path / "s" / "per_event.jsonl").is_file()
    assert main(["analyze", str(run), "--workers", "2"]) == 2  # a Dask option needs dask
