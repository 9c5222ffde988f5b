"""MTR-DuplexBench's tables, from results files scored with the ``mtr`` variant.

They read the rows per dialogue label (``Results.label_aggregates``: the events of the dialogues
a suite labels with one feature or one combination), so that no cell pools dialogues that
exercise different features:

* :func:`feature_table` - MTR's main table: per feature (smooth turn-taking ``smooth``,
  interruption, pause handling, background speech), the success rate in round 1 and over rounds
  1-10 (MTR prints ``73.0→57.4%``), in percent, from the dialogues of that feature only; the
  latency (s) of smooth turn-taking and interruption; the backchannel frequency (the system's
  backchannels per second of its speech) of the backchannel dialogues.
* :func:`ablation_table` - MTR's ablation: the smooth-turn-taking success over rounds 1-10 in
  the dialogues that combine features ``S``, ``S+I``, ``S+I+P``, ``S+I+P+B``.
* :func:`round_table` - the round curves: each feature's success per round 1-10.

One row per run, named by its system and protocol.  Values are ``mean [low, high]`` on the
metric's scale (Wilson intervals for the rates), ``†`` under 20 events, ``–`` where the run has
no such event.  Each table renders as Markdown (:func:`table_markdown`) and as tidy CSV
(:func:`table_csv`, one line per cell, full precision).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from duplexeval.metrics._stats import Summary
from duplexeval.report._provenance import (
    SYNTHETIC_MARK,
    SYNTHETIC_NOTE,
    Provenance,
    timing_provenance,
)
from duplexeval.results._intervals import IntervalFields
from duplexeval.results._model import AggregateRow, Results

__all__ = [
    "COMBINATIONS",
    "FEATURES",
    "GridTable",
    "ablation_table",
    "feature_table",
    "mtr_markdown",
    "mtr_tables",
    "round_table",
    "table_csv",
    "table_html",
    "table_markdown",
    "table_tex",
    "timing_grid",
]

FEATURES: dict[str, tuple[str, str]] = {
    "smooth": ("smooth_turn_taking", "Smooth turn-taking"),
    "interruption": ("interruption", "Interruption"),
    "pause": ("pause_handling", "Pause handling"),
    "background": ("background", "Background speech"),
}
"""Feature label -> (the ``mtr`` variant's dimension, the column title)."""

BACKCHANNEL = ("backchannel", "backchannel", "frequency")
"""(label, dimension, metric) of the backchannel column."""

COMBINATIONS = ("S", "S+I", "S+I+P", "S+I+P+B")
"""The ablation's dialogue labels, in MTR's order."""

SUCCESS, LATENCY = "success ↑", "latency ↓"
ROUNDS = tuple(range(1, 11))


@dataclass(frozen=True)
class GridCell:
    """One cell: the aggregate (``None``: no such event in the run) and its scale."""

    column: str
    value: IntervalFields | None
    scale: float
    metric: str
    provenance: Provenance = field(default_factory=Provenance)

    def text(self) -> str:
        if self.value is None:
            return "–"
        summary = Summary(self.value.n, self.value.mean, self.value.std, self.value.ci95_low,
                          self.value.ci95_high, method=self.value.ci_method)
        digits = 1 if self.scale == 100.0 else 2
        mark = SYNTHETIC_MARK if self.provenance.synthetic else ""
        return f"{summary.format(self.scale, digits=digits, sep='±')}{mark} (n={self.value.n})"


@dataclass(frozen=True)
class GridTable:
    """A table: its name (file stem), title, column names, rows ``(label, cells)`` and notes."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[GridCell, ...]], ...]
    notes: tuple[str, ...]


def _find(results: Results, label: str, dimension: str, metric: str,
          round_: int | None) -> AggregateRow | None:
    for row in results.label_aggregates:
        if (row.label, row.dimension, row.metric, row.round) == (label, dimension, metric,
                                                                 round_):
            return row
    return None


NOTES = (
    "Values: mean with its 95 % interval on the metric's scale ([low, high]: Wilson for rates, "
    "percentile bootstrap for latencies of fewer than 20 events; ±: Student's t); "
    "† fewer than 20 events; (n=...) events; – no such event in the run.",
    "Each cell reads only the dialogues labelled with its feature or combination "
    "(the mtr variant's rules, MTR's released code).",
)


Rows = tuple[tuple[str, tuple[GridCell, ...]], ...]


def _notes(rows: Rows, labelled: bool = True) -> tuple[str, ...]:
    """The value notes (and, for the tables of labelled dialogues, that each cell reads only
    its label's dialogues), then each cell's definition and data (§ for a bundled suite)."""
    cells = [c for _, cells in rows for c in cells if c.value is not None]
    definitions = sorted({c.provenance.definition for c in cells if c.provenance.definition})
    synthetic = sorted({c.provenance.data for c in cells if c.provenance.synthetic})
    data = sorted({c.provenance.data for c in cells
                   if c.provenance.data and not c.provenance.synthetic})
    out = list(NOTES if labelled else NOTES[:1])
    if definitions:
        out.append(f"Definitions: {'; '.join(definitions)}.")
    if synthetic:
        out.append(f"{SYNTHETIC_NOTE} Data: {'; '.join(synthetic)}.")
    if data:
        out.append(f"Data: {'; '.join(data)}.")
    return tuple(out)


def feature_table(runs: Sequence[tuple[str, Results]]) -> GridTable:
    """MTR's main table (see the module docstring)."""
    columns: list[str] = []
    specs: list[tuple[str, str, str, int | None, float]] = []
    for label, (dimension, title) in FEATURES.items():
        columns += [f"{title} success % R1", f"{title} success % R1-10"]
        specs += [(label, dimension, SUCCESS, 1, 100.0), (label, dimension, SUCCESS, None, 100.0)]
        if label in ("smooth", "interruption"):
            columns.append(f"{title} latency s")
            specs.append((label, dimension, LATENCY, None, 1.0))
    columns.append("Backchannel frequency /s")
    specs.append((*BACKCHANNEL, None, 1.0))
    rows = tuple((name, tuple(GridCell(col, _find(results, lab, dim, met, rnd), scale, met,
                                       timing_provenance(results))
                              for col, (lab, dim, met, rnd, scale)
                              in zip(columns, specs, strict=True)))
                 for name, results in runs)
    return GridTable("mtr_features", "MTR-DuplexBench: conversational features "
                     "(round 1 and rounds 1-10)", tuple(columns), rows, _notes(rows))


def ablation_table(runs: Sequence[tuple[str, Results]]) -> GridTable:
    """MTR's ablation (see the module docstring)."""
    dimension = FEATURES["smooth"][0]
    columns = tuple(f"{c} smooth success % R1-10" for c in COMBINATIONS)
    rows = tuple((name, tuple(GridCell(col, _find(results, c, dimension, SUCCESS, None), 100.0,
                                       SUCCESS, timing_provenance(results))
                              for col, c in zip(columns, COMBINATIONS, strict=True)))
                 for name, results in runs)
    return GridTable("mtr_ablation", "MTR-DuplexBench: feature combinations (smooth "
                     "turn-taking success, rounds 1-10)", columns, rows,
                     (*_notes(rows), "S smooth turn-taking, I interruption, P pause, "
                      "B background speech: the features a dialogue combines."))


def round_table(runs: Sequence[tuple[str, Results]]) -> GridTable:
    """Each feature's success per round (see the module docstring): one row per run and
    feature."""
    columns = tuple(f"R{k} %" for k in ROUNDS)
    rows = []
    for name, results in runs:
        for label, (dimension, title) in FEATURES.items():
            cells = tuple(GridCell(col, _find(results, label, dimension, SUCCESS, k), 100.0,
                                   SUCCESS, timing_provenance(results))
                          for col, k in zip(columns, ROUNDS, strict=True))
            if any(c.value is not None for c in cells):
                rows.append((f"{name}: {title}", cells))
    return GridTable("mtr_rounds", "MTR-DuplexBench: success by round", columns, tuple(rows),
                     _notes(tuple(rows)))


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def table_markdown(table: GridTable) -> str:
    """``## title``, the table, then its notes as a list."""
    lines = [f"## {table.title}", "", "| run | " + " | ".join(table.columns) + " |",
             "| --- |" + " ---: |" * len(table.columns)]
    if not table.rows:
        lines = [*lines[:2], "no run has these events"]
    for name, cells in table.rows:
        lines.append(f"| {_md_cell(name)} | " + " | ".join(_md_cell(c.text()) for c in cells)
                     + " |")
    return "\n".join([*lines, "", *(f"- {note}" for note in table.notes)]) + "\n"


CSV_FIELDS = ("table", "run", "column", "metric", "mean", "ci95_low", "ci95_high", "ci_method",
              "n", "dagger", "definition", "data", "synthetic", "text")


def table_csv(table: GridTable) -> str:
    """One line per cell with a value (``mean`` and the interval in display units)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for name, cells in table.rows:
        for c in cells:
            v = c.value
            if v is None or v.mean is None:
                continue
            writer.writerow([table.name, name, c.column, c.metric, repr(v.mean * c.scale),
                             "" if v.ci95_low is None else repr(v.ci95_low * c.scale),
                             "" if v.ci95_high is None else repr(v.ci95_high * c.scale),
                             v.ci_method, v.n, "true" if v.few_events else "false",
                             c.provenance.definition, c.provenance.data,
                             "true" if c.provenance.synthetic else "false", c.text()])
    return out.getvalue()


def mtr_tables(runs: Sequence[tuple[str, Results]]) -> list[GridTable]:
    """The three tables of ``(row name, results)`` runs."""
    return [feature_table(runs), ablation_table(runs), round_table(runs)]


def mtr_markdown(runs: Sequence[tuple[str, Results]]) -> str:
    """The three tables as one Markdown text."""
    return "\n".join(table_markdown(t) for t in mtr_tables(runs))


_TEX = {"&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "†": r"$^{\dagger}$",
        "±": r"$\pm$", "§": r"\S{}", "↑": r"$\uparrow$", "↓": r"$\downarrow$", "–": "--",
        "Δ": r"$\Delta$"}


def _tex(text: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in text)


def table_tex(table: GridTable) -> str:
    """The table as a LaTeX ``tabular`` (booktabs rules) with its notes as a footnote block."""
    spec = "l" + "r" * len(table.columns)
    lines = [f"% {table.title}", f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(["Run", *(_tex(c) for c in table.columns)]) + " \\\\", "\\midrule"]
    lines += [" & ".join([_tex(name), *(_tex(c.text()) for c in cells)]) + " \\\\"
              for name, cells in table.rows]
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    lines += [f"% {note}" for note in table.notes]
    return "\n".join(lines) + "\n"


def timing_grid(name: str, title: str, runs: Sequence[tuple[str, Results]],
                columns: Sequence[tuple[str, str, str, float]]) -> GridTable:
    """A grid of overall aggregates: ``columns`` are (header, event type, metric, scale); one
    row per run (FLEXI's per-scenario table as CSV and LaTeX)."""
    def find(results: Results, event_type: str, metric: str) -> AggregateRow | None:
        for row in results.aggregates:
            if (row.language, row.domain, row.event_type, row.metric, row.round) == (
                    "all", "all", event_type, metric, None):
                return row
        return None

    rows = tuple((label, tuple(GridCell(header, find(results, event_type, metric), scale,
                                        metric, timing_provenance(results))
                               for header, event_type, metric, scale in columns))
                 for label, results in runs)
    return GridTable(name, title, tuple(c[0] for c in columns), rows,
                     _notes(rows, labelled=False))


def table_html(table: GridTable) -> str:
    """The table as HTML (``<h3>`` title, the table, its notes)."""
    from html import escape

    head = "".join(f"<th>{escape(c)}</th>" for c in ("run", *table.columns))
    rows = "".join(
        f"<tr><td>{escape(name)}</td>"
        + "".join(f'<td class="num">{escape(c.text())}</td>' for c in cells) + "</tr>"
        for name, cells in table.rows)
    notes = "".join(f"<li>{escape(n)}</li>" for n in table.notes)
    return (f"<h3>{escape(table.title)}</h3><table class=\"results\"><thead><tr>{head}</tr>"
            f"</thead><tbody>{rows}</tbody></table><ul class=\"notes\">{notes}</ul>")
