"""Plain-text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from .protocols import TASKS, Plan

__all__ = ["format_table", "plan_summary_lines"]

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
