"""Run the test suite in two passes: the CPU-bound tests spread over the cores, then the tests
that drive a system on the wall clock, spread among themselves only.

The ``realtime`` tests (the real-time driver against loopback servers) measure pacing and
arrival times; on two cores shared with Whisper-heavy tests their send drift grows past
what a correct driver shows (CI saw a mean of 148 ms).  They are mostly idle waits (about
20 s of CPU in 165 s), so they run among themselves on at least :data:`REALTIME_WORKERS`
workers without loading the machine.

Usage: ``python scripts/run_tests.py WORKERS DURATIONS [MARK] -- [pytest arguments]``.
``MARK`` restricts both passes further (``make test-fast`` gives ``not slow``).  Exit status:
the first failing pass's, 1 when neither pass ran a test (pytest's 5), else 0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"

NO_TESTS = 5
REALTIME_WORKERS = 4
"""Workers of the realtime pass, whatever the cores: four such tests load two cores by ~25 %."""


def _marks(extra: str | None) -> list[str]:
    passes = ["not realtime", "realtime"]
    return [f"({mark}) and ({extra})" if extra else mark for mark in passes]


def _realtime_files() -> list[str]:
    """The test modules that hold realtime tests: the second pass collects only these (every
    worker collecting the whole suite again costs more than the tests themselves)."""
    return [str(p) for p in sorted(TESTS.glob("test_*.py"))
            if "mark.realtime" in p.read_text(encoding="utf-8")]


def _names_paths(args: list[str]) -> bool:
    return any(not a.startswith("-") and (Path(a.split("::")[0]).exists()) for a in args)


def main(argv: list[str]) -> int:
    split = argv.index("--") if "--" in argv else len(argv)
    head, pytest_args = argv[:split], argv[split + 1:]
    workers, durations = head[0], head[1]
    extra = head[2] if len(head) > 2 else None
    codes = []
    own_paths = _names_paths(pytest_args)
    for k, (mark, n) in enumerate(zip(_marks(extra),
                                      (workers, str(max(int(workers), REALTIME_WORKERS))),
                                      strict=True)):
        print(f"run_tests: pytest -m '{mark}' on {n} workers", flush=True)
        paths = _realtime_files() if k == 1 and not own_paths else []
        command = [sys.executable, "-m", "pytest", "-q", "-n", n, "--dist", "worksteal",
                   f"--durations={durations}", "-m", mark, *pytest_args, *paths]
        codes.append(subprocess.call(command))
    failed = [c for c in codes if c not in (0, NO_TESTS)]
    if failed:
        return failed[0]
    if all(c == NO_TESTS for c in codes):
        print("run_tests: pytest ran no tests; that is a failure", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
