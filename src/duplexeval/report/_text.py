"""Plain-text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from duplexeval.events import TASK_SHORT, TASKS
from duplexeval.metrics._stats import Summary, quantiles
from duplexeval.plan._samples import Plan
from duplexeval.results._counterfactual import PairedEffect
from duplexeval.results._distributions import Distance, DistributionResults
from duplexeval.results._intervals import IntervalFields

if TYPE_CHECKING:
    from duplexeval.results._model import AggregateRow, Results

__all__ = [
    "ORACLE_MARK",
    "TIMING_COLUMNS",
    "TimingColumn",
    "curve_line",
    "format_table",
    "plan_summary_lines",
    "stability_lines",
    "timing_table_lines",
    "variant_curve_lines",
    "variant_table_lines",
]



def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """Left-aligned first column, right-aligned others, two spaces between columns."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                          strict=True)]
        return "  ".join(parts).rstrip()

    out = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    out += [fmt(r) for r in cells[1:]]
    return out


def plan_row(name: str, plan: Plan) -> list[object]:
    """One table row: dataset, protocol, samples per task, model seconds, saving."""
    per_event = plan.model_seconds_per_event()
    shared = plan.model_seconds_shared_prefix()
    saving = f"{per_event / shared:.2f}x" if shared > 0 else "-"
    return [name, plan.options.protocol.value, len(plan.samples),
            *(plan.stats.by_task.get(t, 0) for t in TASKS),
            plan.stats.skipped_filtered, plan.stats.skipped_invalid,
            f"{per_event:.1f}", f"{shared:.1f}", saving]


PLAN_HEADER = ["dataset", "protocol", "samples", *(TASK_SHORT[t] for t in TASKS), "filtered",
               "invalid", "model s (per event)", "model s (shared prefix)", "saving"]


def plan_summary_lines(name: str, plan: Plan) -> list[str]:
    """A one-row table describing ``plan``."""
    return format_table(PLAN_HEADER, [plan_row(name, plan)])


# -- timing results --------------------------------------------------------------------------

@dataclass(frozen=True)
class TimingColumn:
    """One column of the M3 timing table."""

    header: str
    """Names the metric and its better direction (``↑`` higher is better, ``↓`` lower)."""
    event_type: str
    metric: str
    scale: float = 1.0
    """100 for percentages."""
    show_n: bool = False
    """Append the number of events the mean is over (for metrics defined on a subset)."""
    n_from: str | None = None
    """Official metric present on every event of the type: with it and no row for ``metric``,
    the cell reads ``(n=0)`` (events exist, none qualified) instead of ``-`` (no events)."""
    level: bool = False
    """Append FLEXI's interaction level of the mean latency (``L1`` below 150 ms, ``L2`` below
    400 ms, else ``L3``)."""


TIMING_COLUMNS: tuple[TimingColumn, ...] = (
    TimingColumn("SHIFT TOR% ↑", "TURN_SHIFT", "tor ↑", 100.0),
    TimingColumn("SHIFT lat s ↓", "TURN_SHIFT", "latency ↓"),
    TimingColumn("MAE human s ↓", "TURN_SHIFT", "latency_abs_err_to_human"),
    TimingColumn("HOLD TOR% ↓", "TURN_HOLD", "tor ↓", 100.0),
    TimingColumn("HOLD lat s ↑ (official, 10 s if silent)", "TURN_HOLD", "latency ↑"),
    TimingColumn("HOLD lat s ↑ (responders)", "TURN_HOLD", "latency_responders ↑",
                 show_n=True, n_from="latency ↑"),
    TimingColumn("BC stop s ↑", "BC", "stop_latency ↑"),
    TimingColumn("BARGE stop s ↓", "BARGE_IN", "stop_latency ↓"),
)
"""The M3 timing table.  ``HOLD lat (official)`` is the official code's value, which gives a
system that never speaks the whole window (10 s, the best score); ``HOLD lat (responders)`` is
the paper's definition (section 4.2.1), over the events with a response, with its ``n``."""


FLEXI_COLUMNS: tuple[TimingColumn, ...] = (
    TimingColumn("turn TOR% ↑", "TURN_SHIFT", "TOR ↑", 100.0),
    TimingColumn("turn lat s ↓", "TURN_SHIFT", "latency ↓", show_n=True, level=True),
    TimingColumn("JIR% ↓", "TURN_SHIFT", "jump_in ↓", 100.0),
    TimingColumn("pause TOR% ↓", "TURN_HOLD", "TOR ↓", 100.0),
    TimingColumn("interrupt TTR% ↑", "BARGE_IN", "TTR ↑", 100.0),
    TimingColumn("interrupt lat s ↓", "BARGE_IN", "latency ↓", show_n=True, level=True),
    TimingColumn("emergency cut-in% ↑", "TURN_SHIFT", "interrupted ↑", 100.0),
    TimingColumn("user BC yield% ↓", "BC", "interrupted ↓", 100.0),
    TimingColumn("user BC resumed% ↑", "BC", "resumed ↑", 100.0),
    TimingColumn("model BC TOR% ↓", "TURN_SHIFT", "TOR ↓", 100.0),
    TimingColumn("BCR /s", "TURN_SHIFT", "BCR"),
    TimingColumn("JSD ↓", "TURN_SHIFT", "JSD ↓"),
)
"""The FLEXI table (``flexi`` variant), one column group per scenario: turn taking, pause
handling, user interrupt, model interrupt, user backchannel, model backchannel."""


ORACLE_MARK = "◆"
"""Appended to the label of a system that read oracle data (reference content)."""


def timing_table_lines(rows: Sequence[tuple[str, Results]], language: str = "all",
                       domain: str = "all",
                       columns: Sequence[TimingColumn] = TIMING_COLUMNS) -> list[str]:
    """The M3 timing table, one row per (label, results): mean ± 95 % CI half-width, † where
    fewer than 20 events, ``-`` where the run has no such event.  A system that read oracle
    data (``results.source.oracle``) is marked :data:`ORACLE_MARK`, explained below the
    table."""
    table = []
    notes: dict[str, None] = {}
    for label, results in rows:
        oracle = results.source.oracle
        if oracle:
            label = f"{label}{ORACLE_MARK}"
            notes[f"{ORACLE_MARK} {results.source.system or label} reads oracle data "
                  f"({', '.join(oracle)}): its timing is its own, its content is not"] = None
        cells: dict[tuple[str, str], AggregateRow] = {
            (r.event_type, r.metric): r for r in results.aggregates
            if r.language == language and r.domain == domain and r.round is None}
        line: list[object] = [label]
        for col in columns:
            row = cells.get((col.event_type, col.metric))
            if row is None:
                present = col.n_from is not None and (col.event_type, col.n_from) in cells
                line.append("(n=0)" if present else "-")
            else:
                text = _cell(row, col.scale)
                if col.level and row.mean is not None:
                    text += f" L{1 if row.mean < 0.150 else 2 if row.mean < 0.400 else 3}"
                line.append(f"{text}(n={row.n})" if col.show_n else text)
        table.append(line)
    return format_table(["system", *(c.header for c in columns)], table) + list(notes)


def _cell(row: IntervalFields, scale: float) -> str:
    summary = Summary(row.n, row.mean, row.std, row.ci95_low, row.ci95_high,
                      method=row.ci_method)
    return summary.format(scale, digits=1 if scale == 100.0 else 2, sep="±")


def variant_table_lines(results: Results, language: str = "all",
                        domain: str = "all") -> list[str]:
    """Any variant's aggregates as rows (event type, dimension, metric, n, mean ± 95 % CI,
    official or extra): the table for variants other than ``m3``."""
    rows = [[r.event_type, r.dimension, r.metric, r.n, _cell(r, 1.0),
             "" if r.official else "extra"]
            for r in results.aggregates
            if r.language == language and r.domain == domain and r.round is None]
    header = ["event", "dimension", f"metric ({results.variant.name})", "n", "mean", ""]
    return format_table(header, rows)


def _distance_cell(d: Distance) -> str:
    if d.value is None:
        return "-"
    if d.ci95_low is None or d.ci95_high is None:
        return f"{d.value:.3f}"
    return f"{d.value:.3f} [{d.ci95_low:.3f}, {d.ci95_high:.3f}]"


def distribution_table_lines(found: DistributionResults) -> list[str]:
    """The ``realism`` comparison: per feature, both sides' counts and medians and the KS,
    Wasserstein and JS distances with their 95 % dialogue-bootstrap intervals."""
    def median(xs: Sequence[float]) -> str:
        q = quantiles(xs)
        return "-" if q is None else f"{q['p50']:.2f}"

    rows = [[f.feature, f.unit, f"{len(f.system)} / {len(f.reference)}",
             f"{median(f.system)} / {median(f.reference)}", _distance_cell(f.ks),
             _distance_cell(f.wasserstein), _distance_cell(f.js)] for f in found.features]
    header = ["feature", "unit", "n sys / ref", "median sys / ref", "KS", "Wasserstein", "JS"]
    return [f"distributions: system vs {found.reference} ({found.dialogues} dialogue(s), "
            f"{found.resamples} resamples)", *format_table(header, rows)]


def counterfactual_table_lines(effects: Sequence[PairedEffect]) -> list[str]:
    """The effect of the user's act per event kind and metric (each event against its twin
    without the act): the pairs, both means, the effect (with minus without) with its 95 %
    paired-bootstrap interval, and the sign-flip p-value."""
    rows = [[e.event_type, e.dimension, e.metric, e.n, f"{e.mean_with_act:.2f}",
             f"{e.mean_without_act:.2f}",
             f"{e.effect:+.2f} [{e.ci95_low:+.2f}, {e.ci95_high:+.2f}]", f"{e.p_value:.3f}"]
            for e in effects]
    header = ["event", "dimension", "metric", "pairs", "with act", "without", "effect", "p"]
    return ["counterfactual pairs: the effect of the user's act (with minus without)",
            *format_table(header, rows)]


def curve_line(title: str, rows: Sequence[IntervalFields], rounds: Sequence[int],
               scale: float = 1.0) -> str:
    """``title: 1: mean±ci (n), 2: ...; round 1 X vs rounds 1-K Y`` for per-round rows (the
    MTR comparison of the first round with the mean over every event of rounds 1..K)."""
    pairs = sorted(zip(rounds, rows, strict=True), key=lambda p: p[0])
    points = ", ".join(f"{k}: {_cell(r, scale)} (n={r.n})" for k, r in pairs)
    total = sum(r.n for _, r in pairs)
    mean = sum((r.mean or 0.0) * r.n for _, r in pairs) / total if total else None
    first = next((r.mean for k, r in pairs if k == 1), None)
    tail = ("" if first is None or mean is None else
            f"; round 1 {first * scale:.2f} vs rounds 1-{pairs[-1][0]} {mean * scale:.2f}")
    return f"{title}: {points}{tail}"


def variant_curve_lines(results: Results) -> list[str]:
    """One :func:`curve_line` per (event type, dimension, metric) with per-round rows."""
    groups: dict[tuple[str, str, str], list[AggregateRow]] = {}
    for r in results.aggregates:
        if r.round is not None and r.official:
            groups.setdefault((r.event_type, r.dimension, r.metric), []).append(r)
    return [curve_line(f"{event} {dimension} {metric} by round", rows,
                       [r.round or 0 for r in rows])
            for (event, dimension, metric), rows in sorted(groups.items())]


def markdown_from_lines(lines: Sequence[str]) -> list[str]:
    """A :func:`format_table` table (header, rule, rows, then note lines) as a Markdown table
    followed by its notes: cells are split on runs of two or more spaces; a line with one cell
    is a note; short rows are padded."""
    import re

    if len(lines) < 2:
        return list(lines)
    split = [re.split(r"\s{2,}", line.strip()) for line in lines]
    rows = [cells for i, cells in enumerate(split) if i != 1 and (i == 0 or len(cells) > 1)]
    notes = [line for i, line in enumerate(lines) if i > 1 and len(split[i]) <= 1]
    width = max(len(cells) for cells in rows)
    out = ["| " + " | ".join(cells + [""] * (width - len(cells))) + " |" for cells in rows]
    out.insert(1, "|" + " --- |" * width)
    return out + (["", *notes] if notes else [])


def variant_report_lines(runs: Sequence[tuple[str, Results]]) -> dict[str, list[str]]:
    """The tables of runs scored with a variant other than ``m3``, by file stem: ``flexi``
    (the FLEXI table, per-scenario columns), ``mtr`` (MTR's per-feature table, ablation and
    round curves where the dialogues are labelled, :mod:`.mtr_tables`) and one per other
    variant; after them every aggregate and the round curves of each run, as Markdown; and
    ``stability`` for the runs with repeated tries (:func:`stability_lines`, any variant)."""
    from duplexeval.report._columns import protocol_name
    from duplexeval.report._mtr_tables import mtr_markdown

    out: dict[str, list[str]] = {}
    flexi = [(label, r) for label, r in runs if r.variant.name == "flexi"]
    if flexi:
        out["flexi"] = markdown_from_lines(timing_table_lines(flexi, columns=FLEXI_COLUMNS))
    mtr = [(f"{label} ({protocol_name(r.source.protocol)})", r) for label, r in runs
           if r.variant.name == "mtr"]
    if any(r.label_aggregates for _, r in mtr):
        out["mtr"] = [*mtr_markdown(mtr).splitlines(), "## Every aggregate", ""]
    for label, results in runs:
        name = results.variant.name
        if name in ("m3", "flexi"):
            continue
        lines = out.setdefault(name, [])
        lines += [f"### {label}", "", *markdown_from_lines(variant_table_lines(results)), ""]
        lines += [f"- {line}" for line in variant_curve_lines(results)]
        lines.append("")
    for label, results in runs:  # runs with repeated tries: pass@k, pass^k, stability
        found = stability_lines(results)
        if found and results.stability is not None:
            table_end = 3 + len(results.stability.rows)  # title, header, rule, rows
            lines = out.setdefault("stability", ["# Repeated tries: pass@k and pass^k", ""])
            lines += [f"### {label}", "", found[0], "",
                      *markdown_from_lines([*found[1:table_end],
                                            *[f"- {n.strip()}" for n in found[table_end:]]]),
                      ""]
    return out


def stability_lines(results: Results) -> list[str]:
    """The repeated tries of a scoring (``run --repeats``): per event kind and dimension the
    pass rule, pass@1, pass@k and pass^j for every j (interval as stored), the flip share and
    the within-event latency spread with where each latency starts; empty without repeats."""
    st = results.stability
    if st is None:
        return []
    verdict = ("deterministic: every event's tries are identical (k identical tries)"
               if st.deterministic else
               f"{st.identical_events} of {st.events} event(s) with identical tries")
    lines = [f"stability over {st.tries} tries per event ({verdict}; {st.identity})"]
    rows = []
    for r in st.rows:
        hat = " ".join(f"{p.mean:.2f}" for p in r.pass_hat_k if p.mean is not None)
        at_k = r.pass_at_k[-1] if r.pass_at_k else None
        rows.append([r.event_type, r.dimension, r.events,
                     _cell(r.pass_hat_k[0], 1.0) if r.pass_hat_k else "-",
                     _cell(at_k, 1.0) if at_k is not None else "-",
                     _cell(r.pass_hat_k[-1], 1.0) if r.pass_hat_k else "-", hat or "-",
                     _cell(r.flip_share, 1.0) if r.flip_share is not None else "-",
                     "; ".join(f"{s.metric} {_cell(s, 1.0)} s" for s in r.latency_std) or "-"])
    lines += format_table(["event", "dimension", "events", "pass@1", "pass@k", "pass^k",
                           "pass^j j=1..k", "flips", "latency sd within event"], rows)
    for r in st.rows:
        if r.pass_rule is not None:
            lines.append(f"  pass ({r.event_type}, {results.variant.name}): {r.pass_rule}")
    origins = {s.metric: s.measurement_origin for r in st.rows for s in r.latency_std
               if s.measurement_origin is not None}
    for metric, origin in origins.items():
        lines.append(f"  {metric}: from {origin.start} to {origin.end}")
    return lines
