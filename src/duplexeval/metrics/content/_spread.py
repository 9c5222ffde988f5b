"""Judge calls spread over an executor's workers (``duplexeval score --executor dask``).

A prefetch, like the Batch API mode (:mod:`duplexeval.judge._batch_api`): before the scoring's
:func:`~duplexeval.judge._batch.judge_batch`, the items not in the answer cache are cut into
tasks of ``per_task`` items; each task (:func:`call_judge`) runs on a worker, which builds its
own :class:`~duplexeval.judge._client.JudgeClient` from the endpoint, the model, the timeout
and the sampling (the key from that worker's environment, ``DUPLEXEVAL_JUDGE_API_KEY`` or
``OPENAI_API_KEY``: it is never sent to the worker, never pickled) and makes the calls with the
same retries and at most ``concurrency`` at a time, and returns the answers.

The answer cache is shared by writing it in one place: the calling process stores each answer
the moment its task returns (:meth:`~duplexeval.judge._store.AnswerCache.put`), so the SQLite
file has one writer, wherever the workers are (SQLite on a network file system is not safe
for writers on several machines); workers never open it.  ``judge_batch`` then finds every
answered item in the cache; a call that finally failed on a worker is not cached and goes as
a direct request from the calling process, which records it as unscored if that fails too.
A second scoring of the same run asks nothing: every item is a cache hit.

What the workers' requests cost is the line this prefetch logs (``judge_batch``'s meter counts
their answers as cached, as for the Batch API mode).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from duplexeval.judge._client import JudgeClient
from duplexeval.judge._records import JudgeItem, Sampling
from duplexeval.judge._retry import Backoff, CallFailed, RetryPolicy, call_with_retries
from duplexeval.judge._store import AnswerCache, CachedAnswer, cache_key
from duplexeval.runs._execution import TaskMap

__all__ = ["Answered", "CallTask", "Endpoint", "call_judge", "prefetch_on_workers"]


@dataclass(frozen=True)
class Endpoint:
    """Where a worker sends its calls (no key: each worker reads its own environment)."""

    base_url: str
    model: str
    timeout: float
    sampling: Sampling

    @classmethod
    def of(cls, client: JudgeClient) -> Endpoint:
        return cls(client.base_url, client.model, client.timeout, client.sampling)


@dataclass(frozen=True)
class CallTask:
    """One worker task: items to request (none of them cached when the task was made)."""

    endpoint: Endpoint
    items: tuple[JudgeItem, ...]
    concurrency: int = 4
    retry: RetryPolicy = RetryPolicy()


@dataclass(frozen=True)
class Answered:
    """One item's call: the answer (``None`` when the call finally failed, with ``failure``),
    the HTTP attempts made."""

    key: str
    answer: CachedAnswer | None
    attempts: int
    failure: str | None = None


_CLIENTS: dict[Endpoint, JudgeClient] = {}


def call_judge(task: CallTask) -> list[Answered]:
    """Request every item of ``task`` (runs on a worker; one client per endpoint and process),
    in item order."""
    if task.endpoint not in _CLIENTS:
        e = task.endpoint
        _CLIENTS[e] = JudgeClient(e.base_url, e.model, timeout=e.timeout, sampling=e.sampling)
    client = _CLIENTS[task.endpoint]
    backoff = Backoff(task.retry)

    def one(item: JudgeItem) -> Answered:
        key = cache_key(client.model, item, client.sampling)
        try:
            done, attempts = call_with_retries(lambda: client.complete(item), backoff,
                                               time.sleep)
        except CallFailed as failed:
            return Answered(key, None, failed.attempts, client.scrub(failed.reason))
        return Answered(key, CachedAnswer(done.text, done.prompt_tokens,
                                          done.completion_tokens), attempts)

    with ThreadPoolExecutor(max_workers=task.concurrency,
                            thread_name_prefix="duplexeval-judge") as pool:
        return list(pool.map(one, task.items))


def prefetch_on_workers(client: JudgeClient, cache: AnswerCache, items: Sequence[JudgeItem],
                        *, tasks: TaskMap, per_task: int = 16, concurrency: int = 4,
                        retry: RetryPolicy = RetryPolicy(),
                        log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
                        ) -> int:
    """Request the uncached ``items`` on ``tasks``' workers and cache their answers here
    (module docstring); returns how many were cached."""
    if per_task < 1:
        raise ValueError(f"per_task must be at least 1, got {per_task}")
    keyed = {cache_key(client.model, item, client.sampling): item for item in items}
    missing = [item for key, item in keyed.items() if cache.get(key) is None]
    if not missing:
        return 0
    endpoint = Endpoint.of(client)
    work = [CallTask(endpoint, tuple(missing[i:i + per_task]), concurrency, retry)
            for i in range(0, len(missing), per_task)]
    counts = {"stored": 0, "failed": 0, "requests": 0, "tokens": 0}

    def done(_i: int, answers: list[Answered]) -> None:
        for a in answers:
            counts["requests"] += a.attempts
            if a.answer is None:
                counts["failed"] += 1
                continue
            cache.put(a.key, keyed[a.key], client.model, a.answer)
            counts["stored"] += 1
            counts["tokens"] += a.answer.prompt_tokens + a.answer.completion_tokens

    tasks.map(call_judge, work, done)
    log(f"judge on workers: {len(missing)} item(s) in {len(work)} task(s), "
        f"{counts['requests']} request(s), {counts['tokens']} token(s); {counts['stored']} "
        f"answer(s) cached, {counts['failed']} failed (asked again directly)")
    return counts["stored"]
