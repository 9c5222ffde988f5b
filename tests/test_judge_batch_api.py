"""The Batch API mode over a loopback OpenAI Batch API: the uncached items go as one batch, its
answers fill the cache, failed lines go as direct requests, a killed wait resumes the same
batch, and a cached item is never sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from duplexeval.judge import AnswerCache, JudgeClient, JudgeItem, JudgePrompt, judge_batch
from duplexeval.judge._batch_api import BatchApiOptions, prefetch_with_batch_api
from fake_batch_api import FakeBatchApi

PROMPT = JudgePrompt("t.batch", 1, 0, 2)


def _items(texts: list[str]) -> list[JudgeItem]:
    return [JudgeItem(f"i{k}", PROMPT, (("system", "Rate."), ("user", t)))
            for k, t in enumerate(texts)]


def _quiet(**kw: float) -> BatchApiOptions:
    return BatchApiOptions(poll_seconds=kw.get("poll", 1.0),
                           max_wait_seconds=kw.get("wait", 100.0), sleep=lambda s: None,
                           log=lambda s: None)


def test_a_batch_fills_the_cache_and_failed_lines_go_direct(tmp_path: Path) -> None:
    items = _items(["a", "b", "c batch-fail"])
    with FakeBatchApi(polls_before_done=2) as api, AnswerCache(tmp_path / "c.sqlite") as cache:
        client = JudgeClient(api.base_url, "judge-m")
        stored = prefetch_with_batch_api(client, cache, items, _quiet())
        assert stored == 2
        assert api.calls == ["upload", "create", "retrieve", "retrieve", "retrieve"]
        lines = api.uploaded
        assert [line["url"] for line in lines] == ["/v1/chat/completions"] * 3
        assert lines[0]["body"]["messages"][-1] == {"role": "user", "content": "a"}
        outcome = judge_batch(client, items, cache)
        assert [r.score for r in outcome.results] == [2, 2, 1]  # the failed line went direct
        assert api.calls.count("direct") == 1 and outcome.meter.cached == 2
        assert not list((tmp_path / "batches").glob("*.json"))  # the state file is gone


def test_a_killed_wait_resumes_the_same_batch(tmp_path: Path) -> None:
    items = _items(["x", "y"])
    with FakeBatchApi(polls_before_done=5) as api, AnswerCache(tmp_path / "c.sqlite") as cache:
        client = JudgeClient(api.base_url, "judge-m")
        assert prefetch_with_batch_api(client, cache, items, _quiet(wait=2.0)) == 0
        assert list((tmp_path / "batches").glob("*.json"))  # the batch id is kept
        assert prefetch_with_batch_api(client, cache, items, _quiet()) == 2
        assert api.calls.count("create") == 1 and api.calls.count("upload") == 1


def test_cached_items_are_never_sent(tmp_path: Path) -> None:
    items = _items(["p", "q"])
    with FakeBatchApi(polls_before_done=0) as api, AnswerCache(tmp_path / "c.sqlite") as cache:
        client = JudgeClient(api.base_url, "judge-m")
        prefetch_with_batch_api(client, cache, items[:1], _quiet())
        prefetch_with_batch_api(client, cache, items, _quiet())
        assert [line["body"]["messages"][-1]["content"] for line in api.uploaded] == ["p"]
        second = api._server.files["file-2"]  # type: ignore[attr-defined]
        assert '"q"' in second and '"p"' not in second
        assert prefetch_with_batch_api(client, cache, items, _quiet()) == 0
        assert api.calls.count("create") == 2


@pytest.mark.parametrize("bad", ["--judge-batch-api"])
def test_the_batch_mode_needs_a_judge(bad: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from duplexeval.cli import main

    assert main(["score", str(tmp_path), bad]) == 2
    assert "needs --judge-url" in capsys.readouterr().err
