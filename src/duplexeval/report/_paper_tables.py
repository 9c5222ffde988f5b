"""The paper-style tables of a set of scored runs, written as files or printed.

:func:`write_tables` is what ``duplexeval report`` does: Table 5 always, Table 6 when some
system was run under more than one protocol; each in every asked format (``md``, ``csv``,
``tex``) as ``OUT_DIR/table5.md`` etc., written atomically.  :func:`table5_lines` is the
Table 5 Markdown for the terminal (the demo prints it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from duplexeval._fileio import atomic_write_text
from duplexeval.errors import DuplexevalError
from duplexeval.report._render_csv import render_csv
from duplexeval.report._render_md import markdown_table, render_markdown
from duplexeval.report._render_tex import render_latex
from duplexeval.report._table_data import label_runs, merge_rows, row_sources
from duplexeval.report._tables import RowSource, Table, has_protocol_comparison, table5, table6
from duplexeval.results._model import Results

__all__ = ["FORMATS", "parse_formats", "sources_of", "table5_lines", "write_tables"]

FORMATS: dict[str, Callable[[Table], str]] = {
    "md": render_markdown, "csv": render_csv, "tex": render_latex}
"""File extension -> renderer."""


def parse_formats(text: str) -> list[str]:
    """``"md,csv"`` -> ``["md", "csv"]``; an unknown format is a one-line error."""
    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise DuplexevalError(f"--format {text!r}: choose from {', '.join(FORMATS)} "
                              "(comma-separated)")
    return list(dict.fromkeys(formats))


def sources_of(runs: Sequence[tuple[str, Results]] | Mapping[str, Results],
               paths: Sequence[str] | None = None) -> list[RowSource]:
    """The table rows of ``(name, results)`` runs: labelled (:func:`label_runs`), one per
    language, a system's runs on several domains merged into one row; a run without M3 values
    (another variant's timing, no content) gives none."""
    pairs = list(runs.items()) if isinstance(runs, Mapping) else list(runs)
    labels = label_runs(pairs)
    paths = list(paths) if paths is not None else [name for name, _ in pairs]
    return merge_rows([row for label, (_, results), path in zip(labels, pairs, paths,
                                                               strict=True)
                       for row in row_sources(label, results, path) if row.values])


def write_tables(sources: Sequence[RowSource], out: Path, formats: Sequence[str],
                 allow_mixed: bool = False) -> list[Path]:
    """Write Table 5 (and Table 6 when it applies) in each format; returns the files (none
    without rows: no run has M3 values)."""
    if not sources:
        return []
    tables = {"table5": table5(sources)}
    if has_protocol_comparison(sources):
        tables["table6"] = table6(sources, allow_mixed=allow_mixed)
    written = []
    for name, table in tables.items():
        for ext in formats:
            path = out / f"{name}.{ext}"
            atomic_write_text(path, FORMATS[ext](table))
            written.append(path)
    return written


def table5_lines(results_by_run: Sequence[tuple[str, Results]] | Mapping[str, Results],
                 ) -> list[str]:
    """The Table 5 layout of runs (name -> results) as Markdown lines with its notes; empty
    without runs."""
    sources = sources_of(results_by_run)
    if not sources:
        return []
    table = table5(sources)
    return markdown_table(table) + [f"  {note}" for note in table.notes]
