"""Score analysed events with a timing variant and aggregate as the official code does.

The official aggregation (M3 ``run_evaluation.aggregate_results``): for every event with results,
every (dimension, metric, value) with a value that is not ``None`` (booleans as ints, any int or
float as float) joins the group ``(event_type, dimension, metric)``; a group reports ``n`` and
``mean = sum(values) / n``; rows sorted by that key.  :func:`official_aggregate` reproduces it and
adds the Student-t interval fields of :mod:`duplexeval.metrics._stats` (``std``, ``ci95_low``,
``ci95_high``, ``ci95_half_width``, ``few_events`` = the † marker).

The results rows (:func:`aggregate_rows`, :func:`label_rows`) of the metrics a variant names in
``quantile_metrics`` (``"dimension/metric"``) also carry ``quantiles``: p10, p50 and p90 of the
same values (:func:`duplexeval.metrics._stats.quantiles`); the official rows never do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from duplexeval.metrics._base import EventScore, EventView, TimingVariant
from duplexeval.metrics._stats import quantiles, summarize

__all__ = [
    "AggregateKey",
    "aggregate_rows",
    "label_rows",
    "official_aggregate",
    "per_event_rows",
    "score_events",
]

AggregateKey = tuple[str, str, str]

CURVE_ROUNDS = 10
"""Rounds with a point on the round-by-round curves (MTR evaluates 10 rounds)."""


def score_events(events: Iterable[EventView], variant: TimingVariant) -> list[EventScore]:
    """Score every event the variant has a dimension for (others are left out, as officially),
    after :meth:`~.base.TimingVariant.prepare` has seen them all."""
    events = list(events)
    variant.prepare(events)
    return [s for s in (variant.score(e) for e in events) if s.dimensions]


def _numeric(value: Any) -> float | int | None:
    """A value that joins an aggregate: a bool as its int, an int as is (a 0/1 int or bool is a
    verdict, aggregated as a proportion), a float as is; anything else ``None``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    return None


def _groups(scores: Iterable[EventScore], extras: bool,
            keep: Callable[[EventScore], bool] = lambda s: True,
            ) -> dict[AggregateKey, list[float | int]]:
    groups: dict[AggregateKey, list[float | int]] = defaultdict(list)
    for score in scores:
        if not keep(score):
            continue
        for dim in score.dimensions:
            for metric, value in (dim.extras if extras else dim.values).items():
                x = _numeric(value)
                if x is not None:
                    groups[(score.event.event_type, dim.dimension, metric)].append(x)
    return groups


def _row(key: AggregateKey, values: Sequence[float]) -> dict[str, Any]:
    event_type, dimension, metric = key
    s = summarize(values)
    return {"event_type": event_type, "dimension": dimension, "metric": metric, "n": s.n,
            "mean": s.mean, "std": s.std, "ci95_low": s.ci_low, "ci95_high": s.ci_high,
            "ci95_half_width": s.half_width, "ci_method": s.method, "few_events": s.few}


def _results_row(key: AggregateKey, values: Sequence[float],
                 quantile_metrics: Collection[str]) -> dict[str, Any]:
    """:func:`_row` with the quantiles of the metrics in ``quantile_metrics``."""
    row = _row(key, values)
    if f"{key[1]}/{key[2]}" in quantile_metrics:
        row["quantiles"] = quantiles(values)
    return row


def official_aggregate(scores: Iterable[EventScore]) -> list[dict[str, Any]]:
    """The official summary rows (plus interval fields), sorted by (event_type, dimension,
    metric)."""
    return [_row(k, v) for k, v in sorted(_groups(scores, extras=False).items())]


def aggregate_rows(scores: Sequence[EventScore],
                   quantile_metrics: Collection[str] = ()) -> list[dict[str, Any]]:
    """Every aggregate for results.json: official metrics and the variant's extra metrics, over
    all events and broken down by language, by domain and by both; the rows of
    ``quantile_metrics`` (``"dimension/metric"``) with their p10/p50/p90."""
    rows: list[dict[str, Any]] = []
    languages = sorted({s.event.language for s in scores})
    domains = sorted({s.event.domain for s in scores})
    breakdowns: list[tuple[str, str, Callable[[EventScore], bool]]] = [
        ("all", "all", lambda s: True)]
    if len(languages) > 1:
        breakdowns += [(lang, "all", _of(lang, None)) for lang in languages]
    if len(domains) > 1:
        breakdowns += [("all", dom, _of(None, dom)) for dom in domains]
    if len(languages) > 1 or len(domains) > 1:
        breakdowns += [(lang, dom, _of(lang, dom)) for lang in languages for dom in domains]
    for language, domain, keep in breakdowns:
        for extras in (False, True):
            for key, values in sorted(_groups(scores, extras, keep).items()):
                rows.append({"language": language, "domain": domain, "official": not extras,
                             **_results_row(key, values, quantile_metrics)})
    return rows + _round_rows(scores, quantile_metrics=quantile_metrics)


def _of(language: str | None, domain: str | None) -> Callable[[EventScore], bool]:
    """Whether a score's event is of ``language`` and ``domain`` (``None``: any)."""
    return lambda s: ((language is None or s.event.language == language)
                      and (domain is None or s.event.domain == domain))


def _in_round(k: int) -> Callable[[EventScore], bool]:
    """Whether a score's event is in round ``k`` of its dialogue."""
    return lambda s: s.event.metadata.get("round") == k


def _round_rows(scores: Sequence[EventScore],
                keep: Callable[[EventScore], bool] = lambda s: True,
                quantile_metrics: Collection[str] = (), **fields: Any) -> list[dict[str, Any]]:
    """Per-round rows (rounds 1 to :data:`CURVE_ROUNDS`, over all languages and domains) for
    events whose metadata carries their ``round`` in the dialogue (the MTR-style curves), of
    the events ``keep`` selects; ``fields`` join every row."""
    rows: list[dict[str, Any]] = []
    for k in range(1, CURVE_ROUNDS + 1):
        chosen = _both(_in_round(k), keep)
        for extras in (False, True):
            groups = _groups(scores, extras, chosen)
            for key, values in sorted(groups.items()):
                rows.append({"language": "all", "domain": "all", "official": not extras,
                             **_results_row(key, values, quantile_metrics), "round": k,
                             **fields})
    return rows


def _both(a: Callable[[EventScore], bool],
          b: Callable[[EventScore], bool]) -> Callable[[EventScore], bool]:
    return lambda s: a(s) and b(s)


def _with_label(label: str) -> Callable[[EventScore], bool]:
    """Whether a score's event is in a dialogue labelled ``label``."""
    return lambda s: s.event.metadata.get("dialogue_label") == label


def label_rows(scores: Sequence[EventScore],
               quantile_metrics: Collection[str] = ()) -> list[dict[str, Any]]:
    """Rows per dialogue label (MTR's features and combinations: the ``dialogue_label`` of the
    event metadata), over all rounds (``round`` ``None``) and per round, over all languages and
    domains (``quantile_metrics`` as in :func:`aggregate_rows`); none when no event carries a
    label."""
    labels = sorted({str(s.event.metadata["dialogue_label"]) for s in scores
                     if s.event.metadata.get("dialogue_label") is not None})
    rows: list[dict[str, Any]] = []
    for label in labels:
        keep = _with_label(label)
        for extras in (False, True):
            for key, values in sorted(_groups(scores, extras, keep).items()):
                rows.append({"language": "all", "domain": "all", "official": not extras,
                             **_results_row(key, values, quantile_metrics), "label": label})
        rows += _round_rows(scores, keep, quantile_metrics, label=label)
    return rows


def per_event_rows(scores: Iterable[EventScore]) -> list[dict[str, Any]]:
    """One flat row per (event, dimension): ids, the official metric values, the extras and the
    miss type."""
    out = []
    for score in scores:
        for dim in score.dimensions:
            row: dict[str, Any] = {"event_id": score.event.event_id,
                                   "sample_id": score.event.sample_id,
                                   "event_type": score.event.event_type,
                                   "dimension": dim.dimension}
            row.update(dim.values)
            row.update(dim.extras)
            if "miss_type" in dim.info:
                row["miss_type"] = dim.info["miss_type"]
            out.append(row)
    return out
