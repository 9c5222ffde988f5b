"""Judging many items: the cache first, then bounded concurrent requests with retries; every
item comes back as a :class:`~.records.JudgeResult`, scored or unscored.

Conventions:

* At most ``max_concurrency`` requests are in flight (a thread pool of that size).
* An item whose key is in the cache is answered from it and never requested.  Each answer is
  cached the moment it arrives.  Items with the same key (the same prompt, model and sampling)
  are judged one after another, so the first is requested and the others read its cached
  answer: one call per distinct prompt, however the threads interleave (sent at once, three
  identical prompts made three calls or one depending on the machine's load).
* A call that finally fails (retries exhausted, a 4xx other than 429, an answer without text)
  becomes an unscored result with the reason; it is never raised past the batch and never
  dropped.
* ``on_result`` is called once per finished item, from the worker threads, one call at a time.
  If it raises, the batch stops: items not yet started are not requested, requests in flight
  finish (and are cached), and the exception is raised from :func:`judge_batch`.  This is how
  a scoring run is "killed" in tests, and a later run resumes from the cache.  An interrupt
  (Ctrl-C) in the calling thread stops the batch the same way.
* Results come back in the order of the items.
* Answers are read by the prompt's answer kind: ``"score"`` prompts by
  :func:`~.parse.parse_answer`, ``"json"`` prompts by :func:`~.parse.parse_json_object` (the
  object goes to :attr:`~.records.JudgeResult.answer`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from duplexeval.judge._client import JudgeClient
from duplexeval.judge._meter import UsageMeter
from duplexeval.judge._parse import parse_answer, parse_json_object
from duplexeval.judge._records import JudgeItem, JudgeResult
from duplexeval.judge._retry import Backoff, CallFailed, RetryPolicy, call_with_retries
from duplexeval.judge._store import AnswerCache, CachedAnswer, cache_key

__all__ = ["BatchOutcome", "BatchStopped", "judge_batch"]


@dataclass(frozen=True)
class BatchOutcome:
    """The results in item order, the counts, and the meter."""

    results: list[JudgeResult]
    scored: int
    unscored: int
    meter: UsageMeter


class BatchStopped(Exception):
    """Internal: raised instead of starting an item once the batch has been stopped."""


def _result(item: JudgeItem, model: str, answer: CachedAnswer | None, *, cached: bool,
            attempts: int, failure: str | None = None) -> JudgeResult:
    obj = None
    if answer is None:
        score = reason = None
        unscored = failure
    elif item.prompt.answer == "json":
        score = reason = None
        obj, unscored = parse_json_object(answer.raw)
    else:
        parsed = parse_answer(answer.raw, item.prompt.score_min, item.prompt.score_max,
                              item.prompt.score_step)
        score, reason, unscored = parsed.score, parsed.reason, parsed.unscored_reason
    return JudgeResult(
        item_id=item.item_id, score=score, reason=reason, unscored_reason=unscored,
        judge_model=model, prompt_id=item.prompt.prompt_id,
        prompt_version=item.prompt.version, raw=answer.raw if answer else None,
        prompt_tokens=answer.prompt_tokens if answer else 0,
        completion_tokens=answer.completion_tokens if answer else 0,
        cached=cached, attempts=attempts, answer=obj)


class _Run:
    """The shared state of one batch."""

    def __init__(self, client: JudgeClient, cache: AnswerCache, meter: UsageMeter,
                 backoff: Backoff, sleep: Callable[[float], None],
                 on_result: Callable[[JudgeResult], None] | None) -> None:
        self.client, self.cache, self.meter = client, cache, meter
        self.backoff, self.sleep, self.on_result = backoff, sleep, on_result
        self.stopped = threading.Event()
        self._callback_lock = threading.Lock()
        self._keys_lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}

    def _key_lock(self, key: str) -> threading.Lock:
        with self._keys_lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def judge(self, item: JudgeItem) -> JudgeResult:
        """One item: from the cache, or requested (and cached)."""
        if self.stopped.is_set():
            raise BatchStopped
        model = self.client.model
        key = cache_key(model, item, self.client.sampling)
        with self._key_lock(key):  # an identical item in flight: wait for its answer
            if self.stopped.is_set():
                raise BatchStopped
            hit = self.cache.get(key)
            if hit is not None:
                self.meter.add_cached()
                result = _result(item, model, hit, cached=True, attempts=0)
            else:
                result = self._request(item, key)
        self._report(result)
        return result

    def _request(self, item: JudgeItem, key: str) -> JudgeResult:
        model = self.client.model
        try:
            done, attempts = call_with_retries(lambda: self.client.complete(item),
                                               self.backoff, self.sleep)
        except CallFailed as failed:
            self.meter.add_call(failed.attempts, 0, 0)
            return _result(item, model, None, cached=False, attempts=failed.attempts,
                           failure=self.client.scrub(f"judge call failed: {failed.reason}"))
        answer = CachedAnswer(done.text, done.prompt_tokens, done.completion_tokens)
        self.cache.put(key, item, model, answer)
        self.meter.add_call(attempts, done.prompt_tokens, done.completion_tokens)
        return _result(item, model, answer, cached=False, attempts=attempts)

    def _report(self, result: JudgeResult) -> None:
        if self.on_result is None:
            return
        with self._callback_lock:
            if self.stopped.is_set():
                return
            try:
                self.on_result(result)
            except BaseException:
                self.stopped.set()
                raise


def judge_batch(client: JudgeClient, items: Sequence[JudgeItem], cache: AnswerCache, *,
                max_concurrency: int = 4, retry: RetryPolicy = RetryPolicy(),
                meter: UsageMeter | None = None,
                sleep: Callable[[float], None] = time.sleep,
                on_result: Callable[[JudgeResult], None] | None = None) -> BatchOutcome:
    """Judge ``items`` (ids must be unique) and return every result with the counts."""
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    ids = [item.item_id for item in items]
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique within a batch")
    meter = meter if meter is not None else UsageMeter(client.model)
    run = _Run(client, cache, meter, Backoff(retry), sleep, on_result)
    with ThreadPoolExecutor(max_workers=max_concurrency,
                            thread_name_prefix="duplexeval-judge") as pool:
        futures = [pool.submit(run.judge, item) for item in items]
        try:
            errors = [f.exception() for f in futures]
        except BaseException:  # Ctrl-C: start nothing more, let the calls in flight finish
            run.stopped.set()
            raise
    first = next((e for e in errors if e is not None and not isinstance(e, BatchStopped)),
                 None)
    if first is not None:
        raise first
    results = [f.result() for f in futures]
    scored = sum(r.scored for r in results)
    return BatchOutcome(results=results, scored=scored, unscored=len(results) - scored,
                        meter=meter)
