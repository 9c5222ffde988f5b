"""Time to build bundled suites from scratch (synthesis + quality report), in a fresh cache
folder per build, with each ``--jobs`` given side by side, and each suite's quality figures.

Usage: .venv/bin/python perf/suite_build.py [--quick] [--synthesis-only] [--jobs 1 --jobs 2]
       [NAME ...]

``--quick`` builds the quick subsets (what ``make demo`` builds first; no ASR round trip).
``--synthesis-only`` builds the full suites without their quality report (no ASR round trip,
no gap KS): the synthesis alone.
With two or more ``--jobs``, prints seconds per suite for each and the speed-up over the first.
The machine may be shared: compare the ratios of one run, not seconds across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def _build(name: str, jobs: int, quick: bool,
           quality: bool = True) -> tuple[float, dict[str, Any]] | None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DUPLEXEVAL_CACHE"] = tmp
        from duplexeval.suites import build_suite

        start = time.perf_counter()
        try:
            path = build_suite(name, progress=False, jobs=jobs, quality=quality,
                               limit="quick" if quick else None)
        except Exception as exc:  # e.g. the toy data is absent, no quick subset
            print(f"{name:18s} jobs {jobs}: skipped: {exc}")
            return None
        seconds = time.perf_counter() - start
        report = Path(path) / "quality.json"
        if not report.is_file():  # --synthesis-only
            return seconds, {"synthesis_only": True}
        return seconds, json.loads(report.read_text())


def _line(name: str, jobs: int, seconds: float, q: dict[str, Any]) -> str:
    if q.get("synthesis_only"):
        return f"{name:18s} jobs {jobs:2d} {seconds:7.1f} s  synthesis only"
    asr = q.get("asr") or {}
    ks = q["timing"]["ks"]
    return (f"{name:18s} jobs {jobs:2d} {seconds:7.1f} s  {q['dialogues']:3d} dialogues "
            f"{q['seconds'] / 60:5.1f} min audio  {asr.get('metric')} "
            f"{asr.get('value', float('nan')):.3f}  gap KS "
            + ("-" if ks is None else f"{ks:.3f}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--jobs", type=int, action="append")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--synthesis-only", action="store_true")
    args = parser.parse_args()
    from duplexeval.suites import SUITES

    jobs_list = args.jobs or [os.cpu_count() or 1]
    totals = dict.fromkeys(jobs_list, 0.0)
    for name in args.names or list(SUITES):
        first = None
        for jobs in jobs_list:
            result = _build(name, jobs, args.quick, quality=not args.synthesis_only)
            if result is None:
                break
            seconds, q = result
            totals[jobs] += seconds
            first = seconds if first is None else first
            print(_line(name, jobs, seconds, q)
                  + (f"  speed-up {first / seconds:.2f}x" if jobs != jobs_list[0] else ""))
    for jobs, total in totals.items():
        print(f"{'all':18s} jobs {jobs:2d} {total:7.1f} s"
              + (f"  speed-up {totals[jobs_list[0]] / total:.2f}x"
                 if jobs != jobs_list[0] and total else ""))


if __name__ == "__main__":
    main()
