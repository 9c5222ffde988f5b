"""MTR-DuplexBench: 10-round dialogues with a ground-truth history, the user heard through the
window.

Cells: ``mtr-en`` under Multi (ref) (the reference history before each round, MTR's protocol)
and Multi (gen) without muting (the system's own history), scored by the ``mtr`` variant.
Tables: the aggregates per event type and the round curves.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from duplexeval.benchmarks.base import Benchmark, Cell, CellResult
from duplexeval.fileio import atomic_write_text
from duplexeval.plan.samples import EvalProtocol
from duplexeval.report.text import variant_curve_lines, variant_table_lines

__all__ = ["MTR"]


def _tables(label: str, cells: Sequence[CellResult], out: Path) -> list[Path]:
    lines = [f"# MTR-DuplexBench: {label}", ""]
    for cell in cells:
        lines += [f"## {cell.cell.protocol.value}" + ("" if cell.cell.mute else " (unmuted)"), ""]
        if cell.results is None:
            lines += [f"not run: {cell.skipped}", ""]
            continue
        lines += [*variant_table_lines(cell.results), ""]
        lines += [*variant_curve_lines(cell.results), ""]
    path = out / "mtr.md"
    atomic_write_text(path, "\n".join(lines))
    return [path]


MTR = Benchmark(
    name="mtr", version="1", title="MTR-DuplexBench",
    seed="MTR-DuplexBench: multi-round evaluation with ground-truth history",
    cells=(Cell("mtr-en", EvalProtocol.MULTI_REF, "mtr", mute=False, content_events=()),
           Cell("mtr-en", EvalProtocol.MULTI_GEN, "mtr", mute=False, content_events=())),
    write_tables=_tables,
    notes={"definitions": "the mtr variant (MTR's timing rules)",
           "data": "bundled synthetic suite mtr-en: not comparable with published numbers"},
)
