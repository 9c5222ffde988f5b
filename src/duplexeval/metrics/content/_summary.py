"""The content records and their aggregation: ``content.jsonl`` lines (judged), the offline
per-event values, and the rows that go into ``results.json``.

Scales in the aggregates: judged dimensions of a normalised prompt are shown on 0-100
(``(score - min) / (max - min) * 100``: M3's 0/1/2 become 0/50/100, MTR's 0/1 instruction and
safety become percent); those of an ``own``-scale prompt keep it (FLEXI's TSS, EDS and
coherence and MTR's dialogue quality on 0-5, half points allowed for MTR's, as their papers
print them: :func:`judged_scale`); ``qa_f1``, ``qa_em`` and ``truncated`` are shown
×100 (percent); ``response_words`` is a count.  Each row has the mean with its Student-t 95 %
interval (:mod:`duplexeval.metrics._stats`), ``n`` (scored events) and ``unscored`` (events judged
but without a score: never dropped silently).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from duplexeval.judge._templates import load_prompt
from duplexeval.metrics._stats import summarize
from duplexeval.results._content import (
    ContentAggregate,
    ContentRecord,
    OfflineRecord,
)

__all__ = ["CURVE_ROUNDS", "OWN_SCALES", "aggregate_content", "judged_scale"]


_OFFLINE: tuple[tuple[str, Literal["percent", "count"], float], ...] = (
    ("qa_f1", "percent", 100.0), ("qa_em", "percent", 100.0),
    ("response_words", "count", 1.0), ("truncated", "percent", 100.0))

Row = ContentRecord | OfflineRecord

CURVE_ROUNDS = 10
"""Rounds with a point on the curves (MTR evaluates 10 rounds)."""


def _breakdowns(rows: Sequence[Row]) -> list[tuple[str, str, Callable[[Row], bool]]]:
    pairs = sorted({(r.language, r.domain) for r in rows})
    out: list[tuple[str, str, Callable[[Row], bool]]] = [("all", "all", lambda r: True)]
    if len(pairs) > 1:
        out += [(lang, dom, _of(lang, dom)) for lang, dom in pairs]
    return out


def _of(language: str, domain: str) -> Callable[[Row], bool]:
    """Whether a row is of ``language`` and ``domain``."""
    return lambda r: r.language == language and r.domain == domain


Scale = Literal["0-100", "0-5", "percent", "count"]
OWN_SCALES: dict[str, Scale] = {"0-5": "0-5"}
"""The prompts' own scales an aggregate can keep."""


def _row(language: str, domain: str, kind: Literal["judged", "offline"], dimension: str,
         scale: Scale, values: Iterable[float],
         unscored: int, round_: int | None = None) -> ContentAggregate:
    s = summarize(values, bounded=scale != "count", proportion=False)
    return ContentAggregate(language=language, domain=domain, kind=kind, dimension=dimension,
                            scale=scale, n=s.n, unscored=unscored, mean=s.mean, std=s.std,
                            ci95_low=s.ci_low, ci95_high=s.ci_high,
                            ci95_half_width=s.half_width, ci_method=s.method,
                            few_events=s.few, round=round_)


def judged_scale(record: ContentRecord) -> tuple[Scale, float | None]:
    """How a judged record enters the aggregates: on 0-100 (``score_100``) for a prompt whose
    scale is normalised (M3's), or on the prompt's own scale (its ``score``: FLEXI's and MTR's
    0-5, as their papers print them)."""
    prompt = load_prompt(record.prompt_id).prompt
    if prompt.scale == "own":
        scale = f"{prompt.score_min}-{prompt.score_max}"
        if scale not in OWN_SCALES:
            raise ValueError(f"prompt {prompt.prompt_id}: no aggregate scale {scale}")
        value = None if record.score is None else float(record.score)
        return OWN_SCALES[scale], value
    return "0-100", record.score_100


def _judged_row(language: str, domain: str, dimension: str, records: Sequence[ContentRecord],
                round_: int | None = None) -> ContentAggregate:
    scales = [judged_scale(r) for r in records]
    scale = scales[0][0]
    values = [v for _, v in scales if v is not None]
    return _row(language, domain, "judged", dimension, scale, values,
                sum(v is None for _, v in scales), round_)


def _curves(judged: Sequence[ContentRecord]) -> list[ContentAggregate]:
    rows = []
    for dimension in sorted({r.dimension for r in judged}):
        for k in range(1, CURVE_ROUNDS + 1):
            of = [r for r in judged if r.dimension == dimension and r.round == k]
            if of:
                rows.append(_judged_row("all", "all", dimension, of, k))
    return rows


def aggregate_content(judged: Sequence[ContentRecord],
                      offline: Sequence[OfflineRecord]) -> list[ContentAggregate]:
    """Every aggregate row: judged dimensions (0-100) and offline values, over all events and,
    when the run mixes them, per (language, domain); then the judged dimensions per round."""
    rows: list[ContentAggregate] = []
    for language, domain, keep in _breakdowns([*judged, *offline]):
        mine = [r for r in judged if keep(r)]
        for dimension in sorted({r.dimension for r in mine}):
            of = [r for r in mine if r.dimension == dimension]
            rows.append(_judged_row(language, domain, dimension, of))
        kept = [r for r in offline if keep(r)]
        for name, scale, factor in _OFFLINE:
            values = [getattr(r, name) for r in kept]
            if all(v is None for v in values):
                continue
            rows.append(_row(language, domain, "offline", name, scale,
                             [v * factor for v in values if v is not None], 0))
    return rows + _curves(judged)
