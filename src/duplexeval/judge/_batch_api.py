"""The OpenAI Batch API mode: the uncached items of a scoring go to the endpoint as one
asynchronous batch job, and its answers fill the answer cache; :func:`~.batch.judge_batch`
then finds them there.

Flow (OpenAI's ``/v1/files`` and ``/v1/batches``, which the ``openai`` package drives):

1. the items not in the cache become one JSONL file, a line per item: ``custom_id`` = the item's
   cache key, ``method`` ``POST``, ``url`` ``/v1/chat/completions``, ``body`` the request the
   direct mode would send (JSON mode included);
2. the file is uploaded (purpose ``batch``) and a batch is created (window ``24h``);
3. the batch is polled every ``poll_seconds`` until it ends (``completed``, ``failed``,
   ``expired`` or ``cancelled``), up to ``max_wait_seconds``;
4. each successful output line is cached; a failed line, or an item the output lacks, stays
   uncached, so the direct mode that follows asks for it (and records it as unscored if that
   fails too): nothing is dropped.

Resuming: the batch id is saved in ``{cache folder}/batches/{digest}.json``, where the digest
covers the set of cache keys; a killed wait started again with the same items polls the same
batch instead of creating (and paying for) a new one.  The file is removed once the batch's
answers are cached.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from duplexeval._fileio import atomic_write_json, json_line
from duplexeval.judge._client import JSON_MODE, JudgeClient
from duplexeval.judge._records import JudgeItem
from duplexeval.judge._store import AnswerCache, CachedAnswer, cache_key

__all__ = ["BatchApiOptions", "prefetch_with_batch_api", "request_lines"]

ENDPOINT: Final = "/v1/chat/completions"
FINAL = {"completed", "failed", "expired", "cancelled"}


class BatchApiOptions:
    """Polling settings."""

    def __init__(self, poll_seconds: float = 30.0, max_wait_seconds: float = 24 * 3600,
                 sleep: Callable[[float], None] = time.sleep,
                 log: Callable[[str], None] = lambda s: print(s, file=sys.stderr)) -> None:
        self.poll_seconds, self.max_wait_seconds = poll_seconds, max_wait_seconds
        self.sleep, self.log = sleep, log


def request_lines(client: JudgeClient, items: Sequence[JudgeItem]) -> list[dict[str, Any]]:
    """The batch input lines of ``items`` (``custom_id`` = cache key)."""
    return [{"custom_id": cache_key(client.model, item, client.sampling), "method": "POST",
             "url": ENDPOINT,
             "body": {"model": client.model,
                      "messages": [{"role": r, "content": c} for r, c in item.messages],
                      **client.sampling.as_request(),
                      **(JSON_MODE if client.json_mode else {})}}
            for item in items]


def _state_path(cache: AnswerCache, keys: Sequence[str]) -> Path:
    digest = hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:24]
    return cache.path.parent / "batches" / f"{digest}.json"


def _start(client: JudgeClient, lines: list[dict[str, Any]], state: Path,
           log: Callable[[str], None]) -> str:
    if state.is_file():
        batch_id = str(json.loads(state.read_text(encoding="utf-8"))["batch_id"])
        log(f"judge batch: resuming {batch_id}")
        return batch_id
    data = "".join(json_line(line) for line in lines).encode()
    upload = client.openai.files.create(file=("requests.jsonl", io.BytesIO(data)),
                                        purpose="batch")
    batch = client.openai.batches.create(input_file_id=upload.id, endpoint=ENDPOINT,
                                         completion_window="24h")
    state.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(state, {"batch_id": batch.id, "input_file_id": upload.id,
                              "requests": len(lines)})
    log(f"judge batch: created {batch.id} with {len(lines)} request(s)")
    return str(batch.id)


def _store_output(text: str, by_key: dict[str, JudgeItem], client: JudgeClient,
                  cache: AnswerCache) -> int:
    stored = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        item = by_key.get(str(record.get("custom_id")))
        response = record.get("response") or {}
        body = response.get("body") or {}
        if item is None or response.get("status_code") != 200 or not body.get("choices"):
            continue
        content = body["choices"][0].get("message", {}).get("content")
        if content is None:
            continue
        usage = body.get("usage") or {}
        cache.put(record["custom_id"], item, client.model,
                  CachedAnswer(content, int(usage.get("prompt_tokens", 0)),
                               int(usage.get("completion_tokens", 0))))
        stored += 1
    return stored


def prefetch_with_batch_api(client: JudgeClient, cache: AnswerCache,
                            items: Sequence[JudgeItem],
                            options: BatchApiOptions | None = None) -> int:
    """Send the uncached ``items`` as one batch, wait for it and cache its answers; returns
    how many were cached.  Errors of the batch endpoints propagate (the caller's direct mode
    is not tried then: a user asking for the Batch API should hear that it failed)."""
    options = options or BatchApiOptions()
    keyed = {cache_key(client.model, item, client.sampling): item for item in items}
    missing = {k: v for k, v in keyed.items() if cache.get(k) is None}
    if not missing:
        return 0
    state = _state_path(cache, list(missing))
    batch_id = _start(client, request_lines(client, list(missing.values())), state, options.log)
    waited = 0.0
    batch = client.openai.batches.retrieve(batch_id)
    while batch.status not in FINAL and waited < options.max_wait_seconds:
        options.sleep(options.poll_seconds)
        waited += options.poll_seconds
        batch = client.openai.batches.retrieve(batch_id)
    if batch.status not in FINAL:
        options.log(f"judge batch: {batch_id} still {batch.status} after {waited:.0f} s; "
                    "run again to resume waiting")
        return 0
    stored = 0
    if batch.output_file_id:
        stored = _store_output(client.openai.files.content(batch.output_file_id).text,
                               missing, client, cache)
    state.unlink(missing_ok=True)
    options.log(f"judge batch: {batch_id} {batch.status}; {stored} of {len(missing)} "
                "answer(s) cached, the rest go as direct requests")
    return stored
