"""Count what the reliability tests try, from the test modules' own parameter tables, and keep
the count column of ``SECURITY.md``'s "How it is tested" table (the docs' Reliability page
includes that file) equal to them.

Counted (each from the constants and ``pytest.mark.parametrize`` tables the tests run, never
typed by hand): the bad-input corpus (``tests/test_bad_input.py``'s ``CASES`` and
``MODEL_CASES``), the single-guard tests of ``tests/test_reliability.py`` (every test item,
parametrized ones expanded), the fuzzed inputs (``tests/test_fuzz_readers.py``: readers times
examples, ``FAST`` in the fast suite and ``SLOW`` in the slow one), the kills
(``tests/test_kill_resume.py`` and ``tests/test_kill_eval.py``) and the faults
(``tests/test_fault_injection.py``).  A test item is slow when its function or its parameter
carries ``pytest.mark.slow``.

Usage::

    .venv/bin/python scripts/reliability_counts.py           # prints the counts (JSON)
    .venv/bin/python scripts/reliability_counts.py --write   # rewrites SECURITY.md's counts
    .venv/bin/python scripts/reliability_counts.py --check   # exit 1 when SECURITY.md differs

``tests/test_reliability.py`` fails when ``SECURITY.md``'s counts differ from these.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from duplexeval._fileio import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
SECURITY = ROOT / "SECURITY.md"


def _module(name: str) -> ModuleType:
    """A test module, imported as pytest imports it (``tests/`` on the path)."""
    tests = str(ROOT / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    return importlib.import_module(name)


def _slow(marks: Any) -> bool:
    return any(getattr(m, "name", None) == "slow" for m in marks or ())


def items(func: Callable[..., Any]) -> tuple[int, int]:
    """How many test items pytest makes of ``func``: (fast, slow)."""
    marks = getattr(func, "pytestmark", [])
    combos = [_slow(marks)]
    for mark in marks:
        if mark.name != "parametrize":
            continue
        values = mark.args[1]
        combos = [slow or _slow(getattr(v, "marks", ())) for slow in combos for v in values]
    slow = sum(combos)
    return len(combos) - slow, slow


def _tests(module: ModuleType) -> dict[str, Callable[..., Any]]:
    return {name: f for name, f in vars(module).items()
            if name.startswith("test_") and inspect.isfunction(f)
            and f.__module__ == module.__name__}


def _total(module: ModuleType) -> int:
    return sum(sum(items(f)) for f in _tests(module).values())


def bad_input() -> dict[str, int]:
    m = _module("test_bad_input")
    return {"inputs": len(m.CASES), "model_outputs": len(m.MODEL_CASES)}


def reliability() -> dict[str, int]:
    return {"tests": _total(_module("test_reliability"))}


def fuzzing() -> dict[str, int]:
    m = _module("test_fuzz_readers")
    fuzzers = [f for f in _tests(m).values() if "examples" in inspect.signature(f).parameters]
    fast = sum(items(f)[0] for f in fuzzers)
    slow = sum(items(f)[1] for f in fuzzers)
    return {"readers": fast, "fast": m.FAST, "slow": m.SLOW, "fast_inputs": fast * m.FAST,
            "slow_inputs": slow * m.SLOW}


def kills() -> dict[str, int]:
    run, ev = _module("test_kill_resume"), _module("test_kill_eval")
    others = len(run.COMMANDS) - 1
    known = items(run.test_a_killed_run_counts_the_work_of_its_finished_units)[0]
    return {"run": run.RUN_KILLS, "each_other": run.SLOW_KILLS, "others": others,
            "eval": ev.EVAL_KILLS,
            "slow": run.RUN_KILLS + run.SLOW_KILLS * others + ev.EVAL_KILLS,
            "fast": sum(run.FAST_KILLS.values()) + ev.FAST_EVAL_KILLS + known}


def faults() -> dict[str, int]:
    m = _module("test_fault_injection")
    adapters = {a for a, _, _ in m.ADAPTER_FAULTS}
    judge, realtime, adapter = len(m.JUDGE_FAULTS), len(m.REALTIME_FAULTS), len(m.ADAPTER_FAULTS)
    return {"judge": judge, "realtime": realtime, "adapter": adapter,
            "adapters": len(adapters), "faults": judge + realtime + adapter,
            "retry_after": items(m.test_retry_after_is_read_in_seconds_or_as_a_date)[0],
            "runs": items(m.test_a_run_against_a_faulty_server_finishes_and_counts_what_failed)[0]}


CREDENTIALS = ("tests/test_fault_injection.py::"
               "test_no_file_of_a_run_holds_the_key_even_when_the_server_quotes_it")
"""The sentinel key search of a whole run, per network adapter."""


def credentials() -> dict[str, int]:
    m, command = _module("test_fault_injection"), _module("test_command")
    searched = items(m.test_no_file_of_a_run_holds_the_key_even_when_the_server_quotes_it)[0]
    searched += items(command.test_failed_samples_are_recorded_and_retried_on_resume)[0]
    return {"adapters": len(m.KEYED_ADAPTERS) + 1, "runs": searched}


def counts() -> dict[str, dict[str, int]]:
    """Every count, by what it counts."""
    return {"bad_input": bad_input(), "reliability": reliability(), "fuzzing": fuzzing(),
            "kills": kills(), "faults": faults(), "credentials": credentials()}


def cells(c: dict[str, dict[str, int]]) -> dict[str, str]:
    """The count cell of each row of the table, by the row's test module."""
    b, z, k, f = c["bad_input"], c["fuzzing"], c["kills"], c["faults"]
    return {
        "tests/test_bad_input.py": f"{b['inputs']} inputs, {b['model_outputs']} model outputs",
        "tests/test_reliability.py": str(c["reliability"]["tests"]),
        "tests/test_fuzz_readers.py":
            f"{z['fast_inputs']:,} inputs in the fast suite ({z['readers']} x {z['fast']}), "
            f"{z['slow_inputs']:,} in the slow one ({z['readers']} x {z['slow']:,})",
        "tests/test_kill_resume.py":
            f"{k['slow']} kills in the slow suite ({k['run']} of `run`, {k['each_other']} each "
            f"of the {k['others']} others, {k['eval']} of `eval`), {k['fast']} in the fast one",
        CREDENTIALS:
            f"{c['credentials']['adapters']} adapters and the judge, "
            f"{c['credentials']['runs']} runs",
        "tests/test_fault_injection.py":
            f"{f['faults']} faults ({f['judge']} judge, {f['realtime']} openai-realtime, "
            f"{f['adapter']} over {f['adapters']} other adapters), {f['retry_after']} "
            f"`Retry-After` forms, {f['runs']} faulty `run`",
    }


def _row_key(line: str, keys: dict[str, str]) -> str | None:
    """The test a table row is about: the first name its test cell puts in backticks."""
    parts = line.split("|")
    if len(parts) < 5 or parts[2].count("`") < 2:
        return None
    first = parts[2].split("`")[1]
    return first if first in keys else None


def render(text: str, c: dict[str, dict[str, int]]) -> str:
    """``text`` (SECURITY.md) with each counted row's last cell set to its count."""
    keys = cells(c)
    out = []
    for line in text.splitlines(keepends=True):
        key = _row_key(line, keys)
        if key is not None:
            parts = line.rstrip("\n").split("|")
            parts[-2] = f" {keys[key]} "
            line = "|".join(parts) + "\n"
        out.append(line)
    return "".join(out)


def stated(text: str) -> dict[str, str]:
    """The count cell SECURITY.md gives each counted row."""
    keys = cells(counts())
    return {key: line.split("|")[-2].strip() for line in text.splitlines()
            if (key := _row_key(line, keys)) is not None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite SECURITY.md's counts")
    mode.add_argument("--check", action="store_true", help="exit 1 when SECURITY.md differs")
    args = p.parse_args(argv)
    c = counts()
    text = SECURITY.read_text(encoding="utf-8")
    new = render(text, c)
    if args.check:
        if new != text:
            print(f"{SECURITY}: the counts differ from the tests' tables; run "
                  "scripts/reliability_counts.py --write", file=sys.stderr)
            return 1
        return 0
    if args.write:
        atomic_write_text(SECURITY, new)
    print(json.dumps(c, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
