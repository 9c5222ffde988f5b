"""Content scoring of one set of analysed events: the offline values always, the LLM judges
when a judge is configured; what was not computed is listed with the reason and how to enable
it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from duplexeval.data._dialogue import Dialogue
from duplexeval.errors import DuplexevalError
from duplexeval.judge._client import JudgeClient
from duplexeval.judge._meter import Prices
from duplexeval.judge._records import JudgeItem, JudgeResult, Sampling
from duplexeval.judge._store import AnswerCache, cache_key, default_cache_path
from duplexeval.metrics._base import EventView
from duplexeval.metrics.content._inputs import (
    CONTENT_EVENT_TYPES,
    ContentInput,
    ContentOptions,
    build_input,
)
from duplexeval.metrics.content._items import ITEM_PROMPTS
from duplexeval.metrics.content._judged import DIMENSION_PROMPTS, dimensions_for, judge_content
from duplexeval.metrics.content._offline import exact_match, token_f1
from duplexeval.metrics.content._rounds import RoundFinder
from duplexeval.metrics.content._summary import aggregate_content
from duplexeval.metrics.content._text import Utterance
from duplexeval.results._content import ContentRecord, ContentResults, NotComputed, OfflineRecord
from duplexeval.runs._execution import TaskMap

__all__ = ["ContentOutcome", "JudgeSettings", "content_not_computed", "offline_record",
           "score_content"]

ENABLE_HINT = ("no judge configured; add --judge-url URL --judge-model MODEL (any "
               "OpenAI-compatible endpoint; key from DUPLEXEVAL_JUDGE_API_KEY or OPENAI_API_KEY)")


@dataclass(frozen=True)
class JudgeSettings:
    """Where and how to judge.  ``cache_path`` defaults to the shared answer cache."""

    base_url: str
    model: str
    concurrency: int = 4
    timeout: float = 60.0
    cache_path: Path | None = None
    prices: Prices | None = None
    prefetch: Callable[[JudgeClient, AnswerCache, list[JudgeItem]], object] | None = None
    """Called before the batch with the items that need a call (the Batch API mode)."""
    workers: TaskMap | None = None
    """Spread the uncached calls over this executor's workers (:mod:`.spread`; not with
    ``prefetch``); what is judged and recorded is the same."""
    sampling: Sampling = field(default_factory=Sampling)
    """The sampling settings of every request (part of the cache key; greedy, 256 tokens)."""
    cache_only: bool = False
    """Answer only from the cache, never call (``duplexeval verify`` on a bundle's cache): an
    item without a cached answer is a one-line error naming the cache."""

    def describe(self) -> dict[str, object]:
        """What results.json records about the judge (never the key)."""
        from duplexeval.judge._templates import load_prompt

        return {"model": self.model, "base_url": self.base_url,
                "batch_api": self.prefetch is not None,
                "prompts": {p: load_prompt(p).prompt.version
                            for p in [*DIMENSION_PROMPTS.values(), *ITEM_PROMPTS.values()]}}


@dataclass
class ContentOutcome:
    """Everything content scoring produced."""

    inputs: list[ContentInput]
    offline: list[OfflineRecord]
    judged: list[ContentRecord]
    results: ContentResults
    usage_line: str | None = None
    notes: list[str] = field(default_factory=list)


def offline_record(inp: ContentInput) -> OfflineRecord:
    """The LLM-free values of one event (QA values only with a reference, in the task
    domain)."""
    qa = inp.domain == "task" and bool(inp.reference.strip())
    return OfflineRecord(
        event_id=inp.event_id, sample_id=inp.sample_id, language=inp.language,
        domain=inp.domain, response_words=inp.response_words, truncated=inp.truncated,
        qa_f1=token_f1(inp.response, inp.reference, inp.language) if qa else None,
        qa_em=exact_match(inp.response, inp.reference, inp.language) if qa else None,
        user=inp.user, response=inp.response, reference=inp.reference)


def _not_computed(inputs: Sequence[ContentInput], dialogues_missing: str | None,
                  judge: JudgeSettings | None) -> list[NotComputed]:
    dims = sorted({d for i in inputs for d in [*dimensions_for(i.domain), *i.items]},
                  key=list({**DIMENSION_PROMPTS, **ITEM_PROMPTS}).index)
    out = []
    if dialogues_missing and any(i.domain == "task" for i in inputs):
        out += [NotComputed(dimension=d, reason=dialogues_missing) for d in ("qa_f1", "qa_em")]
    if judge is None:
        out += [NotComputed(dimension=d, reason=ENABLE_HINT) for d in dims]
    return out


def score_content(events: Sequence[EventView], dialogues: Mapping[str, Dialogue] | None,
                  options: ContentOptions | None = None, judge: JudgeSettings | None = None,
                  *, generated: Mapping[str, Sequence[Utterance]] | None = None,
                  dialogues_missing: str | None = None,
                  on_result: Callable[[JudgeResult], None] | None = None,
                  rounds: RoundFinder | None = None) -> ContentOutcome:
    """Content inputs, offline values and (with ``judge``) judged records of the content
    events among ``events``.  ``dialogues`` maps sample ids to the reference dialogues
    (``None`` when the dataset is unavailable; ``dialogues_missing`` says why); ``rounds``
    numbers the events' rounds (default: the segment fallback on the reference dialogues)."""
    options = options or ContentOptions()
    rounds = rounds or RoundFinder()
    inputs = [build_input(e, (dialogues or {}).get(e.sample_id), options, generated, rounds)
              for e in events if e.event_type in CONTENT_EVENT_TYPES
              or "flexi" in e.metadata or "mtr_round" in e.metadata]
    inputs = [i for i in inputs if i.event_type in CONTENT_EVENT_TYPES or i.items]
    offline = [offline_record(i) for i in inputs if i.event_type in CONTENT_EVENT_TYPES]
    judged: list[ContentRecord] = []
    usage = usage_line = None
    if judge is not None and inputs:
        client = JudgeClient(judge.base_url, judge.model, timeout=judge.timeout,
                             sampling=judge.sampling)
        try:
            with AnswerCache(judge.cache_path or default_cache_path()) as cache:
                prefetch: Callable[[list[JudgeItem]], object] | None = None
                if judge.cache_only:
                    prefetch = _cached_only(client, cache, judge.cache_path)
                elif judge.prefetch is not None:
                    hook = judge.prefetch
                    prefetch = lambda items: hook(client, cache, items)  # noqa: E731
                elif judge.workers is not None:
                    from duplexeval.metrics.content._spread import prefetch_on_workers

                    tasks, n = judge.workers, judge.concurrency
                    prefetch = lambda items: prefetch_on_workers(  # noqa: E731
                        client, cache, items, tasks=tasks, concurrency=n)
                done = judge_content(inputs, client, cache, max_concurrency=judge.concurrency,
                                     on_result=on_result, prefetch=prefetch)
        finally:
            client.close()
        if judge.prices is not None:
            done.meter.prices = judge.prices
        judged, usage_line = done.records, done.meter.summary()
        usage = {"requests": done.meter.requests, "retries": done.meter.retries,
                 "cached": done.meter.cached, "prompt_tokens": done.meter.prompt_tokens,
                 "completion_tokens": done.meter.completion_tokens, "cost_usd": done.meter.cost,
                 "summary": usage_line}
    settings: dict[str, object] = {**options.settings(),
                                   "judge": judge.describe() if judge else None}
    results = ContentResults(settings=settings, aggregates=aggregate_content(judged, offline),
                             not_computed=_not_computed(inputs, dialogues_missing, judge),
                             usage=usage)
    return ContentOutcome(inputs=inputs, offline=offline, judged=judged, results=results,
                          usage_line=usage_line)


def _cached_only(client: JudgeClient, cache: AnswerCache,
                 path: Path | None) -> Callable[[list[JudgeItem]], None]:
    """A prefetch hook that refuses any item whose answer is not in ``cache``."""
    def check(items: list[JudgeItem]) -> None:
        missing = sum(cache.get(cache_key(client.model, i, client.sampling)) is None
                      for i in items)
        if missing:
            raise DuplexevalError(f"{path}: {missing} of {len(items)} judge answers are not "
                                  "in this cache (it answers without calling the judge)")
    return check


def content_not_computed(domain: str, reason: str) -> ContentOutcome:
    """The outcome of a scoring whose analysis has no content transcripts: every content
    dimension of ``domain`` listed as not computed, with ``reason``."""
    dims = [*dimensions_for(domain), "response_words", "truncated"]
    if domain == "task":
        dims += ["qa_f1", "qa_em"]
    results = ContentResults(settings={"judge": None}, aggregates=[],
                             not_computed=[NotComputed(dimension=d, reason=reason)
                                           for d in dims])
    return ContentOutcome(inputs=[], offline=[], judged=[], results=results)
