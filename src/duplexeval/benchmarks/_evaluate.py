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
* Every cell's dataset and plan are made first (suites built once, cached), so that one
  progress display covers the evaluation: each sample counts once when run and once when its
  cell is analysed and scored, with the cell, the counts and an ETA.
* The subset is the suites' ``quick`` subset (default), their full build (``None``) or their
  first ``N`` dialogues (an int).
* ``measures`` adds the measures no benchmark has (realism, turnbench, barge-in cost, pass^k
  and stability, counterfactual pairs; :mod:`duplexeval.benchmarks._measures`): more scorings
  of each cell, a second run per cell for repeated tries or twins, and a table per measure.
  None by default.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from duplexeval._fileio import (
    atomic_write_json,
    atomic_write_text,
    foreign_folder_problem,
    remove_stale_temporaries,
    safe_name,
)
from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.benchmarks._base import Benchmark, Cell, CellResult, MeasureScoring
from duplexeval.benchmarks._manifest import (
    MANIFEST_FILE,
    CellEntry,
    EvalManifest,
    ScoringEntry,
    file_hashes,
    sha256_file,
)
from duplexeval.benchmarks._measures import (
    MEASURES_FOLDER,
    Measures,
    cell_analysis,
    score_measures,
    tries_plan,
    write_bundle_measures,
)
from duplexeval.benchmarks._registry import BENCHMARKS
from duplexeval.data._dialogue import Dataset
from duplexeval.data._validate import Need, load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.metrics.content._score import JudgeSettings
from duplexeval.plan._samples import Plan, PlanOptions, build_plan
from duplexeval.runs import ProcessExecutor, execute_run
from duplexeval.runs._directory import RunDir
from duplexeval.runs._driver import protocol_problem
from duplexeval.runs._execution import Executor, TaskMap
from duplexeval.suites import build_suite
from duplexeval.suites._build import Subset
from duplexeval.suites._registry import SUITES
from duplexeval.systems._base import System
from duplexeval.version import git_revision

__all__ = ["JUDGE_CACHE", "OFFICIAL", "CellData", "EvalExecutor", "EvalResult", "base_analysis",
           "cell_data", "evaluate", "subset_name", "write_cells_note"]


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
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall seconds by stage: ``synthesis`` (datasets built or found, plans), ``runs``,
    ``analysis`` (with the scoring; on a process pool, where a cell's analysis overlaps the
    next cell's runs, only the time spent waiting for it), ``tables`` (tables, report and
    manifest).  They add up to no more than the evaluation's wall time."""


def subset_name(subset: Subset) -> str:
    """``quick``, ``full`` or ``first N``."""
    return "full" if subset is None else "quick" if subset == "quick" else f"first {subset}"


OFFICIAL = "official"
"""``--data official``: each benchmark's public release (:attr:`Benchmark.official_data`)."""


@dataclass(frozen=True)
class CellData:
    """Where a cell's dialogues come from: a folder, what to call it, or why there is none."""

    path: Path | None
    label: str
    skipped: str | None = None


def cell_data(bench: Benchmark, cell: Cell, data: str | Path | None, subset: Subset,
              fetch: bool = True, progress: bool = False) -> CellData:
    """The dataset of ``cell``:

    * ``data=None``: the cell's bundled suite, its quick subset, first N or all (built once,
      cached);
    * ``"official"``: the benchmark's public release (``duplexeval data download``), all of it;
      none for a benchmark without one (M3: its data is rebuilt from its corpora);
    * a folder: that dataset for a benchmark of one suite (or ``DIR/SUITE`` when present), and
      ``DIR/SUITE`` for each suite of a benchmark of several (M3: ``DIR/m3-chat-en``, ...).

    With ``fetch=False`` nothing is built or downloaded (the label only, for ``verify``);
    ``progress`` shows the synthesis of a suite not yet built (minutes for a full one)."""
    if data is None:
        if SUITES.find(cell.suite) is None:
            return CellData(None, "", skipped=(
                f"{bench.title} has no bundled suite: pass --data DIR (a dataset folder, "
                f"e.g. from duplexeval data import {bench.name}) or --data official"))
        label = f"suite {cell.suite} ({subset_name(subset)})"
        return CellData(build_suite(cell.suite, limit=subset, progress=progress) if fetch
                        else None, label)
    if str(data) == OFFICIAL:
        if bench.official_data is None:
            return CellData(None, "", skipped=(
                f"{bench.title} has no public release to download: rebuild its data from "
                "its corpora (duplexeval data import ...) and pass --data DIR"))
        label = f"official release {bench.official_data}"
        if not fetch:
            return CellData(None, label)
        from duplexeval.data.recipes._download import official_dataset

        return CellData(official_dataset(bench.official_data), label)
    root = Path(data)
    suites = {c.suite for c in bench.cells}
    candidates = [root / cell.suite] + ([root] if len(suites) == 1 else [])
    found = next((p for p in candidates if (p / "dataset.json").is_file()
                  or any(p.glob("*.jsonl"))), None)
    if found is None:
        wanted = " or ".join(str(p) for p in candidates)
        return CellData(None, "", skipped=f"no dataset at {wanted}")
    return CellData(found, str(found))


@dataclass(frozen=True)
class _Prepared:
    """A cell ready to run: its run directory, data label, dataset and plan (``None`` with
    the reason when it is skipped)."""

    bench: Benchmark
    cell: Cell
    run_dir: Path
    label: str
    dataset: Dataset | None = None
    plan: Plan | None = None
    skipped: str | None = None
    tries: tuple[Path, Plan] | None = None
    """The cell's run with repeated tries or twins (``--measures``): its folder and plan."""
    no_data: bool = False
    """Skipped because its data is not there (no bundled suite, no dataset in ``--data``)."""

    def samples(self) -> int:
        """Samples planned: the cell's and its tries'."""
        return sum(len(p.samples) for p in (self.plan, self.tries[1] if self.tries else None)
                   if p is not None)


def _prepare(system: System, bench: Benchmark, cell: Cell, out: Path, subset: Subset,
             data: str | Path | None, measures: Measures, progress: bool = False) -> _Prepared:
    """The cell's dataset (built or downloaded once) and plan, or why it is skipped."""
    run_dir = out / "cells" / bench.name / cell.name
    reason = protocol_problem(cell.protocol, system.capabilities)
    if reason is not None:
        return _Prepared(bench, cell, run_dir, cell_data(bench, cell, data, subset,
                                                         fetch=False).label,
                         skipped=f"{system.name}: {reason}")
    where = cell_data(bench, cell, data, subset, progress=progress)
    if where.path is None:
        return _Prepared(bench, cell, run_dir, where.label, skipped=where.skipped,
                         no_data=True)
    dataset, _ = load_dataset(where.path, audio=Need.REQUIRE)
    first = subset if data is not None and isinstance(subset, int) else None
    plan = build_plan(dataset.dialogues[:first],
                      PlanOptions(protocol=cell.protocol, mute=cell.mute,
                                  channels=dataset.user_channels,
                                  ignored_events=cell.ignored_events))
    tries = None
    if measures.tries:
        tries = (out / MEASURES_FOLDER / bench.name / cell.name,
                 tries_plan(plan, dataset, measures, first))
    return _Prepared(bench, cell, run_dir, where.label, dataset, plan, tries=tries)


class _Progress:
    """One display for the whole evaluation: every sample is counted twice, once when it is
    run and once when its cell is analysed and scored, so the ETA covers both; the
    description names the cell (``cell 3/12 m3 m3-chat-en-single``) and the samples run and
    analysed."""

    def __init__(self, system: str, prepared: Sequence[_Prepared], enabled: bool) -> None:
        self.samples = sum(p.samples() for p in prepared)
        self.cells = len(prepared)
        self.ran = self.analysed = 0
        self.system = system
        self.bar = tqdm(total=2 * self.samples, desc=f"eval {system}", unit="step",
                        file=sys.stderr, disable=not enabled, dynamic_ncols=True,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                   "[{elapsed}<{remaining}]")
        self.name = ""

    def cell(self, i: int, prepared: _Prepared) -> None:
        self.name = f"cell {i + 1}/{self.cells} {prepared.bench.name} {prepared.cell.name}"
        self._show()

    def run(self, k: int) -> None:
        self.ran += k
        self._show(refresh=False)
        self.bar.update(k)

    def analysed_samples(self, k: int) -> None:
        """``k`` more samples of the current cell analysed (the bar moves while a long
        cell's analysis runs, not only when its scores are written)."""
        self.analysed += k
        self._show(refresh=False)
        self.bar.update(k)

    def analysed_cell(self, samples: int, counted: int) -> None:
        """The cell's ``samples`` are scored, ``counted`` of them already shown as analysed
        (none where its analysis was reused)."""
        self.analysed_samples(max(0, samples - counted))

    def _show(self, refresh: bool = True) -> None:
        self.bar.set_description_str(
            f"eval {self.system} {self.name} (samples run {self.ran}/{self.samples}, "
            f"analysed {self.analysed}/{self.samples})", refresh=refresh)

    def write(self, line: str) -> None:
        """A line on stderr above the bar (not glued to it)."""
        self.bar.write(line, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()


OFFLINE_CONTENT_DOMAINS = ("task",)
"""Domains with content numbers that need no judge (M3's MT-QA: QA F1 against the reference
answer)."""


def content_events(cell: Cell, dataset: Dataset, judge: JudgeSettings | None,
                   ) -> tuple[str, ...]:
    """The event types whose replies the analysis transcribes in full: the cell's, except
    without a judge on a dataset whose content numbers all need one (Chat: relevance and
    consistency), where the transcripts would feed no number (a later ``eval`` with a judge
    transcribes them then)."""
    if judge is None and dataset.domain not in OFFLINE_CONTENT_DOMAINS:
        return ()
    return cell.content_events


def base_analysis(cell: Cell, dataset: Dataset, judge: JudgeSettings | None,
                  timing_only: bool = False) -> AnalysisOptions:
    """The analysis options a cell is scored with before its variants add what they need
    (:func:`~duplexeval.benchmarks._measures.cell_analysis`): the :func:`content_events`
    (none when ``timing_only``), transcribed in full on both channels with a judge (it reads
    the user's utterance) and on the system's alone without one (the offline numbers read no
    user word)."""
    events = () if timing_only else content_events(cell, dataset, judge)
    return AnalysisOptions(content_event_types=events,
                           content_channels=(0, 1) if judge is not None else (1,))


def _run_cell(system: System, prepared: _Prepared, executor: EvalExecutor | None,
              progress: _Progress, seconds: dict[str, float]) -> None:
    """Run (or resume) the cell's samples; their wall seconds go to ``runs``."""
    if prepared.dataset is None or prepared.plan is None:
        return
    start = time.perf_counter()
    execute_run(system, prepared.dataset, prepared.plan, prepared.run_dir, seed=0,
                progress=False, executor=executor, on_samples=progress.run)
    seconds["runs"] += time.perf_counter() - start


def _score_cell(system: System, prepared: _Prepared, judge: JudgeSettings | None,
                executor: EvalExecutor | None, progress: _Progress,
                measures: Measures) -> CellResult:
    """Analyse and score the cell's run (and its measures, with their runs)."""
    cell, run_dir = prepared.cell, prepared.run_dir
    if prepared.dataset is None or prepared.plan is None:
        return CellResult(cell, run_dir, None, skipped=prepared.skipped)
    base = base_analysis(cell, prepared.dataset, judge)
    events = base.content_event_types
    options = cell_analysis(base, (cell.variant, *measures.variants), prepared.dataset)
    total, counted = len(prepared.plan.samples), 0

    def analysed(k: int) -> None:
        nonlocal counted
        k = min(k, total - counted)
        counted += k
        progress.analysed_samples(k)

    results, _ = score_run_dir(run_dir, RunDir(run_dir).scores(variant=cell.variant).root,
                               cell.variant,
                               options=options, progress=False,
                               judge=judge if events else None, executor=executor,
                               on_samples=analysed, log=progress.write)
    progress.analysed_cell(total, counted)
    found: tuple[MeasureScoring, ...] = ()
    skipped: dict[str, str] = {}
    if measures.names:
        found, skipped = score_measures(system, cell, prepared.dataset, run_dir,
                                        prepared.tries, measures, base, executor,
                                        on_run=progress.run, on_scored=progress.analysed_samples)
    for name, why in skipped.items():
        progress.bar.write(f"{prepared.bench.name} {cell.name}: {name} not measured: {why}",
                           file=sys.stderr)
    return CellResult(cell, run_dir, results, measures=found, not_measured=skipped)


def _run_cells(system: System, prepared: Sequence[_Prepared], judge: JudgeSettings | None,
               executor: EvalExecutor | None, progress: _Progress,
               seconds: dict[str, float], measures: Measures) -> list[CellResult]:
    """Every cell run, analysed and scored, in order.  On a process pool
    (:class:`~duplexeval.runs.ProcessExecutor`) and without measures, a cell's analysis and
    scoring run in a thread of this process while the pool runs the next cell's samples (the
    analysis leaves part of the cores idle: its Whisper windows go to their own worker
    processes, its voice activity and files to this one); the files are the same either way.
    ``analysis`` then counts only the seconds spent waiting for an analysis once the runs are
    done, so that the stages add up to the wall time."""
    out: list[CellResult] = []
    overlap = isinstance(executor, ProcessExecutor) and not measures.names
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="eval-scoring") as scorer:
        pending: Future[CellResult] | None = None

        def collect() -> None:
            nonlocal pending
            if pending is not None:
                waited = time.perf_counter()
                out.append(pending.result())
                seconds["analysis"] += time.perf_counter() - waited
                pending = None

        try:
            for i, item in enumerate(prepared):
                progress.cell(i, item)
                _run_cell(system, item, executor, progress, seconds)
                collect()  # one analysis at a time, in cell order
                if overlap:
                    pending = scorer.submit(_score_cell, system, item, judge, executor,
                                            progress, measures)
                else:
                    start = time.perf_counter()
                    out.append(_score_cell(system, item, judge, executor, progress, measures))
                    seconds["analysis"] += time.perf_counter() - start
            collect()
        except BaseException:
            scorer.shutdown(wait=True, cancel_futures=True)  # a running analysis finishes
            raise
    return out


def _entry(bench: Benchmark, result: CellResult, out: Path, subset: Subset,
           data: str) -> CellEntry:
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
                     samples=samples, failed=failed, data=data,
                     scorings=[ScoringEntry(
                         variant=m.variant, run=m.run_dir.relative_to(out).as_posix(),
                         results=RunDir(m.run_dir).scores(variant=m.variant).results
                         .relative_to(out).as_posix()) for m in result.measures],
                     not_measured=dict(result.not_measured))


def write_cells_note(bench: Benchmark, results: Sequence[CellResult], subset: Subset,
                     folder: Path, data: Sequence[str] = ()) -> Path:
    """``cells.md`` beside the tables: what each cell is, what it ran on (``data``, one label
    per cell), how it was scored, and why a cell was not run; the measures a cell could not
    give, with why; then the benchmark's notes (definitions, data)."""
    lines = [f"# {bench.title} (v{bench.version}): cells", "",
             "| cell | data | protocol | user muted | variant | status |",
             "| --- | --- | --- | --- | --- | --- |"]
    labels = list(data) or [f"suite {r.cell.suite} ({subset_name(subset)})" for r in results]
    for r, label in zip(results, labels, strict=True):
        status = "run" if r.skipped is None else f"not run: {r.skipped}"
        lines.append(f"| {r.cell.name} | {label or '–'} | {r.cell.protocol.value} | "
                     f"{'yes' if r.cell.mute else 'no'} | {r.cell.variant} | {status} |")
    skipped = [f"- {r.cell.name}: {name} not measured: {why}"
               for r in results for name, why in r.not_measured.items()]
    lines += ["", *skipped] if skipped else []
    lines += [""] + [f"- {topic}: {text}" for topic, text in bench.notes.items()]
    path = folder / "cells.md"
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def _check_out(out: Path) -> None:
    """Refuse, before any work, a bundle path that is a file, cannot be written, or is
    another thing's folder (:func:`~duplexeval._fileio.foreign_folder_problem`)."""
    if out.exists() and not out.is_dir():
        raise DuplexevalError(f"{out}: not a folder (eval -o names the bundle folder)")
    foreign = foreign_folder_problem(out, (MANIFEST_FILE, "cells"), "an eval bundle")
    if foreign is not None:
        raise DuplexevalError(foreign)
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise DuplexevalError(f"{existing}: not writable, so the bundle {out} cannot be written")


def _refuse_without_data(prepared: Sequence[_Prepared]) -> None:
    """Refuse, before the bundle is written, an evaluation in which no cell can run and some
    lack their data (``eval fdb-v1`` without ``--data``, a ``--data`` folder holding none of
    the suites): a bundle of skipped cells would say nothing, with exit 0."""
    if any(p.dataset is not None for p in prepared):
        return
    missing = next((p for p in prepared if p.no_data), None)
    if missing is not None:
        raise DuplexevalError(f"{missing.bench.name} {missing.cell.name}: {missing.skipped}; "
                              "no cell of the evaluation has its data")


def _check_data(data: str | Path | None) -> None:
    """Refuse, before any work, a ``--data`` that is neither ``official`` nor a folder (a
    missing path would otherwise skip every cell and still write a bundle)."""
    if data is None or str(data) == OFFICIAL:
        return
    path = Path(data)
    if not path.exists():
        raise DuplexevalError(f"{path}: no such folder (eval --data takes 'official' or a "
                              "folder of datasets)")
    if not path.is_dir():
        raise DuplexevalError(f"{path}: not a folder (eval --data takes 'official' or a "
                              "folder of datasets)")


def _cache_name(judge: JudgeSettings | None, out: Path) -> str | None:
    if judge is None or judge.cache_path is None:
        return None
    path = Path(judge.cache_path)
    return path.relative_to(out).as_posix() if path.is_relative_to(out) else str(path)


def _hashes(out: Path, judge: JudgeSettings | None) -> dict[str, str]:
    files = file_hashes(out, [out / "cells", out / "tables", out / MEASURES_FOLDER])
    cache = out / JUDGE_CACHE
    if judge is not None and judge.cache_path == cache and cache.is_file():
        files[JUDGE_CACHE] = sha256_file(cache)
    return dict(sorted(files.items()))


def _judge_json(judge: JudgeSettings | None) -> dict[str, Any] | None:
    return None if judge is None else dict(judge.describe())


JUDGE_CACHE = "judge-cache.sqlite"
"""The bundle's judge answer cache (``verify`` answers only from it)."""


def _chosen(benchmarks: Sequence[str | Benchmark]) -> list[Benchmark]:
    """The named or given benchmarks, each once, in order; none is a one-line error."""
    chosen: list[Benchmark] = []
    for named in benchmarks:
        found = named if isinstance(named, Benchmark) else BENCHMARKS.get(named)
        if all(b.name != found.name for b in chosen):
            chosen.append(found)
    if not chosen:
        raise DuplexevalError("eval: name at least one benchmark "
                              f"({', '.join(BENCHMARKS.names())})")
    return chosen


def _write_bundle_tables(system: System, chosen: Sequence[Benchmark],
                         done: dict[str, list[CellResult]], labels: dict[tuple[str, str], str],
                         out: Path, subset: Subset, measures: Measures) -> dict[str, list[str]]:
    """Each benchmark's tables, its measures' and its cells note; benchmark -> its files,
    relative to ``out``."""
    tables: dict[str, list[str]] = {}
    for bench in chosen:
        results = done[bench.name]
        folder = out / "tables" / bench.name
        folder.mkdir(parents=True, exist_ok=True)
        written = bench.write_tables([(system.name, r) for r in results], folder)
        written += write_bundle_measures(system.name, results, measures, folder)
        written.append(write_cells_note(bench, results, subset, folder,
                                        [labels[(bench.name, r.cell.name)] for r in results]))
        tables[bench.name] = [p.relative_to(out).as_posix() for p in written]
    return tables


def _system_json(system: System) -> dict[str, Any]:
    return {"name": system.name, "version": system.version, "args": dict(system.args),
            "class": f"{type(system).__module__}:{type(system).__qualname__}",
            "capabilities": system.capabilities.to_json()}


def _html(ran: Sequence[CellResult], out: Path) -> None:
    """The HTML report of the cells that ran, with their measure scorings."""
    from duplexeval.report._html_report import html_report_of

    extra = [RunDir(m.run_dir).scores(variant=m.variant).results
             for r in ran for m in r.measures]
    main = [RunDir(r.run_dir).scores(variant=r.cell.variant).results for r in ran]
    html_report_of(main, out / "report", measures=extra)


def evaluate(system: System, benchmarks: Sequence[str | Benchmark], out: str | Path,
             subset: Subset = "quick", judge: JudgeSettings | None = None,
             executor: EvalExecutor | None = None, progress: bool = True,
             html: bool = False, data: str | Path | None = None,
             select: Callable[[Benchmark, Cell], bool] | None = None,
             measures: Measures | None = None) -> EvalResult:
    """Evaluate ``system`` on ``benchmarks`` (names in :data:`BENCHMARKS`, or
    :class:`Benchmark` declarations; a bundle of an unregistered one cannot be verified) into
    the bundle ``out`` (see the module docstring); returns what it made.  ``data`` replaces
    the bundled suites (:func:`cell_data`: ``"official"`` or a folder; ``subset`` then only
    counts with an int).  The judge's answers are cached in ``out/judge-cache.sqlite`` unless
    its ``cache_path`` says otherwise.  ``html`` also writes the HTML report of every cell that
    ran into ``out/report/`` (figures and every event; about 4 s a cell on 2 cores, so it is
    asked for).  ``select`` keeps only the cells it accepts (``eval --protocol multi-gen``:
    M3's Table 5 is Multi (gen)); the others are not in the bundle.  ``measures``: the
    measures to add (:class:`~duplexeval.benchmarks._measures.Measures`; default none)."""
    out = Path(out)
    measures = measures or Measures()
    if judge is not None and judge.cache_path is None:
        judge = replace(judge, cache_path=out / JUDGE_CACHE)
    chosen = _chosen(benchmarks)
    safe_name(system.name, "system name")
    _check_out(out)
    _check_data(data)
    remove_stale_temporaries(out)  # a killed evaluation's half-written tables, report, eval.json
    keep = select or (lambda bench, cell: True)
    seconds = dict.fromkeys(("synthesis", "runs", "analysis", "tables"), 0.0)
    start = time.perf_counter()
    prepared = [_prepare(system, bench, cell, out, subset, data, measures, progress)
                for bench in chosen for cell in bench.cells if keep(bench, cell)]
    seconds["synthesis"] = time.perf_counter() - start
    _refuse_without_data(prepared)
    labels = {(p.bench.name, p.cell.name): p.label for p in prepared}
    done: dict[str, list[CellResult]] = {b.name: [] for b in chosen}
    bar = _Progress(system.name, prepared, progress)
    try:
        for item, result in zip(prepared, _run_cells(system, prepared, judge, executor, bar,
                                                     seconds, measures), strict=True):
            done[item.bench.name].append(result)
    finally:
        bar.close()
    start = time.perf_counter()
    tables = _write_bundle_tables(system, chosen, done, labels, out, subset, measures)
    ran = [r for b in chosen for r in done[b.name] if r.results is not None]
    if html and ran:
        _html(ran, out)
    manifest = EvalManifest(
        git_revision=git_revision(), benchmarks={b.name: b.version for b in chosen},
        system=_system_json(system), judge=_judge_json(judge),
        judge_cache=_cache_name(judge, out), tables=tables, files=_hashes(out, judge),
        cells=[_entry(b, r, out, subset, labels[(b.name, r.cell.name)])
               for b in chosen for r in done[b.name]],
        measures=list(measures.names), repeats=measures.repeats,
        counterfactual_replacement=measures.replacement)
    atomic_write_json(out / MANIFEST_FILE, manifest.model_dump(mode="json"))
    seconds["tables"] = time.perf_counter() - start
    return EvalResult(out, manifest, done, seconds)
