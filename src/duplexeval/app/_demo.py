"""``duplexeval demo``: the main job on the bundled data, which is ``duplexeval eval``.

1. Data: the bundled suites (:mod:`duplexeval.suites`) built offline or taken from the cache;
   their quick subsets by default, everything with ``--full``.
2. Annotation check (:func:`annotation_check`): each dataset's events re-annotated from its
   voiced audio (the audio the runs are fed) and compared with its events from the word
   alignments, per event kind.
3. Plans under the three protocols, with the model-seconds of the official per-event execution
   and of shared-prefix execution.
4. ``eval`` (:func:`duplexeval.benchmarks._evaluate`) of the bundled benchmarks
   (:data:`DEMO_BENCHMARKS`: M3 under Multi (gen), its Table 5; FLEXI under both its protocols)
   on each built-in system (:data:`DEMO_SYSTEMS`: ``cascade``, ``reference`` = the human row,
   ``silence`` = the floor), one verifiable bundle per system in ``runs/demo/SYSTEM/``:
   runs (resumable), analysis (Silero VAD + Whisper base, cached), scores, tables; two
   systems at a time on the shared process pool (:data:`ROWS_SIDE_BY_SIDE`).
5. Each benchmark's tables over every system together in ``runs/demo/tables/BENCH/``, printed.
6. The HTML report of every cell, ``runs/demo/report/index.html`` (its path is printed): every
   event with its timeline, audio, transcripts (:mod:`duplexeval.report._html_report`).
7. The wall time of each stage (printed, and ``runs/demo/demo_timing.json``).

The official M3 toy data is third-party and not shipped: it is looked up in
``$DUPLEXEVAL_M3_TOY`` or a ``shared/m3_toy`` folder beside the working directory or its
parents.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from tqdm import tqdm

from duplexeval._audio import read_audio
from duplexeval._fileio import atomic_write_json
from duplexeval.benchmarks._base import Benchmark, Cell, SystemCell
from duplexeval.data._dialogue import Dataset
from duplexeval.data._locate import bundled_dataset, find_m3_toy
from duplexeval.data._validate import Need, load_dataset
from duplexeval.events import EventKind
from duplexeval.plan._samples import EvalProtocol, PlanOptions, build_plan
from duplexeval.registry import Registry
from duplexeval.report._text import PLAN_HEADER, format_table, plan_row
from duplexeval.runs import ProcessExecutor
from duplexeval.runs._pool_executor import default_workers
from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity_many
from duplexeval.systems._registry import load_system

__all__ = ["AnnotationCheck", "DemoDataset", "annotation_check", "default_datasets",
           "demo_suites", "run_demo"]


@dataclass(frozen=True)
class DemoDataset:
    """A dataset folder and the user channels its plans evaluate (``None``: the dataset's)."""

    name: str
    root: Path
    channels: tuple[int, ...] | None = None
    suite: str = ""
    """The bundled suite it comes from ('' for other datasets)."""


def default_datasets() -> list[DemoDataset]:
    """The demo's datasets: bundled ones, plus the M3 toy sets when present."""
    out = [DemoDataset("sample-en", bundled_dataset("sample-en"))]
    toy = find_m3_toy()
    if toy is not None:
        # the official toy sets have no dataset.json: their QA set asks from channel 1
        out.append(DemoDataset("m3-toy-ja-chat", toy / "chat" / "magicdata_toy"))
        out.append(DemoDataset("m3-toy-ja-task", toy / "task" / "topiocqa_ja_toy", (1,)))
    return out


ANNOTATION_TOLERANCE = 0.1
"""Seconds: an event annotated from audio recovers a reference event of the same kind and
channel when both its start and its end are within this of the reference's."""


@dataclass(frozen=True)
class AnnotationCheck:
    """Events annotated from a dataset's voiced audio vs. its events from the word alignments.

    ``recovered[kind]`` = (reference events of ``kind`` recovered, reference events of
    ``kind``); ``spurious[kind]`` = events annotated from the audio that match no reference
    event of their kind (each audio event matches at most one reference event).
    """

    recovered: dict[str, tuple[int, int]]
    spurious: dict[str, int]

    def line(self) -> str:
        """One line: per kind ``KIND found/total`` and the spurious count."""
        parts = [f"{kind} {found}/{total}" for kind, (found, total) in self.recovered.items()]
        extra = sum(self.spurious.values())
        return (", ".join(parts) or "no events") + f"; {extra} spurious"


def annotation_check(dataset: Dataset, tolerance: float = ANNOTATION_TOLERANCE,
                     activity: ActivityOptions | None = None) -> AnnotationCheck:
    """Annotate every dialogue's stereo audio from voice activity (Silero, as the analysis;
    no words; its two channels on two threads where there are two CPUs) and compare with its
    shipped events (made from the word alignments).

    Matching is greedy in reference order: a reference event is recovered by the first unused
    audio event of the same kind and channel whose start and end are both within
    ``tolerance`` seconds (inclusive).  Dialogues without audio are skipped.
    """
    from duplexeval.events import annotate_spans

    options = activity or ActivityOptions(engine=VadEngine.SILERO)
    found: dict[str, list[int]] = {}
    spurious: dict[str, int] = {}
    for d in dataset.dialogues:
        if d.audio is None:
            continue
        x, rate = read_audio(d.audio.path)
        both = detect_activity_many([(np.ascontiguousarray(x[:, ch]), rate) for ch in (0, 1)],
                                    options, threads=default_workers())
        spans = dict(zip((0, 1), both, strict=True))
        derived = list(annotate_spans(spans))
        used = [False] * len(derived)
        for ref in d.events:
            counts = found.setdefault(ref.kind.value, [0, 0])
            counts[1] += 1
            for i, e in enumerate(derived):
                if (not used[i] and e.kind == ref.kind and e.channel == ref.channel
                        and abs(e.start - ref.start) <= tolerance
                        and abs(e.end - ref.end) <= tolerance):
                    used[i] = True
                    counts[0] += 1
                    break
        for e, hit in zip(derived, used, strict=True):
            if not hit:
                spurious[e.kind.value] = spurious.get(e.kind.value, 0) + 1
    order = [k.value for k in EventKind]
    return AnnotationCheck({k: (found[k][0], found[k][1]) for k in order if k in found},
                           {k: spurious[k] for k in order if k in spurious})


def demo_suites(full: bool, names: list[str] | None = None,
                limit: int | None = None) -> list[DemoDataset]:
    """Build (or reuse) the bundled suites: their quick subsets (the smallest prefix of
    dialogues with :data:`~duplexeval.suites.QUICK_MIN_SHIFTS` smooth-turn-taking samples)
    unless ``full``, or their first ``limit`` dialogues.  Without ``names``: the suites marked
    ``in_demo``, the toy-based suite only when the toy data is found (its first dialogue unless
    ``full``)."""
    from duplexeval.suites import SUITES, build_suite

    chosen = names if names is not None else [
        n for n, s in SUITES.all().items()
        if s.in_demo and (not s.from_toy or find_m3_toy() is not None)]
    out = []
    for name in chosen:
        suite = SUITES.get(name)
        subset: int | str | None = (None if full else limit if limit is not None
                                    else 1 if suite.from_toy else "quick")
        root = build_suite(name, limit=subset)
        label = name if subset is None else f"{name} (quick)" if subset == "quick" \
            else f"{name} (first {subset})"
        out.append(DemoDataset(label, root, suite=name))
    return out


STAGES = ("synthesis", "annotation check", "planning", "runs", "analysis", "tables", "report")
"""The demo's stages, in order, as timed in ``RUN_ROOT/demo_timing.json`` (``runs``,
``analysis`` and ``tables`` are the evaluations' own, :attr:`EvalResult.seconds`; with rows
evaluated side by side, their shares of the evaluations' wall time: :func:`_apportion`)."""


class StageTimer:
    """Wall-clock seconds per named stage (``with timer("runs"): ...``; repeated use adds)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - start)

    def add(self, stage: str, seconds: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds

    def line(self) -> str:
        """``Demo wall time: 312 s (synthesis 120 s, ...)``."""
        parts = ", ".join(f"{k} {v:.0f} s" for k, v in self.seconds.items())
        return f"Demo wall time: {sum(self.seconds.values()):.0f} s ({parts})"


@dataclass(frozen=True)
class DemoSystem:
    """One row of the demo tables: a label, a system with its arguments, and the suites'
    domains and language it runs on (``None``: every suite)."""

    label: str
    system: str
    args: tuple[tuple[str, str], ...] = ()
    domains: tuple[str, ...] | None = None
    language: str | None = None
    """Only suites of this language (``None``: every language)."""
    variant: bool = False
    """A variant row run only with ``--variants`` (the default demo stays in its budget)."""

    def runs_on(self, suite: str) -> bool:
        """Whether this row evaluates the cells of the bundled suite ``suite``."""
        from duplexeval.suites import SUITES

        found = SUITES.find(suite)
        if found is None:
            return self.domains is None and self.language is None
        return ((self.domains is None or found.domain in self.domains)
                and (self.language is None or found.language == self.language))


DEMO_SYSTEMS: tuple[DemoSystem, ...] = (
    DemoSystem("cascade", "cascade"),
    DemoSystem("cascade-eot0.2", "cascade", (("eot_silence", "0.2"),), ("chat",), "en", True),
    DemoSystem("cascade-half", "cascade", (("half_duplex", "1"),), ("chat",), "en", True),
    DemoSystem("reference", "reference"),
    DemoSystem("silence", "silence"),
)
"""The rows of the demo tables: the CPU cascade (the system measured; end of turn after 0.6 s
of silence), on English chat also an eager one (end of turn after 0.2 s: it answers sooner and
talks into the longer held pauses) and a half-duplex one (it does not listen while it answers:
barge-ins no longer stop it), the human reference and the floor."""

DEMO_BENCHMARKS = ("m3", "flexi")
"""The benchmarks the demo evaluates (``mtr`` is one ``duplexeval eval mtr`` away: its quick
subset is eleven 10-round dialogues, more than the demo's budget)."""

DEMO_PROTOCOLS: dict[str, tuple[EvalProtocol, ...]] = {
    "m3": (EvalProtocol.MULTI_GEN,),
    "flexi": (EvalProtocol.MULTI_GEN, EvalProtocol.MULTI_REF),
}
"""The protocols of each benchmark's cells in the demo: M3's Table 5 is Multi (gen) (its
Table 6, every protocol, is ``duplexeval eval m3``); FLEXI's scenarios need both."""


def _slug(name: str) -> str:
    """A folder name: runs of other characters become one hyphen."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", name).strip("-")


def _selector(row: DemoSystem, suites: list[str] | None,
              benchmarks: tuple[str, ...]) -> Callable[[Benchmark, Cell], bool]:
    def keep(bench: Benchmark, cell: Cell) -> bool:
        if cell.protocol not in DEMO_PROTOCOLS.get(bench.name, tuple(EvalProtocol)):
            return False
        if suites is not None and bench.name == "m3" and cell.suite not in suites:
            return False
        return row.runs_on(cell.suite)
    return keep


def run_demo(extra: list[Path], runs_root: Path = Path("runs/demo"), full: bool = False,
             suites: list[str] | None = None, limit: int | None = None,
             flexi: bool | None = None, variants: bool = False,
             jobs: int | None = None) -> int:
    """The demo (see the module docstring): ``duplexeval eval`` of the bundled benchmarks on
    the built-in systems, each system's bundle in ``runs_root/SYSTEM/``, then the tables of
    all systems together in ``runs_root/tables/`` and the HTML report; returns the exit code.
    ``suites`` names the M3 suites (default: those marked ``in_demo``); ``limit`` takes their
    first dialogues instead of the quick subsets; ``flexi`` (default: when no suites are
    named) adds FLEXI.  ``extra`` dataset folders are evaluated as M3 Multi (gen) cells.  The
    wall time of each stage (:data:`STAGES`) is printed last and written to
    ``runs_root/demo_timing.json`` (seconds, with the CPU count and load average).  ``jobs``:
    the worker processes the runs' units are spread over
    (:class:`~duplexeval.runs.ProcessExecutor`; default one per CPU; 1: in this process), the
    outputs the same whatever the count (perf/demo_runs.py: every cell of every row)."""
    from duplexeval.benchmarks import BENCHMARKS

    for root in extra:  # a bad folder is refused before any stage prints or writes
        load_dataset(root, audio=Need.REQUIRE)
    timer = StageTimer()
    for stage in STAGES:
        timer.add(stage, 0.0)
    flexi = suites is None if flexi is None else flexi
    if find_m3_toy() is None:
        print("note: the official M3 toy sets were not found (set DUPLEXEVAL_M3_TOY); "
              "using the bundled data only", file=sys.stderr)
    with timer("synthesis"):
        datasets = demo_suites(full, suites, limit)
        if flexi:
            datasets += demo_suites(full, ["flexi-en"], limit)
        datasets += [DemoDataset(p.name, p) for p in extra]
    _print_checks(datasets, timer)
    subset: int | str | None = None if full else limit if limit is not None else "quick"
    chosen = tuple(b for b in DEMO_BENCHMARKS if b != "flexi" or flexi)
    m3_suites = [d.suite for d in datasets if d.suite and d.suite != "flexi-en"]
    cells = _evaluate_systems(chosen, m3_suites, runs_root, subset, extra, limit, variants,
                              timer, default_workers() if jobs is None else jobs)
    with timer("tables"):
        lines = _write_tables(cells, runs_root, BENCHMARKS)
    print("\n".join(lines))
    with timer("report"):
        print("\n".join(_write_report([c.run_dir for cs in cells.values() for _, c in cs
                                       if c.results is not None], runs_root)))
    print()
    print(timer.line())
    _write_timing(timer, runs_root, full, datasets)
    return 0


ROWS_SIDE_BY_SIDE = 2
"""Demo rows evaluated at once on a process pool (threads of this process sharing the pool):
the cascade's runs keep the cores busy, while the reference row's analysis and each row's
tables leave part of them idle (a single-threaded voice activity step, the end of a cell's
Whisper windows, matplotlib); side by side they fill each other's gaps."""


def _evaluate_systems(chosen: tuple[str, ...], m3_suites: list[str], runs_root: Path,
                      subset: int | str | None, extra: list[Path], limit: int | None,
                      variants: bool, timer: StageTimer, jobs: int,
                      ) -> dict[str, list[SystemCell]]:
    """``eval`` of each demo system into ``runs_root/SYSTEM/`` (and of each ``extra``
    dataset), the runs' units in one pool of ``jobs`` worker processes (1: in this process,
    one row after the other); every benchmark's cells of every system, in row order.

    On a pool, :data:`ROWS_SIDE_BY_SIDE` rows are evaluated at once, so the stages of
    different rows overlap in time; each stage is then given its share of the evaluations'
    wall time in proportion to the rows' own seconds in it (:func:`_apportion`), so that the
    stages still add up to the demo's wall time.  A row's files do not depend on what runs
    beside it."""
    rows = [row for row in DEMO_SYSTEMS if not row.variant or variants]

    def one(row: DemoSystem, pool: ProcessExecutor | None) -> RowResult:
        return _evaluate_row(row, chosen, m3_suites, runs_root, subset, extra, limit, pool)

    start = time.perf_counter()
    if jobs > 1:
        with ProcessExecutor(jobs) as pool:
            done = side_by_side(rows, lambda row: one(row, pool), ROWS_SIDE_BY_SIDE)
    else:
        done = [one(row, None) for row in rows]
    for stage, seconds in _apportion([r.seconds for r in done],
                                     time.perf_counter() - start).items():
        timer.add(stage, seconds)
    cells: dict[str, list[SystemCell]] = {b: [] for b in chosen}
    for result in done:
        for bench, mine in result.cells.items():
            cells.setdefault(bench, []).extend(mine)
    return cells


A = TypeVar("A")
R = TypeVar("R")


def side_by_side(items: Sequence[A], work: Callable[[A], R], lanes: int) -> list[R]:
    """``[work(item) for item in items]``, up to ``lanes`` items at once on daemon threads
    that take the items in order.  The first exception is raised here as soon as it happens
    (a lane stops taking items once one has failed; a later failure of the other lane is not
    reported).  The threads are daemons, so an interrupted caller (Ctrl-C reaches this thread
    only) does not wait for a row's remaining cells: the pool it leaves refuses their runs
    (:class:`~duplexeval.runs.ProcessExecutor`), the interpreter waits at most for an
    analysis in progress, every file is written atomically, and a resumed demo finishes the
    row (measured: exit 3.8 s after SIGINT, then the resumed demo completed)."""
    results: list[R | None] = [None] * len(items)
    errors: list[BaseException] = []
    queue = iter(enumerate(items))
    lock = threading.Lock()

    def lane() -> None:
        while not errors:
            with lock:
                item = next(queue, None)
            if item is None:
                return
            try:
                results[item[0]] = work(item[1])
            except BaseException as exc:  # raised in the calling thread
                errors.append(exc)
                return

    threads = [threading.Thread(target=lane, name=f"demo-row-{k}", daemon=True)
               for k in range(max(1, min(lanes, len(items))))]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads) and not errors:
        for thread in threads:
            thread.join(timeout=0.2)
    if errors:
        raise errors[0]
    return [r for r in results if r is not None]


@dataclass(frozen=True)
class RowResult:
    """One demo row's cells per benchmark (with the row's label) and its stage seconds."""

    cells: dict[str, list[SystemCell]]
    seconds: dict[str, float]


def _apportion(rows: list[dict[str, float]], wall: float) -> dict[str, float]:
    """``wall`` seconds split over the stages in proportion to the rows' summed seconds per
    stage (rows one after the other: exactly those sums, up to the time between rows)."""
    total: dict[str, float] = {}
    for seconds in rows:
        for stage, value in seconds.items():
            total[stage] = total.get(stage, 0.0) + value
    spent = sum(total.values())
    if spent <= 0:
        return dict.fromkeys(total, 0.0)
    return {stage: wall * value / spent for stage, value in total.items()}


def _evaluate_row(row: DemoSystem, chosen: tuple[str, ...], m3_suites: list[str],
                  runs_root: Path, subset: int | str | None, extra: list[Path],
                  limit: int | None, pool: ProcessExecutor | None) -> RowResult:
    """``eval`` of one demo row: its cells per benchmark and its seconds per stage."""
    from duplexeval.benchmarks import evaluate

    system = load_system(row.system, dict(row.args))
    results = [evaluate(system, list(chosen), runs_root / _slug(row.label), subset,
                        select=_selector(row, m3_suites, chosen), executor=pool)]
    results += [evaluate(system, [_extra_benchmark(path)],
                         runs_root / _slug(row.label) / "data" / _slug(path.name),
                         limit, data=path, executor=pool) for path in extra]
    seconds: dict[str, float] = {}
    cells: dict[str, list[SystemCell]] = {}
    for result in results:
        for stage, value in result.seconds.items():
            seconds[stage] = seconds.get(stage, 0.0) + value
        for bench, mine in result.cells.items():
            cells.setdefault(bench, []).extend((row.label, r) for r in mine)
    return RowResult(cells, seconds)


def _write_timing(timer: StageTimer, runs_root: Path, full: bool,
                  datasets: list[DemoDataset]) -> None:
    """``runs_root/demo_timing.json``: seconds per stage, the CPU count and load average."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    runs_root.mkdir(parents=True, exist_ok=True)
    atomic_write_json(runs_root / "demo_timing.json", {
        "seconds": {k: round(v, 2) for k, v in timer.seconds.items()},
        "total_seconds": round(sum(timer.seconds.values()), 2),
        "cpu_count": os.cpu_count(), "loadavg_at_end": list(load) if load else None,
        "full": full, "suites": [d.name for d in datasets]})


def _extra_benchmark(path: Path) -> Benchmark:
    """An M3 Multi (gen) evaluation of a dataset folder the user gave (``demo --data``)."""
    from duplexeval.benchmarks._m3 import M3

    return Benchmark(name="m3", version=M3.version, title=f"M3 on {path.name}",
                     seed=M3.seed, cells=(Cell(path.name, EvalProtocol.MULTI_GEN, "m3"),),
                     write_tables=M3.write_tables, notes={"data": f"the dataset {path}"})


def _print_checks(datasets: list[DemoDataset], timer: StageTimer) -> None:
    """The annotation check and the plans' costs of every dataset."""
    with timer("annotation check"):
        print(f"Annotation check: events annotated from each dataset's voiced audio (Silero "
              f"VAD, no words) vs. its events from the word alignments; recovered = same kind "
              f"and channel, start and end within {ANNOTATION_TOLERANCE * 1000:.0f} ms")
        for demo in tqdm(datasets, desc="annotation check", unit="dataset", file=sys.stderr):
            dataset, _ = load_dataset(demo.root, audio=Need.REQUIRE)
            print(f"  {demo.name}: {annotation_check(dataset).line()}")
        print()
    with timer("planning"):
        rows = []
        for demo in tqdm(datasets, desc="planning", unit="dataset", file=sys.stderr):
            dataset, _ = load_dataset(demo.root)
            for protocol in (p for p in EvalProtocol if p is not EvalProtocol.INTERACTIVE):
                plan = build_plan(dataset,
                                  PlanOptions(protocol=protocol, channels=demo.channels))
                rows.append(plan_row(demo.name, plan))
        print("What a run executes (per-event = official cost; shared prefix = duplexeval)")
        print("\n".join(format_table(PLAN_HEADER, rows)))


def _write_tables(cells: dict[str, list[SystemCell]], runs_root: Path,
                  benchmarks: Registry[Benchmark]) -> list[str]:
    """Every benchmark's tables over all the demo's systems into ``runs_root/tables/BENCH/``;
    the lines to print (the Markdown tables)."""
    lines = []
    for name, mine in cells.items():
        if not mine:
            continue
        bench = benchmarks.get(name)
        folder = runs_root / "tables" / name
        folder.mkdir(parents=True, exist_ok=True)
        written = bench.write_tables(mine, folder)
        lines += ["", f"{bench.title} (v{bench.version}), every system: {folder}"]
        for label, cell in mine:
            if cell.skipped is not None:
                lines.append(f"  {label} {cell.cell.name}: not run: {cell.skipped}")
        for path in written:
            if path.suffix == ".md":
                lines += ["", *path.read_text(encoding="utf-8").splitlines()]
    lines += ["", "Each system's bundle (runs, analysis, scores, tables, eval.json) is "
              "runs_root/SYSTEM/; `duplexeval verify` recomputes it; `duplexeval eval m3 "
              "--system NAME -o OUT` evaluates every protocol; judged content "
              "(relevance, consistency, QA): add --judge-url URL --judge-model MODEL"]
    return lines


def _write_report(runs: list[Path], runs_root: Path) -> list[str]:
    """The HTML report of every demo run into ``runs_root/report``; the lines to print."""
    from duplexeval.report._html_report import html_report_of

    if not runs:
        return []
    index = html_report_of(runs, runs_root / "report")
    return ["", "HTML report (tables, figures, every event with its timeline, audio and "
            f"transcripts; open it in a browser): {index}"]
