"""The table model of M3-DuplexBench's Table 5 and Table 6: rows, columns, cells, best marking.

Input: one :class:`RowSource` per (system, language, protocol) with its values per (domain,
column) in display units (percent for TOR, seconds, 0-100 for judged content); the renderers
(:mod:`.render_md`, :mod:`.render_csv`, :mod:`.render_tex`) only format what this module
decided.

Table 5 (:func:`table5`): rows are systems grouped by language (En, Ja, then others), columns
the metric columns of each domain (:mod:`.columns`) that some row has a value for.  A cell is
``mean ± 95 % CI half-width``, ``†`` when fewer than 20 events (or as given), ``n`` and the
unscored count.  **Best**, as the paper's caption defines it: the best value within each
language, excluding estimates marked ``†``; the better direction is the column's; values are
compared as displayed (rounded to the column's digits), so equal displayed values are all
best.  A system that read oracle data is marked (``◆``) and kept out of the best marking in the
columns that data feeds (:func:`oracle_touches`: content columns for any oracle, timing columns
for the reference audio only), so the cascade, which answers from the reference text but
takes turns by itself, competes on timing.  When the runs span several protocols a row's
label names its protocol.

Table 6 (:func:`table6`): one system's runs under several protocols side by side (Single,
Gen., Ref.) for every column; a non-Single cell carries ``+`` (better than Single) or ``-``
(worse), compared as displayed, nothing when equal or without a Single value.  The runs in one
row and domain must come from one dataset, unless mixing is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from duplexeval.errors import DuplexevalError
from duplexeval.metrics._stats import FEW_EVENTS
from duplexeval.report._columns import (
    MetricColumn,
    domain_columns,
    domain_order,
    language_order,
    protocol_order,
    protocol_title,
)
from duplexeval.report._provenance import SYNTHETIC_NOTE
from duplexeval.report._text import ORACLE_MARK

__all__ = ["ORACLE_MARK", "Cell", "CellValue", "RowSource", "Table", "TableColumn",
           "TableRow", "table5", "table6"]

@dataclass(frozen=True)
class CellValue:
    """One estimate in display units."""

    mean: float | None
    half_width: float | None = None
    n: int | None = None
    """Events the mean is over (``None`` when unknown, e.g. a published table)."""
    few: bool | None = None
    """The ``†`` marker; ``None``: from ``n`` (fewer than 20)."""
    unscored: int = 0
    """Judged events without a score (content columns)."""
    low: float | None = None
    """The interval's ends in display units, for an interval that is not symmetric (Wilson,
    bootstrap: shown as ``[low, high]``); ``None``: ``± half_width``."""
    high: float | None = None
    definition: str = ""
    """Which definition made it (:mod:`~duplexeval.report._provenance`; '' when unknown)."""
    data: str = ""
    """The dataset and subset it was measured on ('' when unknown)."""
    synthetic: bool = False
    """From a bundled synthetic suite: marked §, not comparable with published numbers."""

    @property
    def dagger(self) -> bool:
        if self.few is not None:
            return self.few
        return self.n is not None and self.n < FEW_EVENTS


@dataclass(frozen=True)
class RowSource:
    """One run's (or one published row's) values for one language."""

    label: str
    language: str
    values: Mapping[tuple[str, str], CellValue]
    """(domain, column key) -> value."""
    protocol: str = ""
    oracle: tuple[str, ...] = ()
    datasets: Mapping[str, str] = field(default_factory=dict)
    """domain -> dataset identity (Table 6 refuses mixing them in one row)."""
    path: str = ""
    """Where the values came from, for messages."""


@dataclass(frozen=True)
class TableColumn:
    """A column: a metric of a domain (and, in Table 6, a protocol)."""

    domain: str
    metric: MetricColumn
    protocol: str = ""


@dataclass(frozen=True)
class Cell:
    value: CellValue | None
    best: bool = False
    delta: Literal["+", "-", ""] = ""
    """Table 6: better (``+``) or worse (``-``) than the same row's Single value."""


@dataclass(frozen=True)
class TableRow:
    language: str
    label: str
    oracle: tuple[str, ...]
    cells: tuple[Cell, ...]
    protocol: str = ""


@dataclass(frozen=True)
class Table:
    """A table as the renderers take it."""

    kind: Literal["table5", "table6"]
    columns: tuple[TableColumn, ...]
    rows: tuple[TableRow, ...]
    notes: tuple[str, ...]
    show_ci: bool = True
    show_n: bool = True


def _shown(value: CellValue | None) -> bool:
    return value is not None and value.mean is not None


def _columns(sources: Sequence[RowSource]) -> list[tuple[str, MetricColumn]]:
    """Every (domain, column) some row has a value for, in the paper's order."""
    domains = sorted({d for s in sources for d, _ in s.values}, key=domain_order)
    return [(d, c) for d in domains for c in domain_columns(d)
            if any(_shown(s.values.get((d, c.key))) for s in sources)]


def _rounded(value: CellValue, column: MetricColumn) -> float:
    assert value.mean is not None
    return round(value.mean, column.digits)


def _best(candidates: Sequence[CellValue | None], column: MetricColumn) -> set[int]:
    """Indices of the best displayed values, ``†`` estimates excluded."""
    eligible = {i: _rounded(v, column) for i, v in enumerate(candidates)
                if v is not None and v.mean is not None and not v.dagger}
    if not eligible:
        return set()
    pick = max if column.better == "higher" else min
    target = pick(eligible.values())
    return {i for i, x in eligible.items() if x == target}


def _sorted(sources: Sequence[RowSource]) -> list[RowSource]:
    """Grouped by language (stable within a language)."""
    return sorted(sources, key=lambda s: language_order(s.language))


def _label(source: RowSource, protocols: bool) -> str:
    label = f"{source.label} ({protocol_title(source.protocol)})" if protocols else source.label
    return f"{label}{ORACLE_MARK}" if source.oracle else label


def _notes(sources: Sequence[RowSource], kind: str) -> tuple[str, ...]:
    notes = ["Values: mean with its 95 % interval on the metric's scale: [low, high] from the "
             "Wilson score interval (rates) or the percentile bootstrap (bounded scores, and "
             f"latencies of fewer than {FEW_EVENTS} events), ± half-width from Student's t "
             f"(other latencies); † fewer than {FEW_EVENTS} events; (n=...) events; unscored: "
             "judged without a score; – no value."]
    if kind == "table5":
        notes.append("Bold: best value within each language, excluding estimates marked † "
                     f"and, in the columns their oracle data feeds, rows marked {ORACLE_MARK} "
                     "(a row reading reference content competes on timing).")
    else:
        notes.append("Gen.: Multi (gen); Ref.: Multi (ref); +/- improvement/degradation "
                     "relative to Single (as displayed).")
    if any(s.protocol == "interactive" for s in sources):
        notes.append("Inter.: interactive, the simulated user reacting to the system "
                     "(duplexeval's, not a paper's protocol); its events are those of the "
                     "realised dialogue, so its MAE to human timing compares the analysed "
                     "latency with the realised gap the user's detector heard.")
    synthetic = sorted({v.data for s in sources for v in s.values.values() if v.synthetic})
    if synthetic:
        notes.append(f"{SYNTHETIC_NOTE} Data: {'; '.join(synthetic)}.")
    definitions = sorted({v.definition for s in sources for v in s.values.values()
                          if v.definition})
    if definitions:
        notes.append(f"Definitions: {'; '.join(definitions)} (per cell in the CSV).")
    for s in sources:
        if s.oracle:
            notes.append(f"{ORACLE_MARK} {s.label} reads oracle data ({', '.join(s.oracle)}): "
                         "its timing is its own, its content is not.")
    return tuple(dict.fromkeys(notes))


TIMING_ORACLES = frozenset({"reference_audio"})
"""Oracle data that makes a row's timing not its own (the ``reference`` system replays the
reference channel); the others (``reference_transcript``, ``qa_references``) feed content only
(the cascade answers from them: its timing is its own)."""


def oracle_touches(oracle: Sequence[str], column: MetricColumn) -> bool:
    """Whether a row's oracle data makes its value in ``column`` not its own: any oracle for a
    content column, a timing oracle (:data:`TIMING_ORACLES`) for a timing column."""
    if column.content:
        return bool(oracle)
    return any(o in TIMING_ORACLES for o in oracle)


def table5(sources: Sequence[RowSource], show_ci: bool = True, show_n: bool = True) -> Table:
    """The M3 Table 5 layout of ``sources`` (see the module docstring)."""
    rows = _sorted(sources)
    columns = _columns(rows)
    protocols = len({s.protocol for s in rows}) > 1
    best: dict[tuple[int, int], bool] = {}
    for language in dict.fromkeys(s.language for s in rows):
        for j, (domain, column) in enumerate(columns):
            mine = [i for i, s in enumerate(rows)
                    if s.language == language and not oracle_touches(s.oracle, column)]
            values = [rows[i].values.get((domain, column.key)) for i in mine]
            for k in _best(values, column):
                best[(mine[k], j)] = True
    table_rows = tuple(
        TableRow(s.language, _label(s, protocols), s.oracle,
                 tuple(Cell(s.values.get((d, c.key)), best.get((i, j), False))
                       for j, (d, c) in enumerate(columns)), s.protocol)
        for i, s in enumerate(rows))
    return Table("table5", tuple(TableColumn(d, c) for d, c in columns), table_rows,
                 _notes(rows, "table5"), show_ci, show_n)


def has_protocol_comparison(sources: Sequence[RowSource]) -> bool:
    """True when some system appears under more than one protocol (Table 6 applies)."""
    seen: dict[tuple[str, str], set[str]] = {}
    for s in sources:
        seen.setdefault((s.language, s.label), set()).add(s.protocol)
    return any(len(p) > 1 for p in seen.values())


def _check_datasets(group: Sequence[RowSource]) -> None:
    first: dict[str, RowSource] = {}
    for s in group:
        for domain, identity in s.datasets.items():
            other = first.setdefault(domain, s)
            if other.datasets.get(domain, identity) != identity:
                raise DuplexevalError(
                    f"{s.path}: dataset differs from {other.path} ({s.label}, {domain}); one "
                    "Table 6 row compares protocols on one dataset (--allow-mixed to allow)")


def _delta(value: CellValue | None, single: CellValue | None,
           column: MetricColumn) -> Literal["+", "-", ""]:
    if not _shown(value) or not _shown(single) or value is None or single is None:
        return ""
    a, b = _rounded(value, column), _rounded(single, column)
    if a == b:
        return ""
    better = a > b if column.better == "higher" else a < b
    return "+" if better else "-"


def table6(sources: Sequence[RowSource], allow_mixed: bool = False, show_ci: bool = True,
           show_n: bool = True) -> Table:
    """The M3 Table 6 layout: each (language, system) one row, every column once per protocol
    (see the module docstring); :class:`DuplexevalError` when a row mixes datasets."""
    groups: dict[tuple[str, str], dict[str, RowSource]] = {}
    for s in _sorted(sources):
        group = groups.setdefault((s.language, s.label), {})
        if s.protocol in group:
            raise DuplexevalError(f"{s.path}: {s.label} under {protocol_title(s.protocol)} "
                                  f"twice (also {group[s.protocol].path})")
        group[s.protocol] = s
    if not allow_mixed:
        for group in groups.values():
            _check_datasets(list(group.values()))
    protocols = sorted({s.protocol for s in sources}, key=protocol_order)
    columns = [TableColumn(d, c, p) for d, c in _columns(sources) for p in protocols]
    rows = []
    for (language, label), group in groups.items():
        single = group.get("single")
        cells = []
        for col in columns:
            run = group.get(col.protocol)
            value = run.values.get((col.domain, col.metric.key)) if run else None
            base = single.values.get((col.domain, col.metric.key)) if single else None
            delta = _delta(value, base, col.metric) if col.protocol != "single" else ""
            cells.append(Cell(value, delta=delta))
        oracle = tuple(dict.fromkeys(o for s in group.values() for o in s.oracle))
        rows.append(TableRow(language, f"{label}{ORACLE_MARK}" if oracle else label, oracle,
                             tuple(cells)))
    return Table("table6", tuple(columns), tuple(rows),
                 _notes(list(sources), "table6"), show_ci, show_n)


@dataclass(frozen=True)
class CellText:
    """A cell's parts as text; each renderer joins and marks them up in its own way."""

    mean: str
    half_width: str
    """``± half_width`` of a symmetric interval ('' for none or an asymmetric one)."""
    dagger: bool
    n: str
    unscored: str
    best: bool
    delta: str
    empty: bool = False
    interval: str = ""
    """``[low, high]`` of an asymmetric interval ('' for none or a symmetric one)."""
    synthetic: bool = False
    """The value is from a bundled synthetic suite (marked §)."""

    def value(self, plus_minus: str = "±") -> str:
        """The mean with its interval: ``mean±half`` or ``mean [low, high]``."""
        if self.half_width:
            return f"{self.mean}{plus_minus}{self.half_width}"
        return f"{self.mean} {self.interval}" if self.interval else self.mean


def cell_text(cell: Cell, column: MetricColumn, table: Table) -> CellText:
    """The parts of ``cell`` to show (``empty`` when it has no value)."""
    value = cell.value
    if value is None or value.mean is None:
        return CellText("", "", False, "", "", False, "", empty=True)
    digits = column.digits
    half = interval = ""
    if table.show_ci and value.low is not None and value.high is not None:
        interval = f"[{value.low:.{digits}f}, {value.high:.{digits}f}]"
    elif table.show_ci and value.half_width is not None:
        half = f"{value.half_width:.{digits}f}"
    n = str(value.n) if table.show_n and value.n is not None else ""
    unscored = f"{value.unscored} unscored" if value.unscored else ""
    return CellText(f"{value.mean:.{digits}f}", half, value.dagger, n, unscored, cell.best,
                    cell.delta, interval=interval, synthetic=value.synthetic)
