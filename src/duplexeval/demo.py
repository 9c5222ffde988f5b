"""``duplexeval demo``: the main job on the bundled data.

1. Annotation check: the events of the annotated sources (the bundled ``sample-en`` and, when
   found, the official M3 toy sets) re-derived from their word alignments.
2. Data: the bundled suites (:mod:`duplexeval.suites`) built offline or taken from the cache;
   their quick subsets by default, everything with ``--full``.
3. Plans under the three protocols, with the model-seconds of the official per-event execution
   and of shared-prefix execution.
4. Runs of ``cascade``, ``reference`` (the human row) and ``silence`` (the floor) under
   multi-gen into ``runs/demo/`` (resumable).
5. Analysis (Silero VAD + Whisper base, cached) and the M3 timing table per suite.

The official M3 toy data is third-party and not shipped: it is looked up in
``$DUPLEXEVAL_M3_TOY`` or a ``shared/m3_toy`` folder beside the working directory or its
parents.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from .data.annotate import annotate_alignment_files
from .data.dialogue import Dataset
from .data.locate import bundled_dataset, find_m3_toy
from .data.m3 import ALIGN_DIR
from .data.validate import load_dataset
from .protocols import PlanOptions, Protocol, build_plan
from .report.text import PLAN_HEADER, format_table, plan_row

__all__ = ["DemoDataset", "default_datasets", "demo_suites", "run_demo"]


@dataclass(frozen=True)
class DemoDataset:
    """A dataset folder and the user channels its plans evaluate."""

    name: str
    root: Path
    channels: tuple[int, ...]


def default_datasets() -> list[DemoDataset]:
    """The demo's datasets: bundled ones, plus the M3 toy sets when present."""
    out = [DemoDataset("sample-en", bundled_dataset("sample-en"), (0, 1))]
    toy = find_m3_toy()
    if toy is not None:
        out.append(DemoDataset("m3-toy-ja-chat", toy / "chat" / "magicdata_toy", (0, 1)))
        out.append(DemoDataset("m3-toy-ja-task", toy / "task" / "topiocqa_ja_toy", (1,)))
    return out


def _annotation_check(dataset: Dataset) -> tuple[int, int]:
    """(events reproduced from the alignments, events shipped)."""
    files = sorted((dataset.root / ALIGN_DIR).glob("*.txt"))
    derived = {d.id: set(d.events) for d in annotate_alignment_files(files)}
    shipped = sum(len(d.events) for d in dataset.dialogues)
    same = sum(len(set(d.events) & derived.get(d.id, set())) for d in dataset.dialogues)
    return same, shipped


def demo_suites(full: bool, names: list[str] | None = None,
                limit: int | None = None) -> list[DemoDataset]:
    """Build (or reuse) the bundled suites: their quick subsets unless ``full``.  The toy-based
    suite is included when the toy data is found."""
    from .suites import SUITES, build_suite

    chosen = names if names is not None else [
        n for n, s in SUITES.items() if not s.from_toy or find_m3_toy() is not None]
    out = []
    for name in chosen:
        suite = SUITES[name]
        n = None if full else (limit or suite.quick)
        root = build_suite(name, limit=n)
        label = name if n is None else f"{name} (first {n})"
        out.append(DemoDataset(label, root, suite.channels))
    return out


def run_demo(extra: list[Path], runs_root: Path = Path("runs/demo"), full: bool = False,
             suites: list[str] | None = None, limit: int | None = None) -> int:
    """The demo: annotation check and plans, the suites (quick subsets unless ``full``) run
    under multi-gen by the demo systems, and the M3 timing table; returns the exit code."""
    sources = default_datasets()
    if find_m3_toy() is None:
        print("note: the official M3 toy sets were not found (set DUPLEXEVAL_M3_TOY); "
              "using the bundled data only", file=sys.stderr)
    checks = []
    for demo in sources:
        dataset, _ = load_dataset(demo.root)
        same, shipped = _annotation_check(dataset)
        checks.append(f"{demo.name}: {len(dataset)} dialogue(s), annotation from word "
                      f"alignments reproduces {same}/{shipped} events")
    print("Annotation check")
    for line in checks:
        print(f"  {line}")
    print()
    datasets = demo_suites(full, suites, limit) + [DemoDataset(p.name, p, (0, 1))
                                                   for p in extra]
    rows = []
    for demo in tqdm(datasets, desc="planning", unit="dataset", file=sys.stderr):
        dataset, _ = load_dataset(demo.root)
        for protocol in Protocol:
            plan = build_plan(dataset.dialogues,
                              PlanOptions(protocol=protocol, channels=demo.channels))
            rows.append(plan_row(demo.name, plan))
    print("What a run executes (per-event = official cost; shared prefix = duplexeval)")
    print("\n".join(format_table(PLAN_HEADER, rows)))
    runs: list[tuple[str, str, Path]] = []
    print("\n".join(_run_systems(datasets, runs_root, runs)))
    print("\n".join(_score_runs(runs)))
    return 0


DEMO_SYSTEMS = ("cascade", "reference", "silence")
"""The rows of the demo table: the CPU cascade (the system measured), the human reference and
the floor."""


def _slug(name: str) -> str:
    """A folder name: runs of other characters become one hyphen."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", name).strip("-")


def _run_systems(datasets: list[DemoDataset], runs_root: Path,
                 runs: list[tuple[str, str, Path]]) -> list[str]:
    """Run the demo systems on each dataset under multi-gen, appending (dataset, system, run
    dir) to ``runs``; returns the lines to print."""
    from .data.validate import Need
    from .runs import execute_run
    from .systems.registry import load_system

    lines = ["", "Runs (multi-gen)"]
    for demo in datasets:
        dataset, _ = load_dataset(demo.root, audio=Need.REQUIRE)
        plan = build_plan(dataset.dialogues, PlanOptions(protocol=Protocol.MULTI_GEN,
                                                         channels=demo.channels))
        for name in DEMO_SYSTEMS:
            system = load_system(name)
            out = runs_root / f"{name}-{_slug(demo.name)}"
            result = execute_run(system, dataset, plan, out, seed=0)
            lines.append(f"  {out}: {result.samples} samples ok, {result.failed} failed, "
                         f"{result.frames_stepped} frames stepped now")
            runs.append((demo.name, name, out))
    lines.append("")
    lines.append("Each run directory holds config.json, samples/*/*.wav (ch0 user as fed, ch1 "
                 "system), metadata.jsonl and run_summary.json.")
    return lines


def _score_runs(runs: list[tuple[str, str, Path]]) -> list[str]:
    """Analyse and score every demo run; the M3 timing table, one block per dataset.  The
    timing metrics read only the system channel's words, so the demo transcribes that channel
    only (``duplexeval score`` transcribes both by default)."""
    from .analysis.pipeline import AnalysisOptions
    from .metrics.score_run import score_run_dir
    from .report.text import timing_table_lines

    options = AnalysisOptions(asr_channels=(1,))
    lines = ["", "M3 timing (mean ± 95 % CI half-width; † fewer than 20 events; analysis: "
             "Silero VAD + Whisper base on the system channel)"]
    for dataset in dict.fromkeys(d for d, _, _ in runs):
        mine = [(system, out) for d, system, out in runs if d == dataset]
        rows = [(system, score_run_dir(out, options=options, progress=False)[0])
                for system, out in tqdm(mine, desc=f"scoring {dataset}", unit="run",
                                        file=sys.stderr)]
        lines += ["", f"  {dataset}"]
        lines += [f"  {line}" for line in timing_table_lines(rows)]
    lines += ["", "Per-event values, aggregates and settings: RUN_DIR/scores/{per_event.jsonl,"
              "aggregate.json,results.json}"]
    return lines
