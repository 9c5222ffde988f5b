"""``duplexeval demo``: the main job on the bundled data.

1. Data: the bundled suites (:mod:`duplexeval.suites`) built offline or taken from the cache;
   their quick subsets by default, everything with ``--full``.
2. Annotation check (:func:`annotation_check`): each dataset's events re-annotated from its
   voiced audio (the audio the runs are fed) and compared with its events from the word
   alignments, per event kind.
3. Plans under the three protocols, with the model-seconds of the official per-event execution
   and of shared-prefix execution.
4. Runs of ``cascade``, ``reference`` (the human row) and ``silence`` (the floor) under
   multi-gen into ``runs/demo/`` (resumable).
5. Analysis (Silero VAD + Whisper base, cached: short system segments, and both channels in full
   on TURN_SHIFT samples), the M3 timing table and the content table (offline metrics; the
   judged ones need ``--judge-url``, as the table says) per suite, then every run in the M3
   Table 5 layout (:func:`duplexeval.report.paper_tables.table5_lines`).
6. The HTML report of every run, ``runs/demo/report/index.html`` (its path is printed): every
   event with its timeline, audio, transcripts (:mod:`duplexeval.report.html_report`).
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
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from duplexeval.audio import read_audio
from duplexeval.data.dialogue import Dataset
from duplexeval.data.locate import bundled_dataset, find_m3_toy
from duplexeval.data.validate import Need, load_dataset
from duplexeval.events import EventKind
from duplexeval.fileio import atomic_write_json
from duplexeval.plan.samples import EvalProtocol, PlanOptions, build_plan
from duplexeval.report.text import PLAN_HEADER, format_table, plan_row
from duplexeval.runs.directory import RunDir
from duplexeval.speech.activity import ActivityOptions, VadEngine, detect_activity

if TYPE_CHECKING:
    from duplexeval.results.model import Results

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
    no words) and compare with its shipped events (made from the word alignments).

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
        spans = {ch: detect_activity(np.ascontiguousarray(x[:, ch]), rate, options)
                 for ch in (0, 1)}
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


STAGES = ("synthesis", "annotation check", "planning", "runs", "analysis", "scoring", "report")
"""The demo's stages, in order, as timed in ``RUN_ROOT/demo_timing.json``."""


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
            self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start

    def line(self) -> str:
        """``Demo wall time: 312 s (synthesis 120 s, ...)``."""
        parts = ", ".join(f"{k} {v:.0f} s" for k, v in self.seconds.items())
        return f"Demo wall time: {sum(self.seconds.values()):.0f} s ({parts})"


def run_demo(extra: list[Path], runs_root: Path = Path("runs/demo"), full: bool = False,
             suites: list[str] | None = None, limit: int | None = None,
             flexi: bool | None = None, variants: bool = False) -> int:
    """The demo: the suites (quick subsets unless ``full``), their annotation check and plans,
    runs of the demo systems under multi-gen and the M3 timing table; returns the exit code.
    The wall time of each stage (:data:`STAGES`) is printed last and written to
    ``runs_root/demo_timing.json`` (seconds, with the CPU count and load average).
    ``flexi`` (default: when no suites are named) adds the FLEXI stage (:func:`_flexi_stage`)."""
    timer = StageTimer()
    flexi = suites is None if flexi is None else flexi
    if find_m3_toy() is None:
        print("note: the official M3 toy sets were not found (set DUPLEXEVAL_M3_TOY); "
              "using the bundled data only", file=sys.stderr)
    with timer("synthesis"):
        datasets = demo_suites(full, suites, limit) + [DemoDataset(p.name, p)
                                                       for p in extra]
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
            for protocol in EvalProtocol:
                plan = build_plan(dataset,
                                  PlanOptions(protocol=protocol, channels=demo.channels))
                rows.append(plan_row(demo.name, plan))
        print("What a run executes (per-event = official cost; shared prefix = duplexeval)")
        print("\n".join(format_table(PLAN_HEADER, rows)))
    runs: list[tuple[str, str, Path]] = []
    with timer("runs"):
        print("\n".join(_run_systems(datasets, runs_root, runs, variants)))
    content = None if full else tuple(d.name for d in datasets
                                      if d.suite in DEMO_CONTENT_SUITES)
    print("\n".join(_score_runs(runs, timer, content)))
    if flexi:
        print("\n".join(_flexi_stage(runs_root, timer, full)))
    with timer("report"):
        print("\n".join(_write_report(runs, runs_root)))
    print()
    print(timer.line())
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    runs_root.mkdir(parents=True, exist_ok=True)
    atomic_write_json(runs_root / "demo_timing.json", {
        "seconds": {k: round(v, 2) for k, v in timer.seconds.items()},
        "total_seconds": round(sum(timer.seconds.values()), 2),
        "cpu_count": os.cpu_count(), "loadavg_at_end": list(load) if load else None,
        "full": full, "suites": [d.name for d in datasets]})
    return 0


@dataclass(frozen=True)
class DemoSystem:
    """One row of the demo table: a label, a system with its arguments, and the dataset domains
    it runs on (``None``: every dataset)."""

    label: str
    system: str
    args: tuple[tuple[str, str], ...] = ()
    domains: tuple[str, ...] | None = None
    language: str | None = None
    """Only datasets of this language (``None``: every language)."""
    variant: bool = False
    """A variant row run only with ``--variants`` (the default demo stays under 10 minutes)."""


DEMO_SYSTEMS: tuple[DemoSystem, ...] = (
    DemoSystem("cascade", "cascade"),
    DemoSystem("cascade-eot0.2", "cascade", (("eot_silence", "0.2"),), ("chat",), "en", True),
    DemoSystem("cascade-half", "cascade", (("half_duplex", "1"),), ("chat",), "en", True),
    DemoSystem("reference", "reference"),
    DemoSystem("silence", "silence"),
)
"""The rows of the demo table: the CPU cascade (the system measured; end of turn after 0.6 s
of silence), on English chat also an eager one (end of turn after 0.2 s: it answers sooner and
talks into the longer held pauses) and a half-duplex one (it does not listen while it answers:
barge-ins no longer stop it), the human reference and the floor."""


def _slug(name: str) -> str:
    """A folder name: runs of other characters become one hyphen."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", name).strip("-")


def _run_systems(datasets: list[DemoDataset], runs_root: Path,
                 runs: list[tuple[str, str, Path]], variants: bool = False) -> list[str]:
    """Run the demo systems on each dataset under multi-gen, appending (dataset, system, run
    dir) to ``runs``; returns the lines to print."""
    from duplexeval.runs import execute_run
    from duplexeval.systems.registry import load_system

    lines = ["", "Runs (multi-gen)"]
    for demo in datasets:
        dataset, _ = load_dataset(demo.root, audio=Need.REQUIRE)
        plan = build_plan(dataset, PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                               channels=demo.channels))
        for row in DEMO_SYSTEMS:
            if (row.domains is not None and dataset.domain not in row.domains) or (
                    row.language is not None and dataset.language != row.language) or (
                    row.variant and not variants):
                continue
            system = load_system(row.system, dict(row.args))
            out = runs_root / f"{row.label}-{_slug(demo.name)}"
            result = execute_run(system, dataset, plan, out, seed=0)
            lines.append(f"  {out}: {result.samples} samples ok, {result.failed} failed, "
                         f"{result.frames_stepped} frames stepped now")
            runs.append((demo.name, row.label, out))
    lines.append("")
    lines.append("Each run directory holds its configuration, one stereo wav per sample (ch0 "
                 "user as fed, ch1 system) with its record, and the M3 metadata "
                 "(duplexeval.runs.open_run reads it; ARCHITECTURE.md lists its files).")
    return lines


def _write_report(runs: list[tuple[str, str, Path]], runs_root: Path) -> list[str]:
    """The HTML report of every demo run into ``runs_root/report``; the lines to print."""
    from duplexeval.report.html_report import html_report_of

    if not runs:
        return []
    index = html_report_of([out for _, _, out in runs], runs_root / "report")
    return ["", "HTML report (tables, figures, every event with its timeline, audio and "
            f"transcripts; open it in a browser): {index}"]


DEMO_CONTENT_SUITES = ("m3-qa-en",)
"""Suites whose demo runs get the content transcripts (full ASR of both channels on TURN_SHIFT
samples) unless ``--full``: English QA, where the offline content metrics (QA F1 / EM) mean
most, and cheap to transcribe.  The other suites' content costs more ASR time than the demo's
10-minute budget allows (``perf/content_analysis_cost.py``); their content rows say so and
``duplexeval score RUN_DIR`` computes it."""


def _score_runs(runs: list[tuple[str, str, Path]], timer: StageTimer | None = None,
                content_suites: tuple[str, ...] | None = DEMO_CONTENT_SUITES) -> list[str]:
    """Analyse and score every demo run; the M3 timing and content tables, one block per
    dataset.  The analysis (:class:`~duplexeval.analysis.pipeline.AnalysisOptions`: Whisper on
    the short system segments the timing metrics read, and, for the datasets in
    ``content_suites`` (``None``: all), on both channels of TURN_SHIFT samples for the content
    metrics) is reused when current."""
    from duplexeval.analysis.pipeline import AnalysisOptions, ensure_analysis
    from duplexeval.metrics.score_run import score_run_dir
    from duplexeval.report.content import content_table_lines
    from duplexeval.report.paper_tables import table5_lines
    from duplexeval.report.text import timing_table_lines

    timer = timer or StageTimer()
    scored: list[tuple[str, Results]] = []
    lines = ["", "M3 timing and content (mean ± 95 % CI half-width; † fewer than 20 events; "
             "analysis: Silero VAD + Whisper base; content on TURN_SHIFT events"
             + ("" if content_suites is None else
                f", transcribed in full for {', '.join(content_suites) or 'no dataset'} only")
             + ")"]

    def options(dataset: str) -> AnalysisOptions:
        if content_suites is None or dataset in content_suites:
            return AnalysisOptions()
        return AnalysisOptions(content_event_types=())

    with timer("analysis"):
        for dataset, _, out in tqdm(runs, desc="analysis", unit="run", file=sys.stderr):
            ensure_analysis(out, options(dataset), progress=False)
    with timer("scoring"):
        for dataset in dict.fromkeys(d for d, _, _ in runs):
            mine = [(system, out) for d, system, out in runs if d == dataset]
            rows = [(system, score_run_dir(out, options=options(dataset), progress=False)[0])
                    for system, out in mine]
            lines += ["", f"  {dataset}"]
            lines += [f"  {line}" for line in timing_table_lines(rows)]
            lines += [""] + [f"  {line}" for line in content_table_lines(rows)]
            scored += rows
    lines += ["", "M3 Table 5 layout (`duplexeval report RUN_DIR... -o OUT_DIR` writes it as "
              "Markdown, CSV and LaTeX)", "", *table5_lines(scored)]
    if runs:
        run = RunDir(runs[0][2])
        files = run.scores()
        lines += ["", "Per-event values, aggregates and settings: RUN_DIR/"
                  f"{files.root.relative_to(run.root).as_posix()}/{{{files.per_event.name},{files.aggregate.name},"
                  f"{files.results.name},{files.content_offline.name}}}; judged content "
                  f"(relevance, consistency, QA): duplexeval score RUN_DIR --judge-url URL "
                  f"--judge-model MODEL"]
    return lines


FLEXI_SYSTEMS = ("cascade", "reference", "silence")
"""The systems of the demo's FLEXI stage."""


def _flexi_stage(runs_root: Path, timer: StageTimer, full: bool,
                 systems: tuple[str, ...] = FLEXI_SYSTEMS) -> list[str]:
    """``flexi-en`` (its quick subset unless ``full``: the first two items of each scenario):
    the demo systems under multi-gen (turn taking, pause handling, model interrupt and
    backchannel) and multi-ref (user interrupt and backchannel, over the teacher-forced
    reference turn), scored with the ``flexi`` variant; the FLEXI tables."""
    from duplexeval.analysis.pipeline import AnalysisOptions
    from duplexeval.metrics.score_run import score_run_dir
    from duplexeval.report.text import FLEXI_COLUMNS, timing_table_lines
    from duplexeval.runs import execute_run
    from duplexeval.suites import build_suite
    from duplexeval.systems.registry import load_system

    with timer("synthesis"):
        root = build_suite("flexi-en", limit=None if full else "quick")
    dataset, _ = load_dataset(root, audio=Need.REQUIRE)
    lines = ["", f"FLEXI (flexi-en{'' if full else ' quick'}: {len(dataset.dialogues)} items; "
             "the flexi variant, paper conventions; † fewer than 20 events)"]
    for protocol, columns in ((EvalProtocol.MULTI_GEN, FLEXI_COLUMNS[:4] + FLEXI_COLUMNS[6:7]
                               + FLEXI_COLUMNS[9:]),
                              (EvalProtocol.MULTI_REF, FLEXI_COLUMNS[4:6] + FLEXI_COLUMNS[7:9])):
        plan = build_plan(dataset, PlanOptions(protocol=protocol))
        rows = []
        for name in tqdm(systems, desc=f"flexi {protocol.value}", unit="system",
                         file=sys.stderr):
            out = runs_root / f"{name}-flexi-en-{protocol.value}"
            with timer("runs"):
                execute_run(load_system(name, {}), dataset, plan, out, seed=0)
            with timer("analysis"):
                results, _ = score_run_dir(out, variant="flexi", progress=False,
                                           options=AnalysisOptions(content_event_types=()))
            rows.append((name, results))
        lines += ["", f"  {protocol.value}"]
        lines += [f"  {line}" for line in timing_table_lines(rows, columns=columns)]
    return lines
