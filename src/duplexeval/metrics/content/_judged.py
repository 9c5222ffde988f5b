"""The M3 content judges on TURN_SHIFT events: response relevance, contextual consistency and
(task domain) QA accuracy, each a 0-2 score from an LLM judge through :mod:`duplexeval.judge`.

Conventions:

* One judge item per (event, dimension), id ``{event_id}::{dimension}`` (the official
  ``custom_id``).  Prompts are :mod:`duplexeval.judge._templates` ``m3.relevance``,
  ``m3.consistency`` and ``m3.qa`` (M3, 0-2) and ``mtr.quality`` (MTR's dialogue quality,
  0-5; MTR's judge allows half points, ours asks for integers), in Japanese for Japanese
  events.  Each record carries the event's round (:mod:`.rounds`) for round-by-round curves.
* An empty response (the system said nothing in the window) is scored 0 without a call
  (``judge_model = "rule"``): every prompt's scale gives 0 to "no answer", and a call would cost
  money to learn that.  A QA event without a reference answer is unscored with that reason.
* Every item comes back: scored, or unscored with its reason (a malformed answer, a call that
  finally failed), and unscored items are counted in every table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from duplexeval.judge._batch import judge_batch
from duplexeval.judge._client import JudgeClient
from duplexeval.judge._meter import UsageMeter
from duplexeval.judge._records import JudgeItem, JudgePrompt, JudgeResult
from duplexeval.judge._store import AnswerCache
from duplexeval.judge._templates import load_prompt
from duplexeval.metrics.content._inputs import ContentInput
from duplexeval.metrics.content._items import ITEM_PROMPTS
from duplexeval.results._content import ContentRecord

__all__ = ["DIMENSION_PROMPTS", "JudgedOutcome", "judge_content", "plan_items"]

DIMENSION_PROMPTS = {"relevance": "m3.relevance", "consistency": "m3.consistency",
                     "qa": "m3.qa", "quality": "mtr.quality"}
"""Judged dimension -> prompt id."""

RULE_MODEL = "rule"


def dimensions_for(domain: str) -> tuple[str, ...]:
    """Relevance and consistency everywhere; QA on the task domain; MTR's dialogue quality
    (0-5 per round) on free conversation (the chat domain)."""
    if domain == "task":
        return ("relevance", "consistency", "qa")
    if domain == "chat":
        return ("relevance", "consistency", "quality")
    return ("relevance", "consistency")


@dataclass(frozen=True)
class _Planned:
    inp: ContentInput
    dimension: str
    item: JudgeItem | None
    fixed: tuple[int | None, str | None, str | None] | None = None
    """(score, reason, unscored reason) decided without a call."""


def _render(inp: ContentInput, dimension: str) -> JudgeItem:
    template = load_prompt(DIMENSION_PROMPTS[dimension])
    item_id = f"{inp.event_id}::{dimension}"
    if dimension == "relevance":
        return template.render(item_id, inp.language, user=inp.user, response=inp.response)
    if dimension in ("consistency", "quality"):
        return template.render(item_id, inp.language, history=inp.history, user=inp.user,
                               response=inp.response)
    return template.render(item_id, inp.language, question=inp.user,
                           reference=inp.reference, response=inp.response)


def plan_items(inputs: Sequence[ContentInput]) -> list[_Planned]:
    """Every (event, dimension) to judge, with those decided without a call."""
    out = []
    for inp in inputs:
        for dimension, fields in inp.items.items():
            item = load_prompt(ITEM_PROMPTS[dimension]).render(
                f"{inp.event_id}::{dimension}", inp.language, **fields)
            said = fields.get("response", "") + fields.get("after", "")
            out.append(_Planned(inp, dimension, item, None if said.strip() else (
                item.prompt.score_min, "empty response: scored without a call", None)))
        if inp.event_type != "TURN_SHIFT":
            continue
        for dimension in dimensions_for(inp.domain):
            item = _render(inp, dimension)
            if not inp.response.strip():
                out.append(_Planned(inp, dimension, item,
                                    (item.prompt.score_min, "empty response: scored without a "
                                     "call", None)))
            elif dimension == "qa" and not inp.reference.strip():
                out.append(_Planned(inp, dimension, item,
                                    (None, None, "no reference answer in the dataset")))
            else:
                out.append(_Planned(inp, dimension, item))
    return out


def _score_100(score: float | None, prompt: JudgePrompt) -> float | None:
    if score is None:
        return None
    return (score - prompt.score_min) / (prompt.score_max - prompt.score_min) * 100.0


def _record(p: _Planned, result: JudgeResult | None) -> ContentRecord:
    assert p.item is not None
    prompt = p.item.prompt
    common = dict(event_id=p.inp.event_id, dimension=p.dimension, prompt_id=prompt.prompt_id,
                  prompt_version=prompt.version, sample_id=p.inp.sample_id,
                  language=p.inp.language, domain=p.inp.domain, round=p.inp.round)
    if result is None:
        assert p.fixed is not None
        score, reason, unscored = p.fixed
        return ContentRecord(**common, score=score, score_100=_score_100(score, prompt),
                             unscored_reason=unscored, judge_model=RULE_MODEL, raw=None,
                             reason=reason)
    return ContentRecord(**common, score=result.score,
                         score_100=_score_100(result.score, prompt),
                         unscored_reason=result.unscored_reason,
                         judge_model=result.judge_model, raw=result.raw, reason=result.reason)


@dataclass(frozen=True)
class JudgedOutcome:
    """The records in (event, dimension) order and the usage meter."""

    records: list[ContentRecord]
    meter: UsageMeter


def judge_content(inputs: Sequence[ContentInput], client: JudgeClient, cache: AnswerCache, *,
                  max_concurrency: int = 4,
                  on_result: Callable[[JudgeResult], None] | None = None,
                  prefetch: Callable[[list[JudgeItem]], object] | None = None,
                  ) -> JudgedOutcome:
    """Judge every planned item (cache first, then bounded concurrent calls).  ``prefetch``,
    when given, is called with the items needing a call before the batch (the Batch API mode
    fills the cache there)."""
    planned = plan_items(inputs)
    calls = [p.item for p in planned if p.fixed is None and p.item is not None]
    if prefetch is not None and calls:
        prefetch(calls)
    meter = UsageMeter(client.model)
    outcome = judge_batch(client, calls, cache, max_concurrency=max_concurrency, meter=meter,
                          on_result=on_result)
    by_id = {r.item_id: r for r in outcome.results}
    records = [_record(p, None if p.fixed is not None else by_id[p.item.item_id])
               for p in planned if p.item is not None]
    return JudgedOutcome(records=records, meter=meter)
