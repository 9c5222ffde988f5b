"""Fill the generated blocks of the docs' Measurements pages by running the `perf/` scripts.

A page marks a block with the command that prints it::

    <!-- measure: perf/plan_cost.py --suites quick -->
    ...what the last run printed, with its date, commit and machine...
    <!-- /measure -->

``python scripts/measure.py docs/measurements/plan-cost.md`` runs each block's command with
this interpreter (from the repository root) and writes, between the markers: the command, the
UTC date, the commit (``git describe``-style: the revision, and ``modified`` when tracked files
differ), the machine (CPU model, cores, memory, load average before and after, Python) and the
script's output verbatim.  The prose around a block is the page's own.  Figures that no script
prints yet stay in the prose, with the date, commit and machine they were recorded with.

``tests/test_docs.py`` checks that every block names a script that exists and carries these
facts; it does not run the scripts (they take minutes and measure the machine they run on).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"(<!-- measure: (?P<command>[^>]+?) -->\n)(?P<body>.*?)(<!-- /measure -->)",
                   re.S)
"""A generated block: its command, the text between its markers."""


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip()


def commit() -> str:
    """The checkout's revision, with ``, modified`` when tracked files differ from it."""
    modified = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return _git("rev-parse", "--short", "HEAD") + (", modified" if modified else "")


def machine() -> str:
    """CPU model, cores, memory and Python of this machine."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 2**20:.0f} GiB of memory"
    except (OSError, ValueError, IndexError):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores{memory}, Python {platform.python_version()}"


def _load() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def run_block(command: str) -> str:
    """The block's new text: the facts of this run and the command's output."""
    words = shlex.split(command)
    if not words or not words[0].startswith("perf/") or not (ROOT / words[0]).is_file():
        raise SystemExit(f"measure: {command!r} is not a perf/ script of this repository")
    load_before = _load()
    started = datetime.datetime.now(datetime.UTC)
    done = subprocess.run([sys.executable, *words], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"measure: {command} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    seconds = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
    return (f"`{command}`, run on {started:%Y-%m-%d %H:%M} UTC at commit {commit()}, "
            f"{machine()}; load average (1 / 5 / 15 min) {load_before} before, {_load()} after; "
            f"{seconds:.0f} s:\n\n```text\n{done.stdout.rstrip()}\n```\n")


def fill(page: Path) -> int:
    """Run every block of ``page`` and write it back; returns the number of blocks."""
    text = page.read_text(encoding="utf-8")
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        print(f"measure: {match['command']}", file=sys.stderr)
        return match.group(1) + run_block(match["command"]) + match.group(4)

    new = BLOCK.sub(replace, text)
    page.write_text(new, encoding="utf-8")
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="+", type=Path, help="Measurements pages to fill")
    args = parser.parse_args(argv)
    for page in args.pages:
        print(f"measure: {page}: {fill(page)} block(s) written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
