"""Wall time of ``make demo`` from a fresh clone, split by stage.

Clones the repository's committed HEAD into a temporary folder, runs ``make venv`` there (the
installation: a new virtual environment from the pip cache, which is warm on a machine that has
installed duplexeval before) and then ``make demo`` with an empty ``DUPLEXEVAL_CACHE`` (so the
quick subsets are built and the Whisper model is joined as on a fresh machine).  The demo itself
writes the seconds of each of its stages to ``runs/demo/demo_timing.json`` (its rows run two at
a time, so ``runs``, ``analysis`` and ``tables`` are each stage's share of the evaluations' wall
time, in proportion to the rows' own seconds in it); ``other`` is the rest
of ``make demo``'s wall time (interpreter start, imports, model loading outside the stages).

Prints one row per stage (``runs`` is the inference: the systems stepped over the plans), the
total, the slowest stage of the demo itself (installation and ``other`` aside), the CPU count and
the load average before and after (other processes on the machine inflate every figure: quote
them together).  While ``make demo`` runs, the machine's busy cores are sampled from
``/proc/stat`` every second (Linux; every process's, so an idle machine is the condition) and
printed per 30-s slice: a slice well under the CPU count is a stretch where the demo leaves
cores idle (the stage order is that of the table).

Usage: .venv/bin/python perf/demo_time.py [--keep DIR] [--demo-args "--quick"]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _timed(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> float:
    """Run ``cmd`` (output to ``log``); seconds of wall time; exits on failure."""
    start = time.perf_counter()
    with log.open("w") as out:
        rc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.perf_counter() - start
    if rc != 0:
        sys.exit(f"{' '.join(cmd)} failed (exit {rc}); see {log}")
    return seconds


SAMPLE_S = 1.0
"""Seconds between two reads of ``/proc/stat``."""
SLICE_S = 30.0
"""Seconds of demo per printed busy-core figure."""


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot, or ``None`` without ``/proc/stat``."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


class BusyCores:
    """Busy cores sampled every :data:`SAMPLE_S` seconds while it is entered."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        last = _cpu_ticks()
        cores = os.cpu_count() or 1
        while last is not None and not self._stop.wait(SAMPLE_S):
            now = _cpu_ticks()
            if now is None or now[1] == last[1]:
                continue
            self.samples.append(cores * (now[0] - last[0]) / (now[1] - last[1]))
            last = now

    def __enter__(self) -> BusyCores:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def line(self) -> str:
        """The mean busy cores per :data:`SLICE_S`-second slice, and over the whole."""
        if not self.samples:
            return "busy cores: not sampled (no /proc/stat)"
        per = max(1, round(SLICE_S / SAMPLE_S))
        slices = [self.samples[i:i + per] for i in range(0, len(self.samples), per)]
        means = " ".join(f"{sum(s) / len(s):.1f}" for s in slices)
        return (f"busy cores during make demo, per {SLICE_S:.0f} s: {means}; mean "
                f"{sum(self.samples) / len(self.samples):.2f} of {os.cpu_count()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None,
                        help="clone into this (new) folder and keep it")
    parser.add_argument("--demo-args", default="", help="DEMO_ARGS for make demo")
    args = parser.parse_args()
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        clone = root / "duplexeval"
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(REPO), str(clone)],
                       check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", head], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["DUPLEXEVAL_CACHE"] = str(root / "cache")
        env["DUPLEXEVAL_M3_TOY"] = str(root / "no-toy-data")  # as in a clone without ../shared
        load_before = os.getloadavg()
        install = _timed(["make", "venv"], clone, env, root / "install.log")
        with BusyCores() as busy:
            demo = _timed(["make", "demo", f"DEMO_ARGS={args.demo_args}"], clone, env,
                          root / "demo.log")
        load_after = os.getloadavg()
        timing = json.loads((clone / "runs" / "demo" / "demo_timing.json").read_text())
    stages = {"install": install, **timing["seconds"]}
    stages["other"] = demo - sum(timing["seconds"].values())
    total = install + demo
    print(f"make demo from a fresh clone ({head[:10]}), {dt.date.today().isoformat()}, "
          f"{os.cpu_count()} CPU cores, DEMO_ARGS={shlex.quote(args.demo_args)}")
    names = {"runs": "runs (inference)"}
    for stage, seconds in stages.items():
        print(f"  {names.get(stage, stage):18s} {seconds:7.1f} s  {100 * seconds / total:5.1f} %")
    print(f"  {'total':18s} {total:7.1f} s  ({total / 60:.1f} min)")
    slowest = max(timing["seconds"], key=timing["seconds"].get)
    print(f"slowest stage: {names.get(slowest, slowest)}, {timing['seconds'][slowest]:.1f} s "
          f"({100 * timing['seconds'][slowest] / total:.0f} % of the total)")
    print(busy.line())
    print("load average (1, 5, 15 min): before " + ", ".join(f"{x:.2f}" for x in load_before)
          + "; after " + ", ".join(f"{x:.2f}" for x in load_after))


if __name__ == "__main__":
    main()
