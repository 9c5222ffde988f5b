"""CSV for a :class:`~.tables.Table`: tidy, one line per cell, for spreadsheets and plots.

Columns: ``table`` (table5/table6), ``language``, ``model`` (the row label, with its marks),
``protocol`` (Table 6: the column's; Table 5: the row's), ``domain``, ``group``, ``metric``,
``better`` (higher/lower), ``mean`` and ``ci95_half_width`` at full precision in display
units (percent for TOR, seconds, 0-100), ``ci95_low`` and ``ci95_high`` for an interval that
is not symmetric (Wilson, bootstrap; empty for Student-t), ``n``, ``dagger``, ``unscored``,
``best``, ``delta`` (Table 6: ``+``/``-`` against Single), the cell's
provenance (``definition``: which definition made it; ``data``: the dataset and subset;
``synthetic``: from a bundled synthetic suite, not comparable with published numbers) and
``text`` (the cell as the Markdown shows it).  Empty cells are left out; booleans are
``true``/``false``; the notes are not repeated.
"""

from __future__ import annotations

import csv
import io

from duplexeval.report._render_md import cell
from duplexeval.report._tables import Table, cell_text

__all__ = ["CSV_FIELDS", "render_csv"]

CSV_FIELDS = ("table", "language", "model", "protocol", "domain", "group", "metric", "better",
              "mean", "ci95_half_width", "ci95_low", "ci95_high", "n", "dagger", "unscored",
              "best", "delta", "definition", "data", "synthetic", "text")


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _number(value: float | int | None) -> str:
    return "" if value is None else repr(value)


def render_csv(table: Table) -> str:
    """The CSV text (header line first, ``\\n`` line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for row in table.rows:
        for c, col in zip(row.cells, table.columns, strict=True):
            value = c.value
            if value is None or value.mean is None:
                continue
            writer.writerow([
                table.kind, row.language, row.label, col.protocol or row.protocol, col.domain,
                col.metric.group, col.metric.title, col.metric.better, _number(value.mean),
                _number(value.half_width), _number(value.low), _number(value.high),
                _number(value.n), _flag(value.dagger),
                value.unscored, _flag(c.best), c.delta, value.definition, value.data,
                _flag(value.synthetic), cell(cell_text(c, col.metric, table))])
    return out.getvalue()
