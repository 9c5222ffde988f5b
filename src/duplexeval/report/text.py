"""Plain-text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..metrics.stats import Summary
from ..protocols import TASKS, Plan

if TYPE_CHECKING:
    from ..metrics.results import AggregateRow, Results

__all__ = ["format_table", "plan_summary_lines", "timing_table_lines"]

_TASK_SHORT = {
    "smooth_turn_taking": "SHIFT",
    "pause_handling": "PAUSE",
    "backchanneling": "BC",
    "barge_in": "BARGE_IN",
}


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


PLAN_HEADER = ["dataset", "protocol", "samples", *(_TASK_SHORT[t] for t in TASKS), "filtered",
               "invalid", "model s (per event)", "model s (shared prefix)", "saving"]


def plan_summary_lines(name: str, plan: Plan) -> list[str]:
    """A one-row table describing ``plan``."""
    return format_table(PLAN_HEADER, [plan_row(name, plan)])


# -- timing results --------------------------------------------------------------------------

TIMING_COLUMNS: tuple[tuple[str, str, str, float], ...] = (
    # header, event type, metric, scale
    ("SHIFT TOR% ↑", "TURN_SHIFT", "tor ↑", 100.0),
    ("SHIFT lat s ↓", "TURN_SHIFT", "latency ↓", 1.0),
    ("MAE human s ↓", "TURN_SHIFT", "latency_abs_err_to_human", 1.0),
    ("HOLD TOR% ↓", "TURN_HOLD", "tor ↓", 100.0),
    ("HOLD lat s ↑", "TURN_HOLD", "latency ↑", 1.0),
    ("BC stop s ↑", "BC", "stop_latency ↑", 1.0),
    ("BARGE stop s ↓", "BARGE_IN", "stop_latency ↓", 1.0),
)
"""The M3 timing table: (header, event type, metric, scale) per column."""


def timing_table_lines(rows: Sequence[tuple[str, Results]], language: str = "all",
                       domain: str = "all") -> list[str]:
    """The M3 timing table, one row per (label, results): mean ± 95 % CI half-width, † where
    fewer than 20 events, ``-`` where the run has no such event."""
    table = []
    for label, results in rows:
        cells: dict[tuple[str, str], AggregateRow] = {
            (r.event_type, r.metric): r for r in results.aggregates
            if r.language == language and r.domain == domain}
        line: list[object] = [label]
        for _, event_type, metric, scale in TIMING_COLUMNS:
            row = cells.get((event_type, metric))
            line.append("-" if row is None else _cell(row, scale))
        table.append(line)
    return format_table(["system", *(c[0] for c in TIMING_COLUMNS)], table)


def _cell(row: AggregateRow, scale: float) -> str:
    summary = Summary(row.n, row.mean, row.std, row.ci95_low, row.ci95_high)
    return summary.format(scale, digits=1 if scale == 100.0 else 2, sep="±")
