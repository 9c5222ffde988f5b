"""Run the tests N times in a row and print one line per run: exit status, the load average
before it, its wall time and pytest's summary line.  For issue 27's "passes 20 times in a row
under load": start the load yourself (another job, ``stress``), then run this.

Usage::

    .venv/bin/python scripts/repeat_tests.py 20 --realtime   # the realtime pass only
    .venv/bin/python scripts/repeat_tests.py 20              # the whole suite (make test's passes)

``--realtime`` runs the second pass of ``scripts/run_tests.py`` alone (the wall-clock tests
against loopback servers, the TLS test among them: the part that load can break), as ``make
test`` runs it (its slow ones included).  Exit status: 0 when every run passed, else 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from run_tests import REALTIME_WORKERS, _realtime_files  # noqa: E402

from duplexeval.cli._options import positive_int  # noqa: E402


def _command(realtime: bool) -> list[str]:
    if realtime:
        return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n",
                str(REALTIME_WORKERS), "--dist", "worksteal", "-m", "realtime",
                *_realtime_files()]
    workers = str(min(4, len(os.sched_getaffinity(0))))
    return [sys.executable, str(ROOT / "scripts" / "run_tests.py"), workers, "10"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=positive_int, help="how many runs (>= 1)")
    parser.add_argument("--realtime", action="store_true", help="the realtime pass only")
    args = parser.parse_args()
    failed = 0
    for k in range(1, args.runs + 1):
        load = os.getloadavg()
        start = time.perf_counter()
        done = subprocess.run(_command(args.realtime), cwd=ROOT, capture_output=True, text=True,
                              check=False)
        lines = [ln for ln in done.stdout.splitlines() if " passed" in ln or " failed" in ln]
        failed += done.returncode != 0
        print(f"run {k:2d}  exit {done.returncode}  load before {load[0]:.2f} {load[1]:.2f} "
              f"{load[2]:.2f}  {time.perf_counter() - start:6.1f} s  "
              f"{lines[-1].strip('= ') if lines else '(no summary)'}", flush=True)
    print(f"{args.runs - failed} of {args.runs} runs passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
