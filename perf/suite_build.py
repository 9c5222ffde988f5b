"""Time to build every bundled suite from scratch (synthesis + quality report), in a fresh cache
folder, and each suite's quality figures.

Usage: .venv/bin/python perf/suite_build.py [NAME ...]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DUPLEXEVAL_CACHE"] = tmp
        from duplexeval.suites import SUITES, build_suite

        names = sys.argv[1:] or list(SUITES)
        total = 0.0
        for name in names:
            start = time.perf_counter()
            try:
                path = build_suite(name, progress=False)
            except Exception as exc:  # e.g. the toy data is absent
                print(f"{name:18s} skipped: {exc}")
                continue
            seconds = time.perf_counter() - start
            total += seconds
            q = json.loads((Path(path) / "quality.json").read_text())
            asr = q.get("asr", {})
            extra = q.get("annotation_round_trip")
            print(f"{name:18s} {seconds:6.1f} s  {q['dialogues']:3d} dialogues "
                  f"{q['seconds'] / 60:5.1f} min audio  {asr.get('metric')} "
                  f"{asr.get('value', float('nan')):.3f}  gap KS {q['timing']['ks']:.3f}"
                  + (f"  TURN_SHIFT recovered {extra['rate']:.3f}" if extra else ""))
        print(f"{'all':18s} {total:6.1f} s")


if __name__ == "__main__":
    main()
