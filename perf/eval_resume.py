"""What ``duplexeval eval`` costs, and what its second invocation costs: the bundled benchmarks
(m3, flexi, mtr) on ``scripted`` over the first N dialogues of each suite, twice into one bundle,
then ``verify``.  Prints the wall time of each, the frames stepped (from the run summaries) and
whether the second manifest is byte-identical to the first.

Usage: .venv/bin/python perf/eval_resume.py [--limit N] [--benchmarks m3,flexi,mtr]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from duplexeval.benchmarks import evaluate, verify_bundle
from duplexeval.systems import load_system


def frames(out: Path) -> int:
    return sum(json.loads(p.read_text())["frames_stepped"]
               for p in (out / "cells").rglob("run_summary.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=1)
    parser.add_argument("--benchmarks", default="m3,flexi,mtr")
    args = parser.parse_args()
    names = args.benchmarks.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bundle"
        started = time.monotonic()
        result = evaluate(load_system("scripted"), names, out, subset=args.limit, progress=False)
        first, stepped = time.monotonic() - started, frames(out)
        manifest = (out / "eval.json").read_bytes()
        started = time.monotonic()
        evaluate(load_system("scripted"), names, out, subset=args.limit, progress=False)
        second = time.monotonic() - started
        started = time.monotonic()
        report = verify_bundle(out)
        check = time.monotonic() - started
        cells = sum(len(c) for c in result.cells.values())
        print(f"eval {' '.join(names)} --system scripted --limit {args.limit}: {cells} cells, "
              f"{len(result.manifest.files)} hashed files")
        print(f"  first invocation   {first:7.1f} s  {stepped} frames stepped")
        same = (out / "eval.json").read_bytes() == manifest
        print(f"  second invocation  {second:7.1f} s  {frames(out) - stepped} frames stepped, "
              f"manifest {'identical' if same else 'CHANGED'}")
        print(f"  verify             {check:7.1f} s  "
              f"{'all hold' if report.ok else report.problems}")


if __name__ == "__main__":
    main()
