"""What a benchmark is: a versioned declaration of its cells and of the tables its seed prints.

A :class:`Cell` is one run: a suite (its quick subset, its first dialogues or all of it) under
one protocol with its plan options, scored by one timing variant.  A :class:`Benchmark` names
its cells and turns their results into its tables::

    benchmark m3 (v1)
      cells    m3-chat-en x {single, multi-gen, multi-ref}, m3-chat-ja x ..., m3-qa-en x ...
      variant  m3 (the official code's rules), content offline (+ judged with a judge)
      tables   Table 5 (timing and content per protocol), Table 6 (protocol comparison)

The stages stay where they are (suites in ``suites/``, variants in ``metrics/timing/``, tables
in ``report/``); a benchmark module is the one place that says how they make that benchmark.
A benchmark's ``version`` changes whenever its cells, variants or tables change, and bundles
record it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from duplexeval.events import EventKind
from duplexeval.plan._samples import EvalProtocol
from duplexeval.results._model import Results

__all__ = ["Benchmark", "Cell", "CellResult", "MeasureScoring", "SystemCell", "TableWriter"]


@dataclass(frozen=True)
class Cell:
    """One run of a benchmark: ``suite`` under ``protocol``, scored by ``variant``."""

    suite: str
    protocol: EvalProtocol
    variant: str
    mute: bool = True
    """M3's rule (the user muted in the window); MTR plays the user through it (``False``)."""
    content_events: tuple[str, ...] = ("TURN_SHIFT",)
    """Event types whose replies are transcribed for the content metrics (``()``: none)."""
    ignored_events: frozenset[EventKind] = frozenset()
    """Event kinds the cell does not plan (:attr:`PlanOptions.ignored_events
    <duplexeval.plan._samples.PlanOptions.ignored_events>`): those its tables do not read
    under its protocol, so that no sample is run and analysed for a number nobody prints
    (FLEXI's Multi (gen) cell plans turn shifts and holds, its Multi (ref) cell the user's
    interrupts and backchannels)."""

    @property
    def name(self) -> str:
        """``SUITE-PROTOCOL``, the cell's folder under ``cells/BENCHMARK/``."""
        return f"{self.suite}-{self.protocol.value}"


@dataclass(frozen=True)
class MeasureScoring:
    """One more scoring of a cell for a measure (``eval --measures``,
    :mod:`duplexeval.benchmarks._measures`): the variant, the run it scored and its results."""

    variant: str
    run_dir: Path
    results: Results
    tries: bool = False
    """Whether the run is the cell's run with repeated tries or twins (else the cell's own)."""


@dataclass(frozen=True)
class CellResult:
    """A cell after the evaluation: its results, or why it was not run."""

    cell: Cell
    run_dir: Path
    results: Results | None
    skipped: str | None = None
    """Why the cell was not run (``None``: it was), e.g. a capability the system lacks."""
    measures: tuple[MeasureScoring, ...] = ()
    """The cell's scorings for the measures asked (none by default)."""
    not_measured: Mapping[str, str] = field(default_factory=dict)
    """Measures asked that the cell cannot give, each with why (e.g. ``realism`` on a dataset
    whose reference channel is silent): skipped, the evaluation goes on."""


SystemCell = tuple[str, CellResult]
"""A cell of one system: ``(system label, cell result)``."""

TableWriter = Callable[[Sequence[SystemCell], Path], list[Path]]
"""``write(cells, out_dir) -> files``: a benchmark's tables from its cells, of one system (a
bundle) or of several (the demo's tables: one row per system and protocol)."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: its name, version, seed paper, cells and table writer."""

    name: str
    version: str
    title: str
    seed: str
    """The paper whose tables it reproduces."""
    cells: tuple[Cell, ...]
    write_tables: TableWriter
    notes: Mapping[str, str] = field(default_factory=dict)
    """What a reader of its tables must know (definitions, data), by topic."""
    official_data: str | None = None
    """The public release ``duplexeval data download NAME`` fetches for ``eval --data
    official`` (:data:`duplexeval.data.recipes._download.RELEASES`); ``None``: none (M3's data
    is rebuilt from its corpora with ``data import``)."""

    def cell(self, name: str) -> Cell:
        """The cell called ``name`` (KeyError if absent)."""
        for cell in self.cells:
            if cell.name == name:
                return cell
        raise KeyError(name)
