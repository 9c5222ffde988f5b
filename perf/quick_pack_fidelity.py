"""What the shipped quick-subset packs change against the synthesized quick subsets they were
made from, side by side (see :mod:`duplexeval.suites._quick_pack`).

Per packed suite: the demo's annotation check (Silero, events recovered within 100 ms, and
spurious ones) on the synthesized build and on the decoded pack, then the totals.  Then the
cascade's ASR inputs on one multi-gen cell (``--cell``, default ``m3-chat-en``) of each: the
user-turn cuts it transcribes and how many distinct ones (its content-keyed ASR cache computes
each distinct cut once), with Whisper replaced by a counter (the cuts do not depend on the
text: the cascade's latencies are its declared budgets).

Builds the synthesized quick subsets when ``DUPLEXEVAL_CACHE`` lacks them (minutes).

Usage: .venv/bin/python perf/quick_pack_fidelity.py [--cell m3-qa-en]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval.app._demo import DEMO_SYSTEMS, annotation_check
from duplexeval.data import Dataset, Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import execute_run
from duplexeval.suites import SUITES, build_suite
from duplexeval.suites._quick_pack import pack_root
from duplexeval.systems import load_system
from duplexeval.systems.builtin.cascade import _engines

REPO = Path(__file__).resolve().parents[1]


def _counts(dataset: Dataset) -> tuple[int, int, int]:
    check = annotation_check(dataset)
    return (sum(f for f, _ in check.recovered.values()),
            sum(t for _, t in check.recovered.values()), sum(check.spurious.values()))


def _cuts(dataset: Dataset, channels: tuple[int, ...]) -> tuple[int, int]:
    """(cuts transcribed, distinct cuts) of the demo's cascade on a multi-gen run."""
    seen: list[str] = []

    def transcribe(self: Any, audio16: np.ndarray, language: str) -> tuple[str, float]:
        seen.append(hashlib.sha256(np.ascontiguousarray(audio16).tobytes()).hexdigest())
        return "hello there", 0.0

    original = _engines.Engines.transcribe
    _engines.Engines.transcribe = transcribe  # type: ignore[method-assign]
    try:
        row = next(r for r in DEMO_SYSTEMS if r.label == "cascade")
        system = load_system(row.system, dict(row.args))
        plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                                         channels=channels))
        with tempfile.TemporaryDirectory() as tmp:
            execute_run(system, dataset, plan, Path(tmp) / "run", seed=0, progress=False)
    finally:
        _engines.Engines.transcribe = original  # type: ignore[method-assign]
    return len(seen), len(set(seen))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", default="m3-chat-en", help="the suite of the cascade cell")
    args = parser.parse_args()
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=10", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()
    print(f"quick-subset packs vs synthesized at {head}, {dt.date.today().isoformat()}")
    totals = {"synthesized": [0, 0, 0], "pack": [0, 0, 0]}
    packed = sorted(p.name for p in pack_root().iterdir() if (p / "pack.json").is_file())
    data: dict[tuple[str, str], Dataset] = {}
    for name in packed:
        for label, synthesize in (("synthesized", True), ("pack", False)):
            root = build_suite(name, limit="quick", synthesize=synthesize, progress=False,
                               log=lambda _: None)
            dataset, _ = load_dataset(root, audio=Need.REQUIRE)
            data[name, label] = dataset
            found, total, spurious = _counts(dataset)
            totals[label] = [a + b for a, b in zip(totals[label], (found, total, spurious),
                                                   strict=True)]
            print(f"  {name:11s} {label:11s} recovered {found:4d} of {total:4d}, "
                  f"{spurious:3d} spurious", flush=True)
    for label, (found, total, spurious) in totals.items():
        print(f"all suites  {label:11s} recovered {found:4d} of {total:4d}, {spurious:3d} spurious")
    channels = SUITES[args.cell].channels
    for label in ("synthesized", "pack"):
        cuts, distinct = _cuts(data[args.cell, label], channels)
        print(f"cascade on {args.cell} multi-gen, {label:11s}: {cuts} turn cuts transcribed, "
              f"{distinct} distinct", flush=True)


if __name__ == "__main__":
    main()
