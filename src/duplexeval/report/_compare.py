"""``duplexeval compare RUN_A RUN_B``: every metric's paired difference over the events both
runs scored, with a bootstrap 95 % CI, a permutation p-value and Holm's correction across the
metrics (the statistics: :mod:`duplexeval.metrics._paired`).

Events are matched by what they are: the dialogue (``sample_id``), the user channel, the event
type and its span (to the millisecond), so one event under Single and Multi (gen) pairs up even
though the official event ids number each protocol's samples differently; when either side has
no spans (an older file) events are matched by ``(sample_id, event_id)``.  Content records
follow their event.

Metrics: every timing value and extra of ``results.json`` (``tor ↑`` as percent points,
booleans as 0/1, other values as stored), the judged content scores (0-100,
``content.jsonl``) and the offline content values (``content_offline.jsonl``; QA F1/EM and
truncation in percent).  A metric one run lacks, or with no shared event, is left out.  The
result is data (:class:`Comparison`, with :meth:`Comparison.to_json`) that a report can
include, and a table (:func:`compare_lines`).  ``duplexeval report`` includes the comparisons
of each system's protocols against its Single run (:func:`protocol_pairs`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from duplexeval.errors import DuplexevalError
from duplexeval.metrics._paired import BOOTSTRAP_RESAMPLES, PERMUTATIONS, holm, paired_difference
from duplexeval.report._columns import protocol_order
from duplexeval.report._text import format_table
from duplexeval.results import ScoredRun
from duplexeval.results._model import EventResult

__all__ = ["CompareRow", "Comparison", "compare_lines", "compare_runs", "comparisons_markdown",
           "metric_values", "protocol_pairs"]

MetricKey = tuple[str, str, str]
"""(event type or ``content``, dimension or content kind, metric)."""
EventKey = tuple[str, ...]
"""An event's identity (see the module docstring)."""

_PERCENT = {"qa_f1", "qa_em", "truncated"}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _scale(metric: str) -> float:
    return 100.0 if metric.startswith("tor") or metric in _PERCENT else 1.0


def _has_span(e: EventResult) -> bool:
    return e.event_start is not None and e.event_end is not None and e.user_channel is not None


def _identity(e: EventResult, by_span: bool) -> EventKey:
    if not by_span:
        return (e.sample_id, e.event_id)
    return (e.sample_id, str(e.user_channel), e.event_type, f"{e.event_start:.3f}",
            f"{e.event_end:.3f}")


def metric_values(run: ScoredRun, by_span: bool = True,
                  ) -> dict[MetricKey, dict[EventKey, float]]:
    """Every per-event value of a run, by metric and event (matched by span where
    ``by_span`` and the event has one; see the module docstring)."""
    out: dict[MetricKey, dict[EventKey, float]] = defaultdict(dict)
    identity: dict[tuple[str, str], EventKey] = {}
    for e in run.results.events:
        key = identity.setdefault((e.sample_id, e.event_id),
                                  _identity(e, by_span and _has_span(e)))
        for metric, value in {**e.values, **e.extras}.items():
            x = _number(value)
            if x is not None:
                out[(e.event_type, e.dimension, metric)][(*key, e.dimension)] = \
                    x * _scale(metric)
    for r in run.judged():
        key = identity.get((r.sample_id, r.event_id), (r.sample_id, r.event_id))
        if r.score_100 is not None:
            out[("content", "judged", r.dimension)][(*key, "")] = r.score_100
    for o in run.offline():
        key = identity.get((o.sample_id, o.event_id), (o.sample_id, o.event_id))
        for name in ("qa_f1", "qa_em", "response_words", "truncated"):
            x = _number(getattr(o, name))
            if x is not None:
                out[("content", "offline", name)][(*key, "")] = x * _scale(name)
    return dict(out)


@dataclass(frozen=True)
class CompareRow:
    """One metric's comparison (values in display units: percent points for TOR)."""

    event_type: str
    dimension: str
    metric: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    p_holm: float


@dataclass(frozen=True)
class Comparison:
    """``b - a`` for every metric both runs have, with the settings of the statistics."""

    a: str
    b: str
    rows: tuple[CompareRow, ...]
    events_a: int
    events_b: int
    shared: int
    resamples: int = BOOTSTRAP_RESAMPLES
    permutations: int = PERMUTATIONS
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "rows": [asdict(r) for r in self.rows],
                "difference": "b - a", "ci": "percentile bootstrap 95 %",
                "p_value": "two-sided paired sign-flip permutation test",
                "correction": "Holm across the metrics"}


def _events(values: dict[MetricKey, dict[EventKey, float]]) -> set[EventKey]:
    return {key[:-1] for per_event in values.values() for key in per_event}


def compare_runs(a: ScoredRun, b: ScoredRun, seed: int = 0) -> Comparison:
    """Compare run ``b`` against run ``a`` (see the module docstring); a one-line error when
    they share no event."""
    by_span = all(_has_span(e) for run in (a, b) for e in run.results.events)
    va, vb = metric_values(a, by_span), metric_values(b, by_span)
    shared_events = _events(va) & _events(vb)
    if not shared_events:
        raise DuplexevalError(f"{a.path} and {b.path} share no scored event (matched by "
                              "dialogue, channel, type and span): were they run on the same "
                              "dataset?")
    found = []
    for key in sorted(set(va) & set(vb)):
        shared = sorted(set(va[key]) & set(vb[key]))
        if shared:
            found.append((key, paired_difference([va[key][e] for e in shared],
                                                 [vb[key][e] for e in shared], seed=seed)))
    adjusted = holm([d.p_value for _, d in found])
    rows = tuple(CompareRow(*key, d.n, d.mean_a, d.mean_b, d.diff, d.ci_low, d.ci_high,
                            d.p_value, p) for (key, d), p in zip(found, adjusted, strict=True))
    return Comparison(str(a.path), str(b.path), rows, len(_events(va)), len(_events(vb)),
                      len(shared_events), seed=seed)


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def compare_lines(comparison: Comparison) -> list[str]:
    """The comparison as a terminal table, with what its columns mean."""
    table = [[f"{r.event_type} {r.metric}" + ("" if r.event_type == "content"
                                              else f" [{r.dimension}]"),
              r.n, f"{r.mean_a:.3f}", f"{r.mean_b:.3f}", f"{r.diff:+.3f}",
              f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]", _p(r.p_value), _p(r.p_holm),
              "*" if r.p_holm < 0.05 else ""] for r in comparison.rows]
    header = ["metric", "n", "A", "B", "B - A", "95 % CI", "p", "p (Holm)", ""]
    return [f"A: {comparison.a} ({comparison.events_a} events)",
            f"B: {comparison.b} ({comparison.events_b} events); {comparison.shared} shared",
            "", *format_table(header, table), "",
            f"B - A over shared events; CI: percentile bootstrap ({comparison.resamples} "
            f"resamples, seed {comparison.seed}); p: two-sided paired sign-flip permutation "
            f"test (exact up to 12 events, else {comparison.permutations} draws); Holm across "
            f"{len(comparison.rows)} metrics; * p (Holm) < 0.05; TOR in percent points."]


def protocol_pairs(runs: Sequence[ScoredRun]) -> list[tuple[ScoredRun, ScoredRun]]:
    """(baseline, other) for every system run under several protocols on one dataset: the
    baseline is its Single run (else its first protocol in the order Single, Gen., Ref.)."""
    groups: dict[tuple[str, str], list[ScoredRun]] = {}
    for run in runs:
        source = run.results.source
        dataset = source.dataset.identity() if source.dataset else ""
        groups.setdefault((source.system, dataset), []).append(run)
    pairs = []
    for group in groups.values():
        ordered = sorted(group, key=lambda r: protocol_order(r.results.source.protocol))
        protocols = [r.results.source.protocol for r in ordered]
        if len(set(protocols)) == len(protocols) > 1:
            pairs += [(ordered[0], other) for other in ordered[1:]]
    return pairs


def comparisons_markdown(comparisons: Sequence[Comparison]) -> str:
    """The comparisons as one Markdown document (each table in a code block)."""
    parts = ["# Paired comparisons", ""]
    for c in comparisons:
        parts += [f"## {c.b} vs {c.a}", "", "```", *compare_lines(c), "```", ""]
    return "\n".join(parts)
