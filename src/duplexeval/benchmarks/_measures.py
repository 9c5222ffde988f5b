"""``duplexeval eval BENCH --measures ...``: the measures no benchmark has, in its bundle.

Only when asked (the default bundle is the benchmarks' own)::

    measure         run scored                          variant            table
    realism         the cell's run                      realism            realism
    turnbench       the cell's run                      turnbench          turnbench
    barge-in-cost   the cell's run                      turnbench          barge-in-cost
    stability       the cell's plan, K tries a sample   the cell's (+tb)   stability
    counterfactual  the cell's plan, with twins         the cell's (+tb)   counterfactual

* realism, turnbench and barge-in cost score each cell's own run again, into
  ``scores/{variant}/`` beside the benchmark's scores;
* stability (``--repeats K``, K >= 2: K forks of one snapshot with K seeds) and counterfactual
  pairs (each sample with a user act followed by its twin without it) change the plan, so each
  cell gets a second run for them, ``measures/{benchmark}/{cell}/`` in the bundle (both in one
  plan when both are asked): the benchmark's tables keep one try per event.  That run is scored
  by the cell's variant, and by ``turnbench`` (``+tb``) too when turnbench or barge-in-cost is
  asked (pass^k of the stop verdicts, the act's effect on the penalty seconds);
* every scoring of one run uses the same analysis options
  (:func:`~duplexeval.metrics._score_run.shared_analysis`), so they share one analysis, and
  ``verify`` scores each again from it;
* each measure's table goes to ``tables/{benchmark}/`` (:mod:`duplexeval.report._measure_tables`),
  and ``eval --html`` draws them (:mod:`duplexeval.report._html_report`).

``--repeats K`` alone means stability; ``stability`` without ``--repeats`` is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.benchmarks._base import Cell, CellResult, MeasureScoring
from duplexeval.data._dialogue import Dataset
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._base import get_variant
from duplexeval.metrics._score_run import reference_problem, score_run_dir, shared_analysis
from duplexeval.plan._samples import MAX_REPEATS, REPLACEMENTS, Plan, Replacement, build_plan
from duplexeval.report._measure_tables import MeasureCell, write_measure_tables
from duplexeval.runs import execute_run
from duplexeval.runs._directory import RunDir
from duplexeval.runs._execution import Executor
from duplexeval.systems._base import System

__all__ = ["MEASURES", "MEASURES_FOLDER", "Measures", "cell_analysis", "measure_cells",
           "not_measurable", "score_measures", "tries_plan", "write_bundle_measures"]

MEASURES: dict[str, str] = {
    "realism": "timing distributions against the human channel (KS, Wasserstein, JS)",
    "turnbench": "TurnBench-style matching: match rate, latency p10/p50/p90, false positives",
    "barge-in-cost": "penalty seconds per event of false and missed stops",
    "stability": "pass@k, pass^k, flips and latency spread of K tries (needs --repeats K)",
    "counterfactual": "the paired effect of the user's act against its twin without it",
}
"""The measures ``eval --measures`` takes, in table order."""

VARIANT_MEASURES: tuple[tuple[str, str], ...] = (
    ("realism", "realism"), ("turnbench", "turnbench"), ("barge-in-cost", "turnbench"))
"""The measures that score the cell's own run again, with the variant each reads."""

MEASURES_FOLDER = "measures"
"""The bundle folder of the cells' runs with repeated tries or twins."""


@dataclass(frozen=True)
class Measures:
    """The measures asked for and the tries per sample (see the module docstring)."""

    names: tuple[str, ...] = ()
    repeats: int = 1
    replacement: Replacement = "silence"
    """What replaces the act in the counterfactual twins (``silence``, ``noise``)."""

    @classmethod
    def of(cls, names: Sequence[str] = (), repeats: int = 1,
           counterfactual: bool | Replacement = False,
           replacement: Replacement = "silence") -> Measures:
        """Checked: known names, in table order; ``repeats`` > 1 adds ``stability``,
        ``counterfactual`` (true, or what replaces the act: ``silence``, ``noise``) adds
        ``counterfactual``; a one-line error otherwise."""
        if isinstance(counterfactual, str):
            replacement, counterfactual = counterfactual, True
        if replacement not in REPLACEMENTS:
            raise DuplexevalError(f"--counterfactual: {replacement!r} is not one of "
                                  f"{', '.join(REPLACEMENTS)}")
        unknown = [n for n in names if n not in MEASURES]
        if unknown:
            raise DuplexevalError(f"--measures: unknown measure {unknown[0]!r}; known: "
                                  f"{', '.join(MEASURES)}")
        if not 1 <= repeats <= MAX_REPEATS:
            raise DuplexevalError(f"--repeats must be an integer in [1, {MAX_REPEATS}]")
        wanted = set(names) | ({"stability"} if repeats > 1 else set()) \
            | ({"counterfactual"} if counterfactual else set())
        if "stability" in wanted and repeats < 2:
            raise DuplexevalError("--measures stability needs --repeats K (K >= 2 tries of "
                                  "each sample)")
        return cls(tuple(n for n in MEASURES if n in wanted), repeats, replacement)

    @property
    def tries(self) -> bool:
        """Whether the cells get a second run (repeated tries, twins)."""
        return self.repeats > 1 or "counterfactual" in self.names

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants that score the cell's own run again."""
        return tuple(dict.fromkeys(v for name, v in VARIANT_MEASURES if name in self.names))

    def tries_variants(self, cell: Cell) -> tuple[str, ...]:
        """The variants that score the cell's run with tries or twins."""
        if not self.tries:
            return ()
        extra = "turnbench" in self.variants
        return tuple(dict.fromkeys([cell.variant, *(["turnbench"] if extra else [])]))


def tries_plan(plan: Plan, dataset: Dataset, measures: Measures, first: int | None) -> Plan:
    """The cell's plan with the repeats and twins asked (its first ``first`` dialogues, as
    the cell's own plan has)."""
    options = replace(plan.options, repeats=measures.repeats,
                      counterfactual="counterfactual" in measures.names,
                      counterfactual_replacement=measures.replacement)
    return build_plan(dataset.dialogues[:first], options)


def cell_analysis(options: AnalysisOptions, variants: Sequence[str],
                  dataset: Dataset | None) -> AnalysisOptions:
    """The analysis options of a run scored by ``variants`` (``options`` itself when it is
    scored by one: the benchmark's default)."""
    variants = tuple(dict.fromkeys(variants))
    if len(variants) <= 1:
        return options
    return shared_analysis(options, variants, dataset)


Counter = Callable[[int], None]


def score_measures(system: System, cell: Cell, dataset: Dataset, run_dir: Path,
                   tries: tuple[Path, Plan] | None, measures: Measures,
                   options: AnalysisOptions, executor: Executor | None = None,
                   on_run: Counter | None = None, on_scored: Counter | None = None,
                   ) -> tuple[tuple[MeasureScoring, ...], dict[str, str]]:
    """The cell's measure scorings: its own run (``run_dir``, already scored by the cell's
    variant with :func:`cell_analysis` over :meth:`Measures.variants`) again by each measure
    variant, and the run with tries or twins (``tries``: its folder and plan) run (or
    resumed) and scored.  ``options``: the cell's analysis options before sharing.  Also
    the measures the cell cannot give, each with why (:func:`not_measurable`): those are
    skipped."""
    found = []
    shared = cell_analysis(options, (cell.variant, *measures.variants), dataset)
    skipped = not_measurable(measures, run_dir)
    for variant in measures.variants:
        if all(name in skipped for name, v in VARIANT_MEASURES if v == variant
               and name in measures.names):
            continue
        results, _ = score_run_dir(run_dir, RunDir(run_dir).scores(variant=variant).root,
                                   variant, options=shared, progress=False)
        found.append(MeasureScoring(variant, run_dir, results))
    if tries is not None:
        folder, plan = tries
        execute_run(system, dataset, plan, folder, seed=0, progress=False,
                    executor=executor, on_samples=on_run)
        names = measures.tries_variants(cell)
        opts = cell_analysis(replace(options, content_event_types=()), names, dataset)
        for variant in names:
            results, _ = score_run_dir(folder, RunDir(folder).scores(variant=variant).root,
                                       variant, options=opts, progress=False)
            found.append(MeasureScoring(variant, folder, results, tries=True))
        if on_scored is not None:
            on_scored(len(plan.samples))
    return tuple(found), skipped


def not_measurable(measures: Measures, run_dir: Path) -> dict[str, str]:
    """The measures asked that the cell's run cannot give, each with why: ``realism`` when
    the run has no reference timing to compare with (its dataset's reference channel is
    silent in every dialogue it played, as in imported FDB or FLEXI data, or the run is
    interactive: :func:`~duplexeval.metrics._score_run.reference_problem`)."""
    skipped = {}
    for name, variant in VARIANT_MEASURES:
        if name in measures.names and get_variant(variant).reference_channel:
            problem = reference_problem(run_dir)
            if problem is not None:
                skipped[name] = problem
    return skipped


def measure_cells(label: str, results: Sequence[CellResult]) -> list[MeasureCell]:
    """The measure scorings of a benchmark's cells, as the measure tables read them."""
    return [MeasureCell(label, r.cell.name, m.results, m.tries)
            for r in results for m in r.measures]


def write_bundle_measures(label: str, results: Sequence[CellResult], measures: Measures,
                          folder: Path) -> list[Path]:
    """Each measure's table of a benchmark's cells into ``folder`` (its table folder); the
    table of a measure not asked, from an earlier evaluation into the same bundle, is removed
    (the bundle's tables are this evaluation's)."""
    for name in MEASURES:
        if name not in measures.names:
            for ext in ("md", "csv"):
                (folder / f"{name}.{ext}").unlink(missing_ok=True)
    return write_measure_tables(measures.names, measure_cells(label, results), folder,
                                measures.replacement)
