"""``duplexeval demo``: the main job on the bundled data.

The demo re-derives every dataset's events from its word alignments and checks them against
the shipped annotations, validates the dataset, plans it under the three protocols and prints
the model-seconds cost of the official per-event execution and of shared-prefix execution.
Then it voices each dataset's word spans with the clip bank (``voice-bursts``, until the
synthesized suites exist) and runs ``reference`` and ``scripted`` on it under multi-gen into
``runs/demo/`` (resumable: a second demo reuses finished samples).

Datasets: the bundled ``sample-en`` and, when found, the official M3 toy sets (third-party data,
not shipped: looked up in ``$DUPLEXEVAL_M3_TOY`` or a ``shared/m3_toy`` folder beside the
working directory or its parents).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tqdm import tqdm

from .data.annotate import annotate_alignment_files
from .data.dialogue import Dataset
from .data.m3 import ALIGN_DIR
from .data.validate import load_dataset
from .protocols import PlanOptions, Protocol, build_plan
from .report_text import PLAN_HEADER, format_table, plan_row

__all__ = ["DemoDataset", "bundled_dataset", "default_datasets", "find_m3_toy", "run_demo"]


@dataclass(frozen=True)
class DemoDataset:
    """A dataset folder and the user channels its plans evaluate."""

    name: str
    root: Path
    channels: tuple[int, ...]


def bundled_dataset(name: str) -> Path:
    """Folder of a dataset shipped inside the package (``duplexeval/bundled/NAME``)."""
    path = Path(str(resources.files("duplexeval") / "bundled" / name))
    if not path.is_dir():
        raise FileNotFoundError(f"no bundled dataset {name!r}")
    return path


def find_m3_toy() -> Path | None:
    """The official M3 toy data folder (``.../m3_toy/ja``) if it can be found."""
    env = os.environ.get("DUPLEXEVAL_M3_TOY")
    if env:
        return Path(env) if Path(env).is_dir() else None
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        candidate = folder / "shared" / "m3_toy" / "ja"
        if candidate.is_dir():
            return candidate
    return None


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


def run_demo(extra: list[Path], runs_root: Path = Path("runs/demo")) -> int:
    """Run the demo on the default datasets plus ``extra`` folders; returns the exit code."""
    datasets = default_datasets() + [DemoDataset(p.name, p, (0, 1)) for p in extra]
    if find_m3_toy() is None:
        print("note: the official M3 toy sets were not found (set DUPLEXEVAL_M3_TOY); "
              "using the bundled data only", file=sys.stderr)
    rows = []
    checks = []
    steps = [(d, p) for d in datasets for p in Protocol]
    with tqdm(total=len(steps), desc="planning", unit="plan", file=sys.stderr) as bar:
        for demo in datasets:
            dataset, _ = load_dataset(demo.root)
            same, shipped = _annotation_check(dataset)
            checks.append(f"{demo.name}: {len(dataset)} dialogue(s), annotation from word "
                          f"alignments reproduces {same}/{shipped} events")
            for protocol in Protocol:
                plan = build_plan(dataset.dialogues,
                                  PlanOptions(protocol=protocol, channels=demo.channels))
                rows.append(plan_row(demo.name, plan))
                bar.update(1)
    print("Annotation check")
    for line in checks:
        print(f"  {line}")
    print()
    print("What a run would execute (per-event = official cost; shared prefix = duplexeval)")
    print("\n".join(format_table(PLAN_HEADER, rows)))
    print()
    print("\n".join(_run_systems(datasets, runs_root)))
    return 0


def _run_systems(datasets: list[DemoDataset], runs_root: Path) -> list[str]:
    """Voice each dataset (voice-bursts, cached) and run ``reference`` and ``scripted`` on it
    under multi-gen; returns the lines to print."""
    from .data.validate import Need
    from .data.voice_bursts import voice_bursts
    from .runs import execute_run
    from .systems.registry import load_system

    lines = ["", "Runs (multi-gen; audio: word spans voiced with the clip bank)"]
    for demo in datasets:
        dataset, _ = load_dataset(demo.root)
        voiced_root = runs_root / "data" / demo.name
        if not (voiced_root / f"{dataset.split}.jsonl").exists():
            voice_bursts(dataset, voiced_root)
        voiced, _ = load_dataset(voiced_root, audio=Need.REQUIRE)
        plan = build_plan(voiced.dialogues, PlanOptions(protocol=Protocol.MULTI_GEN,
                                                        channels=demo.channels))
        for name in ("reference", "scripted"):
            system = load_system(name)
            out = runs_root / f"{name}-{demo.name}"
            result = execute_run(system, voiced, plan, out, seed=0)
            lines.append(f"  {out}: {result.samples} samples ok, {result.failed} failed, "
                         f"{result.frames_stepped} frames stepped now")
    lines.append("")
    lines.append("Each run directory holds config.json, samples/*/*.wav (ch0 user as fed, ch1 "
                 "system), metadata.jsonl and run_summary.json.")
    return lines
