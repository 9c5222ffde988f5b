"""The demo's runs stage in this process and spread over worker processes, side by side.

Builds (or takes from ``DUPLEXEVAL_CACHE``) the quick subsets the default ``make demo``
evaluates, plans each cell of each default demo row (``cascade``, ``reference``, ``silence``:
M3 Multi (gen) on the ``in_demo`` suites, FLEXI under Multi (gen) and Multi (ref)) exactly as
``duplexeval demo`` does, and runs every cell twice into a temporary folder: once with the
local executor (one process, as the demo ran before ``--jobs``) and once on a
:class:`~duplexeval.runs.ProcessExecutor` of ``--jobs`` workers, one pool for all the rows as
the demo keeps it.  Prints the wall seconds of each row both ways, the speed-up, whether every
run directory is byte-identical (every file but the lock; ``run_summary.json`` without its wall
time; the files that differ named when any do), the CPU count and the load average before and
after (other processes on the machine inflate every figure: quote them together).  No
analysis: that is the demo's next stage.

Usage: PYTHONPATH=src .venv/bin/python perf/demo_runs.py [--jobs 2] [--rows cascade ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from duplexeval.app._demo import DEMO_BENCHMARKS, DEMO_SYSTEMS, _selector, demo_suites
from duplexeval.benchmarks import BENCHMARKS, Measures
from duplexeval.benchmarks._evaluate import _prepare
from duplexeval.runs import ProcessExecutor, execute_run
from duplexeval.systems import load_system

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from run_files import run_files  # noqa: E402  (the comparison the executor tests use)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--rows", nargs="*", default=None,
                        help="demo rows to run (default: the default demo's)")
    args = parser.parse_args()
    rows = [r for r in DEMO_SYSTEMS if not r.variant and (args.rows is None
                                                          or r.label in args.rows)]
    datasets = demo_suites(False) + demo_suites(False, ["flexi-en"])
    m3_suites = [d.suite for d in datasets if d.suite and d.suite != "flexi-en"]
    chosen = [BENCHMARKS.get(b) for b in DEMO_BENCHMARKS]
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=10", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()
    load_before = os.getloadavg()
    seconds: dict[str, dict[int, float]] = {}
    samples: dict[str, int] = {}
    identical = True
    with tempfile.TemporaryDirectory() as tmp, ProcessExecutor(args.jobs) as pool:
        for row in rows:
            system = load_system(row.system, dict(row.args))
            keep = _selector(row, m3_suites, tuple(DEMO_BENCHMARKS))
            seconds[row.label] = {}
            for jobs in (1, args.jobs):
                out = Path(tmp) / f"jobs{jobs}" / row.label
                prepared = [_prepare(system, bench, cell, out, "quick", None, Measures())
                            for bench in chosen for cell in bench.cells if keep(bench, cell)]
                start = time.perf_counter()
                for p in prepared:
                    assert p.dataset is not None and p.plan is not None, p.skipped
                    execute_run(system, p.dataset, p.plan, p.run_dir, seed=0, progress=False,
                                executor=pool if jobs > 1 else None)
                seconds[row.label][jobs] = time.perf_counter() - start
                samples[row.label] = sum(len(p.plan.samples) for p in prepared if p.plan)
            local = run_files(Path(tmp) / "jobs1" / row.label)
            pooled = run_files(Path(tmp) / f"jobs{args.jobs}" / row.label)
            differ = sorted(k for k in local.keys() | pooled.keys()
                            if local.get(k) != pooled.get(k))
            identical = identical and not differ
            print(f"  {row.label:10s} {samples[row.label]:4d} samples  "
                  f"1 process {seconds[row.label][1]:7.1f} s  {args.jobs} workers "
                  f"{seconds[row.label][args.jobs]:7.1f} s  "
                  f"{seconds[row.label][1] / seconds[row.label][args.jobs]:4.2f}x  "
                  f"{'DIFFERENT' if differ else 'byte-identical'}", flush=True)
            if differ:  # which files, so that the next look starts from them
                print(f"    {len(differ)} files differ: {', '.join(differ[:10])}"
                      f"{', ...' if len(differ) > 10 else ''}", flush=True)
    load_after = os.getloadavg()
    one = sum(s[1] for s in seconds.values())
    many = sum(s[args.jobs] for s in seconds.values())
    print(f"demo runs stage at {head}, {dt.date.today().isoformat()}, {os.cpu_count()} CPU "
          f"cores: 1 process {one:.1f} s, {args.jobs} workers {many:.1f} s "
          f"({one / many:.2f}x); run directories "
          f"{'byte-identical' if identical else 'DIFFERENT'}")
    print("load average (1, 5, 15 min): before " + ", ".join(f"{x:.2f}" for x in load_before)
          + "; after " + ", ".join(f"{x:.2f}" for x in load_after))


if __name__ == "__main__":
    main()
