"""FLEXI (Ge et al. 2025): six full-duplex scenarios, the paper's conventions.

Cells: ``flexi-en`` under Multi (gen) (turn taking, pause handling, model interrupt, model
backchannel) and Multi (ref) (user interrupt and backchannel, over the teacher-forced reference
turn), and under ``interactive`` (ours, not the paper's: the simulated user of
:mod:`duplexeval.runs._interactive` plays each item's user turns in reaction to the system, and
interrupts and backchannels the system's own speech; all six scenarios, each item's record moved
onto the realised timeline, :mod:`duplexeval.runs._realised_items`; skipped, with the reason,
for a system that cannot react frame by frame), scored by the ``flexi`` variant.  Table: the
per-scenario table, one section per protocol with the columns it measures, one row per system
(Markdown; each protocol's also as CSV and LaTeX).  Each static cell plans only the events its
columns read (Multi (gen): turn shifts and holds; Multi (ref): user interrupts and
backchannels): half the samples of planning every event under both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from duplexeval._fileio import atomic_write_text
from duplexeval.benchmarks._base import Benchmark, Cell, SystemCell
from duplexeval.events import EventKind
from duplexeval.plan._samples import EvalProtocol
from duplexeval.report._mtr_tables import table_csv, table_tex, timing_grid
from duplexeval.report._text import FLEXI_COLUMNS, TimingColumn, timing_table_lines

__all__ = ["FLEXI", "FLEXI_COLUMNS_BY_PROTOCOL"]

FLEXI_COLUMNS_BY_PROTOCOL: dict[EvalProtocol, tuple[TimingColumn, ...]] = {
    EvalProtocol.MULTI_GEN: FLEXI_COLUMNS[:4] + FLEXI_COLUMNS[6:7] + FLEXI_COLUMNS[9:],
    EvalProtocol.MULTI_REF: FLEXI_COLUMNS[4:6] + FLEXI_COLUMNS[7:9],
    EvalProtocol.INTERACTIVE: FLEXI_COLUMNS,
}
"""The scenarios each protocol measures (the reference turn is needed for a user interrupt
or backchannel to fall inside the system's speech under a static protocol; the simulated
user of ``interactive`` interrupts and backchannels the system's own)."""


def _unread_events(protocol: EvalProtocol) -> frozenset[EventKind]:
    """The event kinds of FLEXI's table that no column of ``protocol`` reads: its cell does
    not plan them."""
    read = {column.event_type for column in FLEXI_COLUMNS_BY_PROTOCOL[protocol]}
    return frozenset(EventKind(c.event_type) for c in FLEXI_COLUMNS
                     if c.event_type not in read)


def _tables(cells: Sequence[SystemCell], out: Path) -> list[Path]:
    lines = ["# FLEXI", ""]
    for protocol, columns in FLEXI_COLUMNS_BY_PROTOCOL.items():
        mine = [(label, c) for label, c in cells if c.cell.protocol is protocol]
        if not mine:
            continue
        lines += [f"## {protocol.value}", ""]
        lines += [f"- {label}: not run: {c.skipped}" for label, c in mine if c.results is None]
        ran = [(label, c.results) for label, c in mine if c.results is not None]
        if ran:
            lines += ["", *timing_table_lines(ran, columns=columns)]
        lines.append("")
    path = out / "flexi.md"
    atomic_write_text(path, "\n".join(lines))
    written = [path]
    for protocol, columns in FLEXI_COLUMNS_BY_PROTOCOL.items():
        ran = [(label, c.results) for label, c in cells
               if c.cell.protocol is protocol and c.results is not None]
        if not ran:
            continue
        grid = timing_grid(f"flexi-{protocol.value}", f"FLEXI ({protocol.value})", ran,
                           [(c.header, c.event_type, c.metric, c.scale) for c in columns])
        for ext, render in (("csv", table_csv), ("tex", table_tex)):
            path = out / f"{grid.name}.{ext}"
            atomic_write_text(path, render(grid))
            written.append(path)
    return written


FLEXI = Benchmark(
    name="flexi", version="4", title="FLEXI",
    seed="FLEXI: full-duplex interaction scenarios (its per-scenario table)",
    cells=tuple(Cell("flexi-en", p, "flexi", content_events=(), ignored_events=_unread_events(p))
                for p in FLEXI_COLUMNS_BY_PROTOCOL),
    write_tables=_tables,
    official_data="flexi",
    notes={"definitions": "the flexi variant, paper conventions (its compat mode: the code's)",
           "interactive": "not a protocol of the paper: the simulated user reacts to the "
                          "system; each item's record is moved onto the realised timeline "
                          "and scored by the same rules",
           "data": "bundled synthetic suite flexi-en: not comparable with published numbers"},
)
