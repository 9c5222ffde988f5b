"""A condition sweep's table and plots: each metric against the condition's strength.

Rows are the variant's official aggregates over every event of a kind (language and domain
``all``, no round), in the clean run's order.  Per grid point and metric: the mean with its
95 % interval (the results' own: Wilson for a proportion, bootstrap or Student-t otherwise)
and the **preserve rate**, the metric under the condition over the metric clean, as
VocalBench reports it (a plain ratio of means; none where the clean mean is 0 or missing)::

    metric         clean          noise-snr=30    ...   noise-snr=0
    TURN_SHIFT tor 0.90 [.80,.95]  0.85 [...] 0.94  ...  0.40 [...] 0.44
                                              ^ preserve rate = 0.85 / 0.90

**Monotone (within CI)**: from clean through the points in the order given (mild to strong),
every step either degrades the metric (lower where ``↑`` is better, higher where ``↓`` is) or
stays within the intervals (the two 95 % intervals overlap); ``-`` for a metric without a
better direction or with a missing point.

Each plot is one metric: the mean against the swept value with the interval as error bars, the
clean run as a dashed line with its interval shaded.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure

from duplexeval._fileio import atomic_write_bytes, atomic_write_text
from duplexeval.results._model import AggregateRow, Results

__all__ = ["SweepCell", "SweepMetric", "sweep_csv", "sweep_markdown", "sweep_metrics",
           "sweep_plot", "write_sweep_plots", "write_sweep_table"]


@dataclass(frozen=True)
class SweepCell:
    """One metric at one grid point (or clean): the aggregate and the preserve rate."""

    n: int
    mean: float | None
    low: float | None
    high: float | None
    preserve: float | None


@dataclass(frozen=True)
class SweepMetric:
    """One metric across the sweep: ``cells[0]`` clean, then the points in order."""

    event_type: str
    metric: str
    cells: tuple[SweepCell | None, ...]
    """``None`` where the run has no such aggregate."""

    @property
    def better(self) -> str | None:
        """``higher`` (``↑`` in the metric's name), ``lower`` (``↓``) or ``None``."""
        return "higher" if "↑" in self.metric else "lower" if "↓" in self.metric else None

    @property
    def monotone(self) -> bool | None:
        """Degrades monotonically within the intervals (module docstring); ``None``: no
        direction, or a point without a value or an interval."""
        if self.better is None or any(c is None or c.mean is None or c.low is None
                                      or c.high is None for c in self.cells):
            return None
        sign = -1.0 if self.better == "higher" else 1.0
        for a, b in zip(self.cells, self.cells[1:], strict=False):
            assert a is not None and b is not None and a.mean is not None and b.mean is not None
            assert a.low is not None and a.high is not None
            assert b.low is not None and b.high is not None
            degrades = sign * (b.mean - a.mean) >= 0
            overlap = b.low <= a.high and a.low <= b.high
            if not (degrades or overlap):
                return False
        return True


def _rows(results: Results) -> dict[tuple[str, str], AggregateRow]:
    return {(r.event_type, r.metric): r for r in results.aggregates
            if r.official and r.language == "all" and r.domain == "all" and r.round is None
            and r.label is None}


def sweep_metrics(clean: Results, points: Sequence[Results]) -> list[SweepMetric]:
    """The sweep's metrics (module docstring): clean's official aggregates, in its order,
    then any only a point has."""
    tables = [_rows(clean), *(_rows(p) for p in points)]
    keys = list(dict.fromkeys(k for table in tables for k in table))
    out = []
    for event_type, metric in keys:
        base = tables[0].get((event_type, metric))
        cells: list[SweepCell | None] = []
        for table in tables:
            row = table.get((event_type, metric))
            if row is None:
                cells.append(None)
                continue
            ratio = None
            if base is not None and base.mean and row.mean is not None:
                ratio = row.mean / base.mean
            cells.append(SweepCell(row.n, row.mean, row.ci95_low, row.ci95_high, ratio))
        out.append(SweepMetric(event_type, metric, tuple(cells)))
    return out


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _cell_text(c: SweepCell | None, clean: bool) -> str:
    if c is None:
        return "-"
    text = f"{_fmt(c.mean)} [{_fmt(c.low)}, {_fmt(c.high)}] n={c.n}"
    return text if clean else f"{text}; pr {_fmt(c.preserve, 2)}"


def sweep_markdown(metrics: Sequence[SweepMetric], names: Sequence[str],
                   heading: Sequence[str]) -> str:
    """The table in Markdown: ``heading`` lines (what made it, on what data), then one row per
    metric: clean and each point (mean [95 % CI] n; pr = preserve rate), and whether it
    degrades monotonically within the intervals."""
    header = ["event", "metric", "clean", *names, "monotone (within CI)"]
    lines = [*heading, "", "| " + " | ".join(header) + " |",
             "|" + "|".join(" --- " for _ in header) + "|"]
    for m in metrics:
        mono = {True: "yes", False: "no", None: "-"}[m.monotone]
        cells = [_cell_text(c, i == 0) for i, c in enumerate(m.cells)]
        lines.append("| " + " | ".join([m.event_type, m.metric, *cells, mono]) + " |")
    lines += ["", "pr: preserve rate, the mean under the condition over the mean clean "
              "(VocalBench's); intervals are 95 %."]
    return "\n".join(lines) + "\n"


def sweep_csv(metrics: Sequence[SweepMetric], names: Sequence[str],
              values: Sequence[float | None], provenance: dict[str, str]) -> str:
    """The table as CSV, one row per (metric, point): its ``provenance`` columns (definition,
    data), the point and value ('' for clean), n, mean, the interval, the preserve rate."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*provenance, "event_type", "metric", "point", "value", "n", "mean",
                     "ci95_low", "ci95_high", "preserve_rate", "monotone_within_ci"])
    for m in metrics:
        for name, value, c in zip(["clean", *names], [None, *values], m.cells, strict=True):
            writer.writerow([*provenance.values(), m.event_type, m.metric, name,
                             "" if value is None else f"{value:g}",
                             "" if c is None else c.n,
                             *("" if c is None or x is None else repr(x)
                               for x in ((c.mean, c.low, c.high, c.preserve) if c else
                                         (None, None, None, None))),
                             {True: "yes", False: "no", None: ""}[m.monotone]])
    return buffer.getvalue()


def sweep_plot(m: SweepMetric, parameter: str, values: Sequence[float]) -> Figure:
    """One metric against the swept value (module docstring)."""
    fig = Figure(figsize=(5.0, 3.4))
    ax = fig.subplots()
    clean = m.cells[0]
    if clean is not None and clean.mean is not None:
        ax.axhline(clean.mean, linestyle="--", color="#555555", label="clean")
        if clean.low is not None and clean.high is not None:
            ax.axhspan(clean.low, clean.high, color="#bbbbbb", alpha=0.4, label="clean 95 % CI")
    xs, ys, lo, hi = [], [], [], []
    for value, c in zip(values, m.cells[1:], strict=True):
        if c is None or c.mean is None:
            continue
        xs.append(value)
        ys.append(c.mean)
        # an interval need not hold its mean (a percentile bootstrap of few events)
        lo.append(max(0.0, c.mean - (c.low if c.low is not None else c.mean)))
        hi.append(max(0.0, (c.high if c.high is not None else c.mean) - c.mean))
    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color="#1f77b4",
                label=f"{m.event_type} {m.metric}")
    if len(values) > 1 and values[0] > values[-1]:
        ax.invert_xaxis()  # strength grows to the right (values run mild to strong)
    ax.set_xlabel(parameter)
    ax.set_ylabel(m.metric)
    ax.set_title(f"{m.event_type} {m.metric} vs {parameter}")
    ax.legend(fontsize=7)
    return fig


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "metric"


def write_sweep_plots(metrics: Sequence[SweepMetric], parameter: str,
                      values: Sequence[float], folder: Path) -> list[Path]:
    """``folder/{EVENT}-{metric}.png`` per metric with at least one value (atomically)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for m in metrics:
        if all(c is None or c.mean is None for c in m.cells):
            continue
        buffer = io.BytesIO()
        sweep_plot(m, parameter, values).savefig(buffer, format="png", dpi=100,
                                                  bbox_inches="tight")
        path = folder / f"{_slug(m.event_type)}-{_slug(m.metric)}.png"
        atomic_write_bytes(path, buffer.getvalue())
        written.append(path)
    return written


def write_sweep_table(folder: Path, stem: str, markdown: str, table_csv: str) -> list[Path]:
    """``stem.md`` and ``stem.csv`` in ``folder`` (atomically)."""
    paths = [folder / f"{stem}.md", folder / f"{stem}.csv"]
    atomic_write_text(paths[0], markdown)
    atomic_write_text(paths[1], table_csv)
    return paths
