"""The tables of the measures beyond a benchmark's own (``duplexeval eval BENCH --measures``).

Each measure is one pair of files in the benchmark's table folder, Markdown and CSV, one row per
system, cell and what the measure splits by; every row carries its provenance (``definition``:
the variant and which definition it applied, :func:`~.provenance.timing_provenance`; ``data``:
the dataset and subset; ``synthetic``: a bundled suite's build, not comparable with published
numbers)::

    realism.md|csv          per feature: n and median of both sides, KS, Wasserstein and JS
                            with 95 % dialogue-bootstrap intervals (``realism`` scorings)
    turnbench.md|csv        the match rate, the turn-end latency p10 / p50 / p90 and the
                            false-positive rate (``turnbench`` scorings)
    barge-in-cost.md|csv    per act (backchannel, barge-in, background speech): the wrong
                            reactions (false or missed stops), the stop latency and the penalty
                            seconds per event with p50 / p90 (``turnbench`` scorings)
    stability.md|csv        per variant, event kind and dimension of the repeated run: tries,
                            pass@1, pass@k, pass^k, the flip share, the within-event latency SD
    counterfactual.md|csv   per variant and metric of the run with twins: pairs, the means
                            with and without the act, the effect with its 95 % paired-bootstrap
                            interval and p

A number with an interval is one Markdown cell (``0.12 [0.05, 0.20]``) and three CSV columns
(``X``, ``X ci95_low``, ``X ci95_high``, full precision); an empty cell is ``-`` / empty.  A
measure asked for is always written: without rows (no cell has the events it reads, e.g. no
backchannel where the system was speaking) its Markdown says so and its CSV is the header.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from duplexeval._fileio import atomic_write_text
from duplexeval.metrics._stats import quantiles
from duplexeval.report._provenance import SYNTHETIC_NOTE, timing_provenance
from duplexeval.results._intervals import IntervalFields
from duplexeval.results._model import AggregateRow, Results

__all__ = ["FROM_TRIES", "MEASURE_TABLES", "Interval", "MeasureCell", "MeasureTable",
           "measure_tables", "write_measure_tables"]


@dataclass(frozen=True)
class MeasureCell:
    """One scoring of one cell: the system's label, the cell's name and the results."""

    system: str
    cell: str
    results: Results
    tries: bool = False
    """A scoring of the cell's run with repeated tries or twins (stability, counterfactual
    pairs) rather than of its benchmark run (realism, turnbench, barge-in cost)."""


@dataclass(frozen=True)
class Interval:
    """A number with its 95 % interval (either end ``None``: none)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    @classmethod
    def of(cls, row: IntervalFields | None) -> Interval:
        """An aggregate row's mean and interval (``None``: an empty cell)."""
        return cls(None) if row is None else cls(row.mean, row.ci95_low, row.ci95_high)


Value = str | int | float | Interval | None


@dataclass(frozen=True)
class MeasureTable:
    """A measure's table: its file stem, title, columns, rows and notes."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: list[list[Value]]
    notes: tuple[str, ...] = ()

    @property
    def intervals(self) -> list[bool]:
        """Per column, whether it holds numbers with intervals (three CSV columns)."""
        return [name in INTERVAL_COLUMNS for name in self.columns]


INTERVAL_COLUMNS = frozenset({
    "KS", "Wasserstein", "JS", "match rate", "false-positive rate", "wrong-reaction rate",
    "stop latency (s)", "penalty s per event", "pass@1", "pass@k", "pass^k", "flip share",
    "effect"})
"""The columns whose cells are :class:`Interval` s."""


PROVENANCE = ("definition", "data", "synthetic")


def _lead(cell: MeasureCell) -> list[Value]:
    return [cell.system, cell.cell]


def _tail(cell: MeasureCell) -> list[Value]:
    found = timing_provenance(cell.results)
    return [found.definition, found.data, "true" if found.synthetic else "false"]


def _median(xs: Sequence[float]) -> float | None:
    q = quantiles(xs)
    return None if q is None else q["p50"]


def realism_table(cells: Sequence[MeasureCell]) -> MeasureTable:
    """Distributional realism (module docstring)."""
    rows: list[list[Value]] = []
    for c in cells:
        found = c.results.distributions
        for f in found.features if found is not None else []:
            rows.append([*_lead(c), f.feature, f.unit, len(f.system), len(f.reference),
                         _median(f.system), _median(f.reference),
                         *(Interval(d.value, d.ci95_low, d.ci95_high)
                           for d in (f.ks, f.wasserstein, f.js)), *_tail(c)])
    return MeasureTable(
        "realism", "Distributional realism: the system's timing against the human channel",
        ("system", "cell", "feature", "unit", "n system", "n reference", "median system",
         "median reference", "KS", "Wasserstein", "JS", *PROVENANCE), rows,
        ("reference: the dataset's reference (human) channel over each sample's window, "
         "analysed as the system channel; 0 is the human against itself",
         "intervals: 95 % percentile bootstrap over dialogues"))


def _rows(results: Results, dimension: str) -> dict[str, AggregateRow]:
    return {r.metric: r for r in results.aggregates if r.dimension == dimension
            and r.round is None and r.language == "all" and r.domain == "all"}


def _quantile(row: AggregateRow | None, name: str) -> float | None:
    return None if row is None or row.quantiles is None else row.quantiles.get(name)


def turnbench_table(cells: Sequence[MeasureCell]) -> MeasureTable:
    """TurnBench-style matching (module docstring)."""
    rows: list[list[Value]] = []
    for c in cells:
        turn, pause = _rows(c.results, "turn_end"), _rows(c.results, "pause")
        if not turn and not pause:
            continue
        match, latency = turn.get("match ↑"), turn.get("latency ↓")
        fp = pause.get("false_positive ↓")
        rows.append([*_lead(c), match.n if match else 0, Interval.of(match),
                     latency.n if latency else 0, _quantile(latency, "p10"),
                     _quantile(latency, "p50"), _quantile(latency, "p90"),
                     fp.n if fp else 0, Interval.of(fp), *_tail(c)])
    return MeasureTable(
        "turnbench", "TurnBench-style matching: turn ends and pauses",
        ("system", "cell", "turn ends", "match rate", "matched", "latency p10 (s)",
         "latency p50 (s)", "latency p90 (s)", "pauses", "false-positive rate", *PROVENANCE),
        rows, ("an onset matches a turn end t in [t - 0.25 s, min(t + 3 s, next user onset)]; "
               "a pause has at most one false positive",))


ACTS = (("user_backchanneling", "false_stop ↓", "stop_latency"),
        ("user_barge_in", "missed_stop ↓", "stop_latency ↓"),
        ("background", "false_stop ↓", "stop_latency"))
"""The acts the barge-in cost charges: dimension, its wrong-reaction verdict, its stop
latency (``turnbench``)."""


def bargein_cost_table(cells: Sequence[MeasureCell]) -> MeasureTable:
    """Barge-in cost in seconds (module docstring)."""
    rows: list[list[Value]] = []
    for c in cells:
        for dimension, verdict, latency in ACTS:
            found = _rows(c.results, dimension)
            penalty = found.get("penalty_s ↓")
            if penalty is None:
                continue
            wrong = found.get(verdict)
            rows.append([*_lead(c), dimension, penalty.n, verdict, Interval.of(wrong),
                         Interval.of(found.get(latency)), Interval.of(penalty),
                         _quantile(penalty, "p50"), _quantile(penalty, "p90"), *_tail(c)])
    return MeasureTable(
        "barge-in-cost", "Barge-in cost: penalty seconds per event",
        ("system", "cell", "act", "events", "wrong reaction", "wrong-reaction rate",
         "stop latency (s)", "penalty s per event", "penalty p50 (s)", "penalty p90 (s)",
         *PROVENANCE), rows,
        ("false stop (a backchannel or background speech): the rest of the interrupted turn "
         "it gave up; missed stop (a barge-in): the time until it yielded, beyond 0.5 s; 0 for "
         "a right reaction (SID-Bench's APT)",
         "events: those where the system was speaking at the onset"))


def stability_table(cells: Sequence[MeasureCell]) -> MeasureTable:
    """pass@k, pass^k and stability (module docstring)."""
    rows: list[list[Value]] = []
    for c in cells:
        st = c.results.stability
        for r in st.rows if st is not None else []:
            spread = "; ".join(f"{s.metric} {s.mean:.3f}" for s in r.latency_std
                               if s.mean is not None)
            rows.append([*_lead(c), c.results.variant.name, r.event_type, r.dimension,
                         r.events, r.tries, r.pass_rule or "-",
                         Interval.of(r.pass_hat_k[0] if r.pass_hat_k else None),
                         Interval.of(r.pass_at_k[-1] if r.pass_at_k else None),
                         Interval.of(r.pass_hat_k[-1] if r.pass_hat_k else None),
                         Interval.of(r.flip_share), spread or None,
                         "true" if st is not None and st.deterministic else "false",
                         *_tail(c)])
    return MeasureTable(
        "stability", "Repeated tries: pass@k, pass^k and stability",
        ("system", "cell", "variant", "event", "dimension", "events", "tries", "pass rule",
         "pass@1", "pass@k", "pass^k", "flip share", "latency SD within event (s)",
         "deterministic", *PROVENANCE), rows,
        ("k tries per event: forks of one snapshot with k seeds; pass@k: some try passes, "
         "pass^k: every try passes (unbiased estimates, EVA's)",
         "deterministic: every event's k tries wrote the identical system channel"))


_TWINS = {"silence": ("the effect of the user's act",
                       "the user's act removed (muted from its onset)"),
          "noise": ("the effect of the user's act's content",
                    "the user's act replaced by signal-correlated noise from its onset (its "
                    "envelope and onset without its speech)")}
"""What the counterfactual table says of its twins, per replacement: title and note."""


def counterfactual_table(cells: Sequence[MeasureCell],
                         replacement: str = "silence") -> MeasureTable:
    """Counterfactual pairs (module docstring); ``replacement``: what replaced the act in the
    twins (``silence``, ``noise``)."""
    title, twin = _TWINS[replacement]
    rows: list[list[Value]] = []
    for c in cells:
        for e in c.results.counterfactual:
            rows.append([*_lead(c), c.results.variant.name, e.event_type, e.dimension,
                         e.metric, e.n, e.mean_with_act, e.mean_without_act,
                         Interval(e.effect, e.ci95_low, e.ci95_high), e.p_value, *_tail(c)])
    return MeasureTable(
        "counterfactual", f"Counterfactual pairs: {title}",
        ("system", "cell", "variant", "event", "dimension", "metric", "pairs", "with act",
         "without act", "effect", "p", *PROVENANCE), rows,
        (f"each event against its twin with {twin}; effect = with minus without, 95 % "
         "paired-bootstrap interval, sign-flip p",))


MEASURE_TABLES: dict[str, Callable[[Sequence[MeasureCell]], MeasureTable]] = {
    "realism": realism_table, "turnbench": turnbench_table,
    "barge-in-cost": bargein_cost_table, "stability": stability_table,
    "counterfactual": counterfactual_table}
"""Measure name -> its table."""

FROM_TRIES = frozenset({"stability", "counterfactual"})
"""The measures read from the scorings of the run with repeated tries or twins."""


def _text(value: Value) -> str:
    if value is None:
        return "-"
    if isinstance(value, Interval):
        if value.value is None:
            return "-"
        if value.low is None or value.high is None:
            return f"{value.value:.3f}"
        return f"{value.value:.3f} [{value.low:.3f}, {value.high:.3f}]"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value).replace("|", "/")


def render_markdown(table: MeasureTable) -> str:
    """The table as Markdown: title, the pipe table, its notes and the synthetic note."""
    lines = [f"# {table.title}", "", "| " + " | ".join(table.columns) + " |",
             "|" + " --- |" * len(table.columns)]
    lines += ["| " + " | ".join(_text(v) for v in row) + " |" for row in table.rows]
    notes = list(table.notes)
    if not table.rows:
        notes.insert(0, "no rows: none of the cells has the events this measure reads")
    if any(row[-1] == "true" for row in table.rows):
        notes.append(SYNTHETIC_NOTE)
    return "\n".join(lines + [""] + [f"- {n}" for n in notes]) + "\n"


def _number(value: float | int | None) -> str:
    return "" if value is None else repr(value)


def render_csv(table: MeasureTable) -> str:
    """The table as CSV (an interval in three columns, numbers at full precision)."""
    kinds = table.intervals
    header: list[str] = []
    for name, interval in zip(table.columns, kinds, strict=True):
        header += [name, f"{name} ci95_low", f"{name} ci95_high"] if interval else [name]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in table.rows:
        line: list[str] = []
        for value, interval in zip(row, kinds, strict=True):
            if interval:
                got = value if isinstance(value, Interval) else Interval(None)
                line += [_number(got.value), _number(got.low), _number(got.high)]
            elif isinstance(value, int | float) and not isinstance(value, bool):
                line.append(repr(value))
            else:
                line.append("" if value is None else str(value))
        writer.writerow(line)
    return out.getvalue()


def measure_tables(measures: Sequence[str], cells: Sequence[MeasureCell],
                   replacement: str = "silence") -> list[MeasureTable]:
    """The tables of ``measures`` (names in :data:`MEASURE_TABLES`), in that order
    (``replacement``: what replaced the act in the counterfactual twins)."""
    out = []
    for name in measures:
        chosen = [c for c in cells if c.tries == (name in FROM_TRIES)]
        out.append(counterfactual_table(chosen, replacement) if name == "counterfactual"
                   else MEASURE_TABLES[name](chosen))
    return out


def write_measure_tables(measures: Sequence[str], cells: Sequence[MeasureCell],
                         out: Path, replacement: str = "silence") -> list[Path]:
    """``NAME.md`` and ``NAME.csv`` of each measure into ``out``; returns them."""
    written = []
    for table in measure_tables(measures, cells, replacement):
        for ext, render in (("md", render_markdown), ("csv", render_csv)):
            path = out / f"{table.name}.{ext}"
            atomic_write_text(path, render(table))
            written.append(path)
    return written
