"""Where the test suite's time goes: per test module and per test, from a JUnit XML report.

pytest's ``--durations`` table lists single tests; this adds them up per module (the unit a
speed-up works on: a module's shared fixtures, its suite builds) and prints each module's share
of the whole.  A test's time is its setup, call and teardown (a module fixture's cost lands on
the first test that asks for it).  Make the report with

    PYTHONDONTWRITEBYTECODE= DUPLEXEVAL_CACHE=$(mktemp -d) \\
        .venv/bin/python -m pytest -q -n 1 -m "not realtime" --junitxml=durations.xml

(one worker, so that no test's time includes another's contention; an empty cache, as a fresh
clone has; bytecode written, as ``make test`` lets Python do), then run

    .venv/bin/python perf/test_durations.py durations.xml [--modules N] [--tests N]

Exit status 2 when the file is not a JUnit XML report.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from duplexeval.cli._options import positive_int


def read_cases(path: Path) -> list[tuple[str, str, float]]:
    """``(module, test name, seconds)`` of every test case in the report."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").split(".")[-1] or "?"
        cases.append((module, case.get("name", "?"), float(case.get("time", "0"))))
    return cases


def report(cases: list[tuple[str, str, float]], modules: int, tests: int) -> list[str]:
    """The per-module table (the ``modules`` largest) and the ``tests`` slowest tests."""
    total = sum(seconds for _, _, seconds in cases)
    by_module: dict[str, float] = {}
    counts: Counter[str] = Counter()
    for module, _, seconds in cases:
        by_module[module] = by_module.get(module, 0.0) + seconds
        counts[module] += 1
    lines = [f"{len(cases)} tests, {total:.1f} s of test time in all",
             "", f"{'seconds':>8}  {'share':>6}  {'tests':>5}  module"]
    for module, seconds in sorted(by_module.items(), key=lambda m: -m[1])[:modules]:
        lines.append(f"{seconds:8.1f}  {seconds / total:6.1%}  {counts[module]:5d}  {module}")
    lines += ["", f"{'seconds':>8}  test"]
    for module, name, seconds in sorted(cases, key=lambda c: -c[2])[:tests]:
        lines.append(f"{seconds:8.1f}  {module}::{name}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="pytest --junitxml output")
    parser.add_argument("--modules", type=positive_int, default=20,
                        help="modules listed (default 20)")
    parser.add_argument("--tests", type=positive_int, default=20,
                        help="tests listed (default 20)")
    args = parser.parse_args(argv)
    try:
        cases = read_cases(args.report)
    except (OSError, ET.ParseError, ValueError) as exc:
        print(f"{args.report}: not a JUnit XML report ({exc})", file=sys.stderr)
        return 2
    if not cases:
        print(f"{args.report}: no test cases", file=sys.stderr)
        return 2
    print("\n".join(report(cases, args.modules, args.tests)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
