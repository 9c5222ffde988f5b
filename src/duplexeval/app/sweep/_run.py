"""``duplexeval sweep``: one system, one dataset, one protocol, a condition's grid.

::

    OUT/
      runs/clean/               the run under the fixed conditions alone (none: clean)
      runs/{kind}-{key}={v}/    one run directory per grid point, e.g. runs/noise-snr=10/
      sweep.md, sweep.csv       the table (:mod:`duplexeval.report._sweep`): per metric, the
                                mean [95 % CI] at every point and its preserve rate
      sweep.json                the grid, the runs, the table's numbers (strict JSON)
      plots/{EVENT}-{metric}.png  one plot per metric against the swept value

Every run goes through :func:`~duplexeval.runs.execute_run` on the executor asked for (its
units, shared prefixes and batched forks as in any run: a condition is applied to a whole
user channel once, before any unit, so every sample of a channel hears the same conditioned
input and the prefixes within a run stay shared; across grid points the inputs differ from
their first frame, so no prefix is shared between them), then is scored with
:func:`~duplexeval.metrics._score_run.score_run_dir` into its own ``scores/{variant}/``.  A
rerun of the same command resumes every run (finished samples are kept, a current analysis
and scoring are reused) and writes the same table.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._fileio import atomic_write_json
from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.app.sweep._grid import SweepGrid
from duplexeval.conditions import Condition
from duplexeval.data._dialogue import Dataset
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.plan._samples import Plan
from duplexeval.report._provenance import timing_provenance
from duplexeval.report._sweep import (
    SweepMetric,
    sweep_csv,
    sweep_markdown,
    sweep_metrics,
    write_sweep_plots,
    write_sweep_table,
)
from duplexeval.results._model import Results
from duplexeval.runs import execute_run
from duplexeval.runs._driver import protocol_problem
from duplexeval.runs._execution import TaskMap
from duplexeval.runs._simulated_user import UserPolicy
from duplexeval.systems._base import System

__all__ = ["SWEEP_STEM", "SweepResult", "run_sweep"]

SWEEP_STEM = "sweep"
"""The table's file stem: ``sweep.md``, ``sweep.csv``, ``sweep.json``."""


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep: its metrics (clean first in each), the files and the runs."""

    metrics: list[SweepMetric]
    files: list[Path]
    runs: list[Path]
    markdown: str


def check_sweep(system: System, plan: Plan) -> None:
    """What a sweep refuses before any run: a protocol the system cannot run."""
    problem = protocol_problem(plan.options.protocol, system.capabilities)
    if problem is not None:
        raise DuplexevalError(f"system {system.name!r}: {problem}")


def _run_point(system: System, dataset: Dataset, plan: Plan, folder: Path,
               conditions: Sequence[Condition], settings: dict[str, Any]) -> Results:
    """One grid point: its run (resumed) and its scoring."""
    execute_run(system, dataset, plan, folder, seed=settings["seed"],
                progress=settings["progress"], executor=settings["executor"],
                conditions=conditions, user_policy=settings["policy"])
    results, _ = score_run_dir(folder, variant=settings["variant"],
                               options=settings["analysis"], progress=settings["progress"],
                               executor=settings["executor"])
    return results


def _heading(system: System, grid: SweepGrid, clean: Results, plan: Plan) -> list[str]:
    where = timing_provenance(clean)
    fixed = ", ".join(c.spec() for c in grid.fixed) or "none"
    data = where.data or (clean.source.dataset.name if clean.source.dataset else "?")
    return [f"# Sweep of {grid.parameter}: {system.name} under {plan.options.protocol.value}",
            "",
            f"- definition: {where.definition} (v{clean.variant.version})",
            f"- data: {data}" + (" (bundled synthetic suite)" if where.synthetic else ""),
            f"- fixed conditions (clean included): {fixed}",
            f"- values, mild to strong: {', '.join(f'{p.value:g}' for p in grid.points)}"]


def run_sweep(system: System, dataset: Dataset, plan: Plan, grid: SweepGrid, out: Path, *,
              variant: str = "m3", seed: int = 0, analysis: AnalysisOptions | None = None,
              executor: TaskMap | None = None, policy: UserPolicy | None = None,
              progress: bool = True) -> SweepResult:
    """Run, score and tabulate the grid (module docstring); returns what it wrote."""
    check_sweep(system, plan)
    analysis = analysis or AnalysisOptions()
    settings = {"seed": seed, "progress": progress, "executor": executor, "policy": policy,
                "variant": variant, "analysis": analysis}
    folders = [out / "runs" / "clean", *(out / "runs" / p.name for p in grid.points)]
    found = []
    for folder, conditions in zip(folders, [grid.fixed, *(p.conditions for p in grid.points)],
                                  strict=True):
        if progress:
            print(f"sweep: {folder.name}", file=sys.stderr)
        found.append(_run_point(system, dataset, plan, folder, conditions, settings))
    metrics = sweep_metrics(found[0], found[1:])
    names = [p.name for p in grid.points]
    values = [p.value for p in grid.points]
    where = timing_provenance(found[0])
    markdown = sweep_markdown(metrics, names, _heading(system, grid, found[0], plan))
    table = sweep_csv(metrics, names, values, {"definition": where.definition,
                                               "data": where.data})
    files = write_sweep_table(out, SWEEP_STEM, markdown, table)
    files += write_sweep_plots(metrics, grid.parameter, values, out / "plots")
    summary = {"system": system.name, "system_args": dict(system.args),
               "protocol": plan.options.protocol.value, "variant": variant, "seed": seed,
               "definition": where.definition, "data": where.data, "grid": grid.to_json(),
               "runs": [f.relative_to(out).as_posix() for f in folders],
               "metrics": [_metric_json(m) for m in metrics]}
    path = out / f"{SWEEP_STEM}.json"
    atomic_write_json(path, summary)
    return SweepResult(metrics, [*files, path], folders, markdown)


def _metric_json(m: SweepMetric) -> dict[str, Any]:
    return {"event_type": m.event_type, "metric": m.metric, "better": m.better,
            "monotone_within_ci": m.monotone,
            "cells": [None if c is None else {"n": c.n, "mean": c.mean, "ci95_low": c.low,
                                              "ci95_high": c.high, "preserve_rate": c.preserve}
                      for c in m.cells]}
