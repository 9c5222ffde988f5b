"""M3-DuplexBench (Xu et al. 2026): four data sets under the three protocols, the official rules.

Cells: the bundled suites ``m3-chat-en``, ``m3-chat-ja``, ``m3-qa-en`` and ``m3-qa-ja`` (each on
its own user channels) under Single, Multi (gen) and Multi (ref), and under ``interactive``
(ours, not the paper's: the simulated user of :mod:`duplexeval.runs._interactive`, its realised
events scored by the same rules; skipped, with the reason, for a system that cannot react
frame by frame), scored by the ``m3`` variant
(the official code's timing rules) with the content metrics of TURN_SHIFT events (offline always,
judged with a judge).  Tables: Table 5 (each system and protocol a row, timing and content per
domain) and Table 6 (each system a row, the protocols side by side), in Markdown, CSV and LaTeX;
Figures 4 (the SHIFT latency CDF) and 5 (SHIFT and PAUSE TOR, Δ) on Chat, per language, with
their data (:mod:`duplexeval.report._m3_figures`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from duplexeval.benchmarks._base import Benchmark, Cell, SystemCell
from duplexeval.plan._samples import EvalProtocol
from duplexeval.report._m3_figures import FIGURE_DOMAIN, write_m3_figures
from duplexeval.report._paper_tables import write_tables
from duplexeval.report._table_data import merge_rows, row_sources

__all__ = ["M3"]

SUITES = ("m3-chat-en", "m3-chat-ja", "m3-qa-en", "m3-qa-ja")


def _tables(cells: Sequence[SystemCell], out: Path) -> list[Path]:
    rows = merge_rows([row for label, c in cells if c.results is not None
                       for row in row_sources(label, c.results, str(c.run_dir))])
    written = write_tables(rows, out, ("md", "csv", "tex")) if rows else []
    for language in ("en", "ja"):
        for label in dict.fromkeys(label for label, _ in cells):
            chat = [c.results for name, c in cells if name == label and c.results is not None
                    and c.cell.suite == f"m3-{FIGURE_DOMAIN}-{language}"]
            written += write_m3_figures(label, chat, out, language,
                                        stem_suffix="" if len({n for n, _ in cells}) == 1
                                        else f"-{label}")
    return written


M3 = Benchmark(
    name="m3", version="3", title="M3-DuplexBench",
    seed="M3-DuplexBench: multi-turn, multi-protocol full-duplex evaluation (Tables 5 and 6)",
    cells=tuple(Cell(suite, protocol, "m3") for suite in SUITES for protocol in EvalProtocol),
    write_tables=_tables,
    notes={"definitions": "timing by the official M3 code's rules (variant m3)",
           "interactive": "not a protocol of the paper: the simulated user reacts to the "
                          "system; its realised events are scored by the same rules",
           "data": "bundled synthetic suites: not comparable with published numbers"},
)
