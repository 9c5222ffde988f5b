"""The judge client against a loopback OpenAI-compatible server (tests/fake_judge.py): real
HTTP through the real ``openai`` client, answers chosen by a ``fake:`` line in the prompt."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from duplexeval.judge import (
    AnswerCache,
    BatchOutcome,
    JudgeClient,
    JudgeItem,
    JudgePrompt,
    JudgeResult,
    Prices,
    RetryPolicy,
    Sampling,
    UsageMeter,
    cache_key,
    default_cache_path,
    judge_batch,
    parse_answer,
    resolve_api_key,
)
from duplexeval.judge._retry import Backoff
from fake_judge import FakeJudge

SECRET = "sk-test-Zq7pVb1tLr9wXy3K"
PROMPT = JudgePrompt("test-relevance", 1, 0, 2)
NO_WAIT = RetryPolicy(max_retries=3, base_delay=0.5, max_delay=8.0, jitter=0.0)


def item(i: int | str, spec: str = "score=2", prompt: JudgePrompt = PROMPT) -> JudgeItem:
    return JudgeItem(item_id=f"e{i}", prompt=prompt,
                     messages=(("system", "Judge the reply; answer with JSON."),
                               ("user", f"Item {i}: the reply to judge.\nfake: {spec}")))


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_JUDGE_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def server() -> Iterator[FakeJudge]:
    with FakeJudge() as s:
        yield s


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[AnswerCache]:
    with AnswerCache(tmp_path / "judge" / "answers.sqlite") as c:
        yield c


def client_for(server: FakeJudge, timeout: float = 10.0) -> JudgeClient:
    return JudgeClient(server.base_url, "fake-judge-7b", timeout=timeout)


def run(server: FakeJudge, cache: AnswerCache, items: list[JudgeItem], *,
        sleeps: list[float] | None = None, timeout: float = 10.0,
        retry: RetryPolicy = NO_WAIT, max_concurrency: int = 4,
        meter: UsageMeter | None = None,
        on_result: Callable[[JudgeResult], None] | None = None) -> BatchOutcome:
    """One batch through a fresh client; the backoff waits are recorded in ``sleeps``."""
    waits = sleeps if sleeps is not None else []
    return judge_batch(client_for(server, timeout), items, cache, retry=retry, sleep=waits.append,
                       max_concurrency=max_concurrency, meter=meter, on_result=on_result)


def test_a_correct_answer_is_scored_and_recorded(server: FakeJudge, cache: AnswerCache) -> None:
    out = run(server, cache, [item(1, "score=2")])
    [r] = out.results
    assert (out.scored, out.unscored) == (1, 0)
    assert r.score == 2 and r.reason == "fake judgement" and r.unscored_reason is None
    assert (r.judge_model, r.prompt_id, r.prompt_version) == ("fake-judge-7b", "test-relevance", 1)
    assert r.raw == '{"score": 2, "reason": "fake judgement"}'
    assert (r.prompt_tokens, r.completion_tokens) == (14, 5)  # words, as the fake counts
    assert not r.cached and r.attempts == 1
    body = server.requests[0]
    assert body["model"] == "fake-judge-7b"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 256
    assert body["messages"][1]["content"].startswith("Item 1:")
    assert server.auth == [f"Bearer {SECRET}"]


def test_json_mode_is_asked_for_and_dropped_once_a_server_refuses_it(
        cache: AnswerCache) -> None:
    """Every request carries ``response_format`` json_object; a server that answers 400 naming
    the field gets the same request without it, and the client sends it no more::

        item 1   [json] -> 400   [plain] -> 200     (2 requests)
        item 2   [plain] -> 200                     (1 request)
    """
    with FakeJudge() as plain:
        run(plain, cache, [item(1, "score=2")])
        assert plain.requests[0]["response_format"] == {"type": "json_object"}
    with FakeJudge(refuse_json_mode=True) as refusing:
        client = client_for(refusing)
        out = judge_batch(client, [item(2, "score=1"), item(3, "score=0")], cache,
                          retry=NO_WAIT, sleep=lambda s: None, max_concurrency=1)
    assert [r.score for r in out.results] == [1, 0] and not client.json_mode
    assert ["response_format" in b for b in refusing.requests] == [True, False, False]


def test_an_answer_in_a_fence_with_prose_is_scored(server: FakeJudge, cache: AnswerCache) -> None:
    out = run(server, cache, [item(1, "score=0 fence")])
    assert out.results[0].score == 0 and out.results[0].raw.startswith("Here is my verdict.")


@pytest.mark.parametrize(("spec", "attempts", "waits"), [
    ("fail=429x2 score=1", 3, [0.5, 1.0]),
    ("fail=500x1 score=1", 2, [0.5]),
    ("fail=503x3 score=1", 4, [0.5, 1.0, 2.0]),
])
def test_transient_errors_are_retried_with_backoff(server: FakeJudge, cache: AnswerCache,
                                                   spec: str, attempts: int,
                                                   waits: list[float]) -> None:
    sleeps: list[float] = []
    out = run(server, cache, [item(1, spec)], sleeps=sleeps)
    [r] = out.results
    assert r.score == 1 and r.attempts == attempts
    assert len(server.requests) == attempts and sleeps == waits
    assert out.meter.requests == attempts and out.meter.retries == attempts - 1


def test_a_timeout_is_retried(server: FakeJudge, cache: AnswerCache) -> None:
    sleeps: list[float] = []
    out = run(server, cache, [item(1, "slow=2.0x1 score=2")], sleeps=sleeps, timeout=0.4)
    [r] = out.results
    assert r.score == 2 and r.attempts == 2 and sleeps == [0.5]
    assert len(server.requests) == 2


def test_retries_run_out_and_the_item_is_unscored(server: FakeJudge, cache: AnswerCache) -> None:
    sleeps: list[float] = []
    out = run(server, cache, [item(1, "fail=500xinf")], sleeps=sleeps,
              retry=RetryPolicy(max_retries=2, base_delay=1.0, jitter=0.0))
    [r] = out.results
    assert r.score is None and r.raw is None and r.attempts == 3
    assert "HTTP 500" in r.unscored_reason and "retries exhausted after 3 attempts" \
        in r.unscored_reason
    assert sleeps == [1.0, 2.0] and len(server.requests) == 3
    assert len(cache) == 0


def test_a_malformed_answer_is_unscored_with_its_reason(server: FakeJudge,
                                                        cache: AnswerCache) -> None:
    out = run(server, cache, [item(1, "raw=I think it is quite relevant, maybe a 2."),
                              item(2, 'raw={"score": "2", "reason": "ok"}')])
    r1, r2 = out.results
    assert (out.scored, out.unscored) == (0, 2)
    assert r1.score is None and r1.unscored_reason == "no JSON object in the answer"
    assert r1.raw == "I think it is quite relevant, maybe a 2."
    assert r2.score is None and r2.unscored_reason == 'score "2" is not an integer'


def test_a_score_out_of_range_is_unscored(server: FakeJudge, cache: AnswerCache) -> None:
    out = run(server, cache, [item(1, "score=5"), item(2, "score=-1")])
    assert [r.score for r in out.results] == [None, None]
    assert out.results[0].unscored_reason == "score 5 is outside the range 0-2"
    assert out.results[1].unscored_reason == "score -1 is outside the range 0-2"


def test_a_permanent_failure_is_unscored_and_the_batch_goes_on(server: FakeJudge,
                                                              cache: AnswerCache) -> None:
    sleeps: list[float] = []
    items = [item(1, "score=2"), item(2, "fail=400xinf"), item(3, "fail=404xinf"),
             item(4, "score=1")]
    out = run(server, cache, items, sleeps=sleeps, max_concurrency=2)
    assert [r.item_id for r in out.results] == ["e1", "e2", "e3", "e4"]
    assert [r.score for r in out.results] == [2, None, None, 1]
    assert (out.scored, out.unscored) == (2, 2)
    assert out.results[1].unscored_reason.startswith("judge call failed: HTTP 400")
    assert "permanent; 1 attempt)" in out.results[1].unscored_reason
    assert out.results[2].unscored_reason.startswith("judge call failed: HTTP 404")
    assert sleeps == [] and len(server.requests) == 4
    # failed calls are not cached: the next run asks again, scored ones are not asked
    again = run(server, cache, items)
    assert len(server.requests) == 6 and [r.cached for r in again.results] == [
        True, False, False, True]


def test_an_answer_without_text_is_unscored(server: FakeJudge, cache: AnswerCache) -> None:
    out = run(server, cache, [item(1, "empty"), item(2)])
    assert [r.score for r in out.results] == [None, 2]
    assert out.results[0].unscored_reason == (
        "judge call failed: ValueError: the response has no answer text (permanent; 1 attempt)")
    assert len(server.requests) == 2 and len(cache) == 1


def test_an_unreachable_endpoint_gives_unscored_items(cache: AnswerCache) -> None:
    with FakeJudge() as gone:
        url = gone.base_url
    sleeps: list[float] = []
    out = judge_batch(JudgeClient(url, "m", timeout=2.0), [item(1), item(2)], cache,
                      retry=RetryPolicy(max_retries=1, base_delay=0.1, jitter=0.0),
                      sleep=sleeps.append)
    assert (out.scored, out.unscored) == (0, 2)
    assert {r.unscored_reason for r in out.results} == {
        "judge call failed: connection error (retries exhausted after 2 attempts)"}
    assert sleeps == [0.1, 0.1] and out.meter.requests == 4


def test_a_second_run_makes_no_request(server: FakeJudge, cache: AnswerCache) -> None:
    items = [item(i, f"score={i % 3}") for i in range(6)] + [item("bad", "raw=nonsense")]
    first = run(server, cache, items, max_concurrency=3)
    assert len(server.requests) == 7 and first.meter.requests == 7
    second = run(server, cache, items, max_concurrency=3)
    assert len(server.requests) == 7
    assert all(r.cached and r.attempts == 0 for r in second.results)
    assert [r.score for r in second.results] == [r.score for r in first.results]
    assert second.results[-1].unscored_reason == "no JSON object in the answer"
    assert second.meter.requests == 0 and second.meter.cached == 7
    assert second.meter.prompt_tokens == 0


class Killed(Exception):
    pass


def _killer(after: int) -> tuple[list[JudgeResult], Callable[[JudgeResult], None]]:
    seen: list[JudgeResult] = []

    def on_result(result: JudgeResult) -> None:
        seen.append(result)
        if len(seen) == after:
            raise Killed
    return seen, on_result


def test_a_killed_run_resumes_with_only_the_remaining_calls(server: FakeJudge,
                                                            cache: AnswerCache) -> None:
    n, k = 8, 3
    items = [item(i, f"score={i % 3}") for i in range(n)]
    seen, on_result = _killer(k)
    with pytest.raises(Killed):
        run(server, cache, items, max_concurrency=1, on_result=on_result)
    assert len(seen) == k and len(server.requests) == k and len(cache) == k
    out = run(server, cache, items, max_concurrency=1)
    assert len(server.requests) == n
    assert sum(r.cached for r in out.results) == k and out.meter.requests == n - k
    assert set(server._server.per_prompt.values()) == {1}
    assert [r.score for r in out.results] == [i % 3 for i in range(n)]


def test_a_killed_concurrent_run_never_repeats_a_call(server: FakeJudge,
                                                      cache: AnswerCache) -> None:
    n = 12
    items = [item(i, "score=1 delay=0.05") for i in range(n)]
    _, on_result = _killer(4)
    with pytest.raises(Killed):
        run(server, cache, items, max_concurrency=3, on_result=on_result)
    first = len(server.requests)
    assert 4 <= first < n and len(cache) == first
    out = run(server, cache, items, max_concurrency=3)
    assert len(server.requests) == n and out.meter.requests == n - first
    assert set(server._server.per_prompt.values()) == {1}


def test_the_key_never_reaches_disk_or_repr(server: FakeJudge, tmp_path: Path) -> None:
    folder = tmp_path / "keycheck"
    items = [item(1, "score=2"), item(2, "raw=no json"), item(3, "fail=401xinf")]
    with AnswerCache(folder / "answers.sqlite") as c:
        client = client_for(server)
        out = judge_batch(client, items, c, retry=NO_WAIT, sleep=lambda s: None)
        files_open = {p.name: p.read_bytes() for p in folder.iterdir()}
    files_closed = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert "answers.sqlite-wal" in files_open  # WAL mode
    assert server.auth[0] == f"Bearer {SECRET}"  # the key was used
    for data in [*files_open.values(), *files_closed.values()]:
        assert SECRET.encode() not in data
    assert SECRET not in repr(client) and SECRET not in str(client)
    assert "DUPLEXEVAL_JUDGE_API_KEY" in repr(client)
    assert all(SECRET not in repr(r) for r in out.results)
    with sqlite3.connect(folder / "answers.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 2


def test_concurrency_is_bounded(server: FakeJudge, cache: AnswerCache) -> None:
    items = [item(i, "score=1 delay=0.3") for i in range(9)]
    out = run(server, cache, items, max_concurrency=3)
    assert out.scored == 9 and server.max_active == 3


def test_identical_prompts_make_one_call_however_the_threads_run(server: FakeJudge,
                                                                 cache: AnswerCache) -> None:
    """Six items, three distinct prompts (each twice), four threads, requests that take 0.2 s:
    sent at once, the twins of a prompt would both miss the cache.  One call per prompt; the
    twin reads the cached answer::

        e0 e1 e2 -> call   call   call       (distinct prompts, concurrent)
        e0'e1'e2'-> wait for its twin, then the cache
    """
    def twin(i: int, suffix: str) -> JudgeItem:
        return JudgeItem(item_id=f"e{i}{suffix}", prompt=PROMPT, messages=item(i, "delay=0.2")
                         .messages)

    items = [twin(i, s) for s in ("a", "b") for i in range(3)]
    out = run(server, cache, items, max_concurrency=4)
    assert len(server.requests) == 3 and out.scored == 6
    assert sorted(r.cached for r in out.results) == [False] * 3 + [True] * 3
    assert server.max_active == 3  # the distinct prompts still went out together


def test_one_at_a_time(server: FakeJudge, cache: AnswerCache) -> None:
    run(server, cache, [item(i, "score=1 delay=0.05") for i in range(4)], max_concurrency=1)
    assert server.max_active == 1


def test_the_meter_sums_tokens_and_prices_them(server: FakeJudge, cache: AnswerCache) -> None:
    meter = UsageMeter("fake-judge-7b", Prices(prompt=1e-6, completion=2e-6))
    out = run(server, cache, [item(1), item(2, "fail=429x1")], meter=meter)
    assert meter.prompt_tokens == sum(r.prompt_tokens for r in out.results) > 0
    assert meter.completion_tokens == 10
    assert meter.cost == pytest.approx(meter.prompt_tokens * 1e-6 + 10 * 2e-6)
    line = meter.summary()
    assert "\n" not in line and "3 requests (1 retries), 0 cached" in line and "cost $" in line
    assert "cost not computed" in UsageMeter("m").summary() and UsageMeter("m").cost is None


@pytest.mark.parametrize(("text", "score", "why"), [
    ('{"score": 2, "reason": "ok"}', 2, None),
    ('Sure. {"reason": "fine", "score": 0} and {"score": 1, "reason": "x"}', 0, None),
    ('```json\n{"score": 1, "reason": "partly"}\n```', 1, None),
    ('{not json} then {"score": 1, "reason": "y"}', 1, None),
    ('{"score": 1}', None, "the JSON object has keys ['score'], expected ['reason', 'score']"),
    ('{"score": 1, "reason": "r", "extra": 1}', None,
     "the JSON object has keys ['extra', 'reason', 'score'], expected ['reason', 'score']"),
    ('{"score": 1.0, "reason": "r"}', None, "score 1.0 is not an integer"),
    ('{"score": true, "reason": "r"}', None, "score true is not an integer"),
    ('{"score": 1, "reason": 3}', None, "reason 3 is not a string"),
    ('{"score": 3, "reason": "r"}', None, "score 3 is outside the range 0-2"),
    ("[1, 2]", None, "no JSON object in the answer"),
    ("", None, "no JSON object in the answer"),
])
def test_the_answer_parser(text: str, score: int | None, why: str | None) -> None:
    parsed = parse_answer(text, 0, 2)
    assert parsed.score == score and parsed.unscored_reason == why
    assert (parsed.reason is None) == (score is None)


def test_the_cache_key_covers_model_prompt_messages_and_sampling() -> None:
    base = cache_key("m", item(1), Sampling())
    assert base == cache_key("m", item(1), Sampling()) and len(base) == 64
    assert base != cache_key("m2", item(1), Sampling())
    assert base != cache_key("m", item(1, prompt=JudgePrompt("test-relevance", 2, 0, 2)),
                             Sampling())
    assert base != cache_key("m", item(1, prompt=JudgePrompt("other", 1, 0, 2)), Sampling())
    assert base != cache_key("m", item(2), Sampling())
    assert base != cache_key("m", item(1), Sampling(temperature=0.7))
    assert base != cache_key("m", item(1), Sampling(seed=1))


def test_backoff_is_exponential_capped_and_seeded() -> None:
    plain = Backoff(RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.0))
    assert [plain.delay(i) for i in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    a = Backoff(RetryPolicy(base_delay=1.0, jitter=0.5, seed=7))
    b = Backoff(RetryPolicy(base_delay=1.0, jitter=0.5, seed=7))
    da, db = [a.delay(i) for i in range(4)], [b.delay(i) for i in range(4)]
    assert da == db and da != [1.0, 2.0, 4.0, 8.0]
    assert all(0.5 * 2 ** i <= d <= 1.5 * 2 ** i for i, d in enumerate(da))


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    assert resolve_api_key() == (SECRET, "DUPLEXEVAL_JUDGE_API_KEY")
    monkeypatch.delenv("DUPLEXEVAL_JUDGE_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other")
    assert resolve_api_key() == ("sk-other", "OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert resolve_api_key() == (None, "none")
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    assert default_cache_path() == tmp_path / "judge" / "answers.sqlite"


def test_bad_batches_are_refused(server: FakeJudge, cache: AnswerCache) -> None:
    with pytest.raises(ValueError, match="unique"):
        run(server, cache, [item(1), item(1)])
    with pytest.raises(ValueError, match="max_concurrency"):
        run(server, cache, [item(1)], max_concurrency=0)
    assert server.requests == []


def test_a_json_prompt_keeps_any_object_and_its_cache_key_is_the_score_prompts() -> None:
    """``answer="json"`` prompts are read as any JSON object; the answer kind is not in the
    cache key (id and version fix it), so score prompts' keys are unchanged."""
    json_prompt = JudgePrompt("test-relevance", 1, 0, 0, answer="json")
    assert cache_key("m", item(1, prompt=json_prompt), Sampling()) == \
        cache_key("m", item(1, prompt=JudgePrompt("test-relevance", 1, 0, 0)), Sampling())
    with pytest.raises(ValueError, match="answer must be"):
        JudgePrompt("x", 1, 0, 0, answer="text")


def test_a_json_answer_comes_back_parsed_or_unscored(server: FakeJudge,
                                                      cache: AnswerCache) -> None:
    json_prompt = JudgePrompt("test-json", 1, 0, 0, answer="json")
    items = [item(1, 'raw=Here: {"rounds": [{"start": 1, "end": 2}]}', json_prompt),
             item(2, "raw=no object at all", json_prompt)]
    out = run(server, cache, items)
    good, bad = out.results
    assert good.answer == {"rounds": [{"start": 1, "end": 2}]} and good.scored
    assert good.score is None and good.unscored_reason is None
    assert bad.answer is None and bad.unscored_reason == "no JSON object in the answer"
    assert (out.scored, out.unscored) == (1, 1)


@pytest.mark.parametrize(("score", "step", "expected"), [
    ("4.5", 0.5, 4.5), ("4.0", 0.5, 4), ("4", 0.5, 4), ("4.25", 0.5, None), ("5.5", 0.5, None),
    ("4.5", 1.0, None), ("4", 1.0, 4), ("NaN", 0.5, None)])
def test_half_points_are_scores_only_where_the_prompt_allows_them(
        score: str, step: float, expected: float | None) -> None:
    """MTR's quality prompt allows half points (step 0.5): 4.5 is a score, 4.25 is not; an
    integer prompt still refuses 4.5; a whole number stays an int."""
    parsed = parse_answer(f'{{"score": {score}, "reason": "r"}}', 0, 5, step)
    assert parsed.score == expected
    assert (parsed.unscored_reason is None) == (expected is not None)
    if expected is not None:
        assert type(parsed.score) is type(expected)


def test_own_scale_prompts_keep_their_scale_in_the_aggregates() -> None:
    """FLEXI's TSS (0-5, own scale) is aggregated on 0-5; M3's relevance (0-2, normalised) on
    0-100; MTR's quality keeps half points."""
    from duplexeval.metrics.content._summary import aggregate_content
    from duplexeval.results import ContentRecord

    def record(event: str, dimension: str, prompt: str, score: float, score_100: float
               ) -> ContentRecord:
        return ContentRecord(event_id=event, dimension=dimension, score=score,
                             score_100=score_100, unscored_reason=None, judge_model="j",
                             prompt_id=prompt, prompt_version=1, raw=None, reason=None,
                             sample_id="s", language="en", domain="chat")

    rows = aggregate_content([record("e1", "topic_shift", "flexi.topic_shift", 4, 80.0),
                              record("e2", "topic_shift", "flexi.topic_shift", 2, 40.0),
                              record("e1", "relevance", "m3.relevance", 2, 100.0),
                              record("e1", "quality", "mtr.quality", 3.5, 70.0)], [])
    by = {r.dimension: r for r in rows if r.round is None}
    assert (by["topic_shift"].scale, by["topic_shift"].mean) == ("0-5", 3.0)
    assert (by["relevance"].scale, by["relevance"].mean) == ("0-100", 100.0)
    assert (by["quality"].scale, by["quality"].mean) == ("0-5", 3.5)
