"""The content table for the terminal: judged relevance, consistency and QA (0-100) and the
offline values, one row per run.

Cells are mean ± 95 % CI half-width, ``†`` where fewer than 20 events, ``-`` where the run has
no such value (e.g. QA outside the task domain), ``n/c`` where it was not computed (the reason
and how to enable it are printed below the table); ``(K unscored)`` follows a judged cell when
K items have no score.  A system that read oracle data is marked as in the timing table: its
content is not its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from duplexeval.metrics._stats import Summary
from duplexeval.report._text import ORACLE_MARK, curve_line, format_table

if TYPE_CHECKING:
    from duplexeval.results._content import ContentAggregate
    from duplexeval.results._model import Results

__all__ = ["CONTENT_COLUMNS", "content_curve_lines", "content_table_lines"]


@dataclass(frozen=True)
class ContentColumn:
    """One column: its header (with the better direction) and the dimension it shows."""

    header: str
    dimension: str
    digits: int = 1


CONTENT_COLUMNS: tuple[ContentColumn, ...] = (
    ContentColumn("relevance ↑", "relevance"),
    ContentColumn("consistency ↑", "consistency"),
    ContentColumn("QA ↑", "qa"),
    ContentColumn("quality ↑", "quality"),
    ContentColumn("instruction ↑", "instruction"),
    ContentColumn("safe ↑", "safety"),
    ContentColumn("TSS ↑", "topic_shift"),
    ContentColumn("EDS ↑", "emergency"),
    ContentColumn("coherence ↑", "coherence"),
    ContentColumn("QA F1% ↑", "qa_f1"),
    ContentColumn("QA EM% ↑", "qa_em"),
    ContentColumn("words", "response_words"),
    ContentColumn("truncated %", "truncated"),
)
"""Judged dimensions: M3's 0/1/2 and MTR's 0/1 instruction following and safety on 0-100, MTR's
quality (half points) and FLEXI's TSS, EDS and coherence on their own 0-5 (as their papers print
them: :func:`~duplexeval.metrics.content._summary.judged_scale`); then the offline values.  A
column no row has a value or an ``n/c`` for is left out."""


def _cell(row: ContentAggregate, digits: int) -> str:
    text = Summary(row.n, row.mean, row.std, row.ci95_low, row.ci95_high,
                   method=row.ci_method).format(
        1.0, digits=digits, sep="±")
    return f"{text} ({row.unscored} unscored)" if row.unscored else text


def content_table_lines(rows: Sequence[tuple[str, Results]], language: str = "all",
                        domain: str = "all") -> list[str]:
    """The content table (empty when no run has content results)."""
    table: list[list[object]] = []
    notes: dict[str, None] = {}
    not_computed: dict[str, None] = {}
    for label, results in rows:
        content = results.content
        if content is None:
            continue
        if results.source.oracle:
            label = f"{label}{ORACLE_MARK}"
            notes[f"{ORACLE_MARK} {results.source.system or label} reads oracle data "
                  f"({', '.join(results.source.oracle)}): its content is not its own"] = None
        cells = {r.dimension: r for r in content.aggregates
                 if r.language == language and r.domain == domain and r.round is None}
        missing = {n.dimension: n.reason for n in content.not_computed}
        line: list[object] = [label]
        for col in CONTENT_COLUMNS:
            if col.dimension in cells:
                line.append(_cell(cells[col.dimension], col.digits))
            elif col.dimension in missing:
                line.append("n/c")
            else:
                line.append("-")
        table.append(line)
        for dimension, reason in missing.items():
            not_computed.setdefault(f"n/c {dimension}: {reason}", None)
    if not table:
        return []
    keep = [0] + [i + 1 for i in range(len(CONTENT_COLUMNS))
                  if any(row[i + 1] != "-" for row in table)]
    header = ["system", *(c.header for c in CONTENT_COLUMNS)]
    return format_table([header[i] for i in keep], [[row[i] for i in keep] for row in table]) \
        + list(notes) + _merge_notes(list(not_computed))


def _merge_notes(notes: list[str]) -> list[str]:
    """``n/c a: R`` and ``n/c b: R`` become ``n/c a, b: R``."""
    by_reason: dict[str, list[str]] = {}
    out: list[str] = []
    for note in notes:
        if note.startswith("n/c "):
            dimension, _, reason = note[4:].partition(": ")
            if reason not in by_reason:
                by_reason[reason] = []
                out.append(reason)
            by_reason[reason].append(dimension)
        else:
            out.append(note)
    return [f"not computed ({', '.join(by_reason[n])}): {n}" if n in by_reason else n
            for n in out]


def content_curve_lines(label: str, results: Results) -> list[str]:
    """One :func:`~.text.curve_line` per judged dimension with round-by-round rows (0-100)."""
    if results.content is None:
        return []
    curves: dict[str, list[ContentAggregate]] = {}
    for row in results.content.aggregates:
        if row.round is not None:
            curves.setdefault(row.dimension, []).append(row)
    return [curve_line(f"{label} {dimension} by round (0-100)", rows,
                       [r.round or 0 for r in rows])
            for dimension, rows in curves.items()]
