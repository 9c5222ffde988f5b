"""FLEXI (Ge et al. 2025): six full-duplex scenarios, the paper's conventions.

Cells: ``flexi-en`` under Multi (gen) (turn taking, pause handling, model interrupt, model
backchannel) and Multi (ref) (user interrupt and backchannel, over the teacher-forced reference
turn), scored by the ``flexi`` variant.  Table: the per-scenario table, one row per protocol,
the columns each protocol measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from duplexeval.benchmarks.base import Benchmark, Cell, CellResult
from duplexeval.fileio import atomic_write_text
from duplexeval.plan.samples import EvalProtocol
from duplexeval.report.text import FLEXI_COLUMNS, TimingColumn, timing_table_lines

__all__ = ["FLEXI", "FLEXI_COLUMNS_BY_PROTOCOL"]

FLEXI_COLUMNS_BY_PROTOCOL: dict[EvalProtocol, tuple[TimingColumn, ...]] = {
    EvalProtocol.MULTI_GEN: FLEXI_COLUMNS[:4] + FLEXI_COLUMNS[6:7] + FLEXI_COLUMNS[9:],
    EvalProtocol.MULTI_REF: FLEXI_COLUMNS[4:6] + FLEXI_COLUMNS[7:9],
}
"""The scenarios each protocol measures (the reference turn is needed for a user interrupt
or backchannel to fall inside the system's speech)."""


def _tables(label: str, cells: Sequence[CellResult], out: Path) -> list[Path]:
    lines = ["# FLEXI", ""]
    for cell in cells:
        lines += [f"## {cell.cell.protocol.value}", ""]
        if cell.results is None:
            lines += [f"not run: {cell.skipped}", ""]
            continue
        columns = FLEXI_COLUMNS_BY_PROTOCOL[cell.cell.protocol]
        lines += [*timing_table_lines([(label, cell.results)], columns=columns), ""]
    path = out / "flexi.md"
    atomic_write_text(path, "\n".join(lines))
    return [path]


FLEXI = Benchmark(
    name="flexi", version="1", title="FLEXI",
    seed="FLEXI: full-duplex interaction scenarios (its per-scenario table)",
    cells=tuple(Cell("flexi-en", p, "flexi", content_events=()) for p in FLEXI_COLUMNS_BY_PROTOCOL),
    write_tables=_tables,
    official_data="flexi",
    notes={"definitions": "the flexi variant, paper conventions (its compat mode: the code's)",
           "data": "bundled synthetic suite flexi-en: not comparable with published numbers"},
)
