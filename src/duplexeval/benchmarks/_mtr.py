"""MTR-DuplexBench: 10-round dialogues with a ground-truth history, the user heard through the
window.

Cells: ``mtr-en`` under Multi (ref) (the reference history before each round, MTR's protocol)
and Multi (gen) without muting (the system's own history), and under ``interactive`` (ours, not
the paper's: the simulated user of :mod:`duplexeval.runs._interactive` plays each round's user
turn, pause, interruption, backchannels and background speech in reaction to the system, and
the rounds are moved onto the realised timeline, :mod:`duplexeval.runs._realised_items`;
skipped, with the reason, for a system that cannot react frame by frame), scored by the
``mtr`` variant.
Tables (:mod:`duplexeval.report._mtr_tables`): the per-feature table (round 1 and rounds 1-10),
the ablation over feature combinations and the round curves, each from the dialogues labelled
with its feature only; then every aggregate over all dialogues.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from duplexeval._fileio import atomic_write_text
from duplexeval.benchmarks._base import Benchmark, Cell, SystemCell
from duplexeval.plan._samples import EvalProtocol
from duplexeval.report._columns import protocol_name
from duplexeval.report._mtr_tables import (
    ablation_table,
    feature_table,
    round_table,
    table_csv,
    table_markdown,
    table_tex,
)
from duplexeval.report._text import variant_curve_lines, variant_table_lines

__all__ = ["MTR"]


def _row_name(label: str, cell: Cell) -> str:
    return f"{label} ({protocol_name(cell.protocol.value)}{'' if cell.mute else ', unmuted'})"


def _tables(cells: Sequence[SystemCell], out: Path) -> list[Path]:
    runs = [(_row_name(label, c.cell), c.results) for label, c in cells if c.results is not None]
    tables = [feature_table(runs), ablation_table(runs), round_table(runs)]
    lines = ["# MTR-DuplexBench", ""]
    skipped = [(label, c) for label, c in cells if c.results is None]
    lines += [f"- {_row_name(label, c.cell)}: not run: {c.skipped}" for label, c in skipped]
    lines += [""] if skipped else []
    written = []
    for table in tables:
        lines += [table_markdown(table)]
        for ext, render in (("csv", table_csv), ("tex", table_tex)):
            path = out / f"{table.name}.{ext}"
            atomic_write_text(path, render(table))
            written.append(path)
    lines += ["## Every aggregate, over all dialogues", ""]
    for label, cell in cells:
        if cell.results is not None:
            lines += [f"### {_row_name(label, cell.cell)}", "", "```",
                      *variant_table_lines(cell.results), "", *variant_curve_lines(cell.results),
                      "```", ""]
    path = out / "mtr.md"
    atomic_write_text(path, "\n".join(lines))
    return [path, *written]


MTR = Benchmark(
    name="mtr", version="3", title="MTR-DuplexBench",
    seed="MTR-DuplexBench: multi-round evaluation with ground-truth history",
    cells=(Cell("mtr-en", EvalProtocol.MULTI_REF, "mtr", mute=False, content_events=()),
           Cell("mtr-en", EvalProtocol.MULTI_GEN, "mtr", mute=False, content_events=()),
           Cell("mtr-en", EvalProtocol.INTERACTIVE, "mtr", mute=False, content_events=())),
    write_tables=_tables,
    official_data="mtr",
    notes={"definitions": "the mtr variant (MTR's timing rules, its released code)",
           "interactive": "not a protocol of the paper: the simulated user reacts to the "
                          "system; the rounds are moved onto the realised timeline and "
                          "scored by the same rules",
           "data": "bundled synthetic suite mtr-en: not comparable with published numbers"},
)
