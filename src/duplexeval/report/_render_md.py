"""Markdown for a :class:`~.tables.Table`: one header row, a row per system.

Headers are one line, ``{domain} {group} {metric}{arrow}`` (``Chat SHIFT TOR↑``; Table 6 adds
the protocol: ``MT-QA Rel.↑ Gen.``).  Cells: ``mean±half-width``, then ``†``, then in
parentheses ``n=…`` and ``K unscored``; the best value in bold (``**69.6±5.6**``); Table 6's
``+``/``-`` follows the value as in the paper (``56.0–`` uses an en dash for ``-``); ``–``
where there is no value.  The language is named on its first row only.  Notes follow the table
as a list.
"""

from __future__ import annotations

from duplexeval.report._columns import domain_title, language_title, protocol_title
from duplexeval.report._provenance import SYNTHETIC_MARK
from duplexeval.report._tables import CellText, Table, TableColumn, cell_text

__all__ = ["DASH", "markdown_table", "render_markdown"]

DASH = "–"
"""An empty cell, and Table 6's degradation mark (as in the paper)."""


def header(column: TableColumn) -> str:
    """The one-line header of a column."""
    text = f"{domain_title(column.domain)} {column.metric.title}"
    return f"{text} {protocol_title(column.protocol)}" if column.protocol else text


def cell(parts: CellText) -> str:
    """A cell's Markdown (see the module docstring)."""
    if parts.empty:
        return DASH
    value = parts.value()
    if parts.best:
        value = f"**{value}**"
    if parts.dagger:
        value += "†"
    if parts.synthetic:
        value += SYNTHETIC_MARK
    value += {"+": "+", "-": DASH}.get(parts.delta, "")
    extra = ", ".join(x for x in (f"n={parts.n}" if parts.n else "", parts.unscored) if x)
    return f"{value} ({extra})" if extra else value


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(table: Table) -> list[str]:
    """The table's lines (header, alignment, rows), without the notes."""
    head = ["Lang", "Model", *(header(c) for c in table.columns)]
    lines = ["| " + " | ".join(_escape(h) for h in head) + " |",
             "| --- | --- |" + " ---: |" * len(table.columns)]
    previous = None
    for row in table.rows:
        language = language_title(row.language) if row.language != previous else ""
        previous = row.language
        cells = [cell(cell_text(c, col.metric, table))
                 for c, col in zip(row.cells, table.columns, strict=True)]
        lines.append("| " + " | ".join(_escape(x) for x in [language, row.label, *cells]) + " |")
    return lines


def render_markdown(table: Table, title: str = "") -> str:
    """The whole Markdown document: an optional title, the table and its notes."""
    lines = [f"## {title}", ""] if title else []
    lines += markdown_table(table)
    lines += [""] + [f"- {note}" for note in table.notes]
    return "\n".join(lines) + "\n"
