"""``duplexeval eval`` and :func:`evaluate`: every cell of the named benchmarks, one bundle.

For each benchmark, for each of its cells, in declaration order::

    suite subset --build--> dataset --plan(protocol, mute)--> run dir (resumed) --analyse-->
    scores/{variant}/ --> the benchmark's tables --> eval.json (last)

* A cell the system cannot run (multi-ref without teacher forcing) is skipped, with the reason
  in the manifest and in the tables; the evaluation goes on.
* Everything resumes: a finished sample is never run again, a current analysis is reused and a
  judged answer comes from the judge's cache, so a second invocation steps no frame and calls
  no judge.
* Scores are kept per variant (``scores/{variant}/``), so no scoring overwrites another.
* The subset is the suites' ``quick`` subset (default), their full build (``None``) or their
  first ``N`` dialogues (an int).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from duplexeval.analysis.pipeline import AnalysisOptions
from duplexeval.benchmarks.base import Benchmark, Cell, CellResult
from duplexeval.benchmarks.manifest import (
    MANIFEST_FILE,
    CellEntry,
    EvalManifest,
    file_hashes,
)
from duplexeval.benchmarks.registry import BENCHMARKS
from duplexeval.data.validate import Need, load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.fileio import atomic_write_json, atomic_write_text, safe_name
from duplexeval.metrics.content.score import JudgeSettings
from duplexeval.metrics.score_run import score_run_dir
from duplexeval.plan.samples import PlanOptions, build_plan
from duplexeval.runs import execute_run
from duplexeval.runs.directory import RunDir
from duplexeval.runs.driver import protocol_problem
from duplexeval.runs.execution import Executor, TaskMap
from duplexeval.suites import build_suite
from duplexeval.suites.build import Subset
from duplexeval.systems.base import System

__all__ = ["EvalExecutor", "EvalResult", "evaluate", "subset_name", "write_cells_note"]


class EvalExecutor(Executor, TaskMap, Protocol):
    """Where an evaluation runs its units and spreads its analysis and judge calls
    (:class:`~duplexeval.runs.LocalExecutor` or :class:`~duplexeval.runs.DaskExecutor`)."""


@dataclass(frozen=True)
class EvalResult:
    """What :func:`evaluate` made: the bundle, its manifest and every cell's results."""

    out: Path
    manifest: EvalManifest
    cells: dict[str, list[CellResult]]
    """Benchmark name -> its cells, in declaration order."""


def subset_name(subset: Subset) -> str:
    """``quick``, ``full`` or ``first N``."""
    return "full" if subset is None else "quick" if subset == "quick" else f"first {subset}"


def _git_revision() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _run_cell(system: System, bench: Benchmark, cell: Cell, out: Path, subset: Subset,
              judge: JudgeSettings | None, executor: EvalExecutor | None) -> CellResult:
    run_dir = out / "cells" / bench.name / cell.name
    reason = protocol_problem(cell.protocol, system.capabilities)
    if reason is not None:
        return CellResult(cell, run_dir, None, skipped=f"{system.name}: {reason}")
    dataset, _ = load_dataset(build_suite(cell.suite, limit=subset, progress=False),
                              audio=Need.REQUIRE)
    plan = build_plan(dataset, PlanOptions(protocol=cell.protocol, mute=cell.mute))
    execute_run(system, dataset, plan, run_dir, seed=0, progress=False, executor=executor)
    options = AnalysisOptions(content_event_types=cell.content_events)
    results, _ = score_run_dir(run_dir, RunDir(run_dir).scores(variant=cell.variant).root,
                               cell.variant,
                               options=options, progress=False,
                               judge=judge if cell.content_events else None, executor=executor)
    return CellResult(cell, run_dir, results)


def _entry(bench: Benchmark, result: CellResult, out: Path, subset: Subset) -> CellEntry:
    cell = result.cell
    results_file = RunDir(result.run_dir).scores(variant=cell.variant).results
    samples = failed = 0
    if result.results is not None:
        summary = RunDir(result.run_dir).read_summary()
        samples, failed = (summary.samples, summary.failed) if summary else (0, 0)
    return CellEntry(benchmark=bench.name, cell=cell.name, suite=cell.suite,
                     subset=subset_name(subset), protocol=cell.protocol.value,
                     variant=cell.variant, mute=cell.mute,
                     status="skipped" if result.results is None else "done",
                     reason=result.skipped, run=result.run_dir.relative_to(out).as_posix(),
                     results=None if result.results is None
                     else results_file.relative_to(out).as_posix(),
                     samples=samples, failed=failed)


def write_cells_note(bench: Benchmark, results: Sequence[CellResult], subset: Subset,
                      folder: Path) -> Path:
    """``cells.md`` beside the tables: what each cell is, how it was scored, and why a cell
    was not run; then the benchmark's notes (definitions, data)."""
    lines = [f"# {bench.title} (v{bench.version}): cells", "",
             "| cell | suite | subset | protocol | user muted | variant | status |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        status = "run" if r.skipped is None else f"not run: {r.skipped}"
        lines.append(f"| {r.cell.name} | {r.cell.suite} | {subset_name(subset)} | "
                     f"{r.cell.protocol.value} | {'yes' if r.cell.mute else 'no'} | "
                     f"{r.cell.variant} | {status} |")
    lines += [""] + [f"- {topic}: {text}" for topic, text in bench.notes.items()]
    path = folder / "cells.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def _check_out(out: Path) -> None:
    """Refuse, before any work, a bundle path that is a file or cannot be written."""
    if out.exists() and not out.is_dir():
        raise DuplexevalError(f"{out}: not a folder (eval -o names the bundle folder)")
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise DuplexevalError(f"{existing}: not writable, so the bundle {out} cannot be written")


def _judge_json(judge: JudgeSettings | None) -> dict[str, Any] | None:
    return None if judge is None else dict(judge.describe())


def evaluate(system: System, benchmarks: Sequence[str], out: str | Path,
             subset: Subset = "quick", judge: JudgeSettings | None = None,
             executor: EvalExecutor | None = None, progress: bool = True,
             html: bool = False) -> EvalResult:
    """Evaluate ``system`` on ``benchmarks`` (names in :data:`BENCHMARKS`) into the bundle
    ``out`` (see the module docstring); returns what it made.  ``html`` also writes the HTML
    report of every cell that ran into ``out/report/`` (figures and every event; about 4 s a
    cell on 2 cores, so it is asked for)."""
    out = Path(out)
    chosen = [BENCHMARKS.get(name) for name in dict.fromkeys(benchmarks)]
    if not chosen:
        raise DuplexevalError("eval: name at least one benchmark "
                              f"({', '.join(BENCHMARKS.names())})")
    safe_name(system.name, "system name")
    _check_out(out)
    total = sum(len(b.cells) for b in chosen)
    done: dict[str, list[CellResult]] = {}
    tables: dict[str, list[str]] = {}
    with tqdm(total=total, desc=f"eval {system.name}", unit="cell", file=sys.stderr,
              disable=not progress) as bar:
        for bench in chosen:
            results = []
            for cell in bench.cells:
                bar.set_postfix_str(f"{bench.name} {cell.name}")
                results.append(_run_cell(system, bench, cell, out, subset, judge, executor))
                bar.update(1)
            done[bench.name] = results
            folder = out / "tables" / bench.name
            folder.mkdir(parents=True, exist_ok=True)
            written = bench.write_tables(system.name, results, folder)
            written.append(write_cells_note(bench, results, subset, folder))
            tables[bench.name] = [p.relative_to(out).as_posix() for p in written]
    cells = [_entry(b, r, out, subset) for b in chosen for r in done[b.name]]
    ran = [r.run_dir for b in chosen for r in done[b.name] if r.results is not None]
    if html and ran:
        from duplexeval.report.html_report import html_report_of

        html_report_of(ran, out / "report")
    manifest = EvalManifest(
        git_revision=_git_revision(), benchmarks={b.name: b.version for b in chosen},
        system={"name": system.name, "version": system.version, "args": dict(system.args),
                "class": f"{type(system).__module__}:{type(system).__qualname__}",
                "capabilities": system.capabilities.to_json()},
        judge=_judge_json(judge), cells=cells, tables=tables,
        files=file_hashes(out, [out / "cells", out / "tables"]))
    atomic_write_json(out / MANIFEST_FILE, manifest.model_dump(mode="json"))
    return EvalResult(out, manifest, done)
