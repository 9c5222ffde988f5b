"""Full-Duplex-Bench v1/v1.5 over the FDB folders a user has: no bundled suite.

Cell: the imported dataset (``duplexeval data import fdb-v1 SOURCE -o DIR``, or ``--data
official``: ``duplexeval data download fdb-v1``) under Multi (gen) without muting (the model
hears each sample's ``input.wav`` from its start and to its end, as FDB plays it), scored by
the ``fdb-v1`` variant (FDB's released evaluators' rules).  ``eval fdb-v1 --data DIR``; without
``--data`` the cell is skipped with that reason.  Table: every aggregate per FDB task (smooth
turn-taking, pause handling, user interruption, the v1.5 stop and response latencies), one
section per system.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from duplexeval._fileio import atomic_write_text
from duplexeval.benchmarks._base import Benchmark, Cell, SystemCell
from duplexeval.plan._samples import EvalProtocol
from duplexeval.report._provenance import timing_provenance
from duplexeval.report._text import markdown_from_lines, variant_table_lines

__all__ = ["FDB_V1"]


def _tables(cells: Sequence[SystemCell], out: Path) -> list[Path]:
    lines = ["# Full-Duplex-Bench v1/v1.5", ""]
    for label, cell in cells:
        lines += [f"## {label} ({cell.cell.protocol.value}, unmuted)", ""]
        if cell.results is None:
            lines += [f"not run: {cell.skipped}", ""]
            continue
        where = timing_provenance(cell.results)
        lines += [*markdown_from_lines(variant_table_lines(cell.results)), "",
                  f"- Definitions: {where.definition}. Data: {where.data or 'unknown'}.", ""]
    path = out / "fdb-v1.md"
    atomic_write_text(path, "\n".join(lines))
    return [path]


FDB_V1 = Benchmark(
    name="fdb-v1", version="1", title="Full-Duplex-Bench v1/v1.5",
    seed="Full-Duplex-Bench (Lin et al. 2025): the v1/v1.5 tasks, its released evaluators",
    cells=(Cell("fdb-v1", EvalProtocol.MULTI_GEN, "fdb-v1", mute=False, content_events=()),),
    write_tables=_tables, official_data="fdb-v1",
    notes={"definitions": "the fdb-v1 variant (FDB's released evaluators; score --paper for "
                          "the paper's)",
           "data": "the user's FDB folders (data import fdb-v1) or its public release: "
                   "comparable with FDB's numbers only as far as the timing rules are"},
)
