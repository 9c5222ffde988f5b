"""SIGKILL of ``duplexeval eval`` at random points: the same command again completes, the bundle
it leaves equals an uninterrupted evaluation's byte for byte, and ``verify`` holds.

The evaluation is the cheapest there is: ``tests/test_eval.py``'s two-cell benchmark (``m3-qa-en``
under Multi (gen) and Multi (ref)) on ``--system scripted --limit 1`` (8 samples per cell), so
one evaluation is about 10 s, most of it Python importing and the first cell.  Every evaluation
writes to the same absolute path (``results.json`` records its run folder's path): the reference
is made there and moved aside, then each killed evaluation is run there, killed, run again,
compared and removed.

Kill points alternate::

    even kills   at a random time, 30 to 100 % of the reference's duration
    odd kills    once the bundle holds a random number of the reference's files (1 .. all),
                 plus up to 50 ms: the kill lands inside the run, analysis, scoring or tables

The fast suite kills :data:`FAST_EVAL_KILLS` times, the slow one :data:`EVAL_KILLS` times.
Compared: every file, byte for byte, but for each cell's ``run_summary.json``, whose
``wall_seconds`` differs between two uninterrupted evaluations too and whose
``frames_stepped``/``model_seconds`` count the work the invocations did (see
``tests/test_kill_resume.py``'s :data:`~test_kill_resume.VARYING`): those are checked against
the bounds a kill allows instead.  ``eval.json`` holds no timestamp: it is compared whole.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from duplexeval.benchmarks import BENCHMARKS, Benchmark
from duplexeval.cli import main
from test_eval import KILLABLE, TINY
from test_kill_resume import _files, _tree

EVAL_KILLS = 20
"""Kills of ``eval`` in the slow suite."""
FAST_EVAL_KILLS = 1
"""Kills of ``eval`` in the fast suite."""
TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


@pytest.fixture
def tiny() -> Iterator[Benchmark]:
    BENCHMARKS.add(TINY.name, TINY)
    yield TINY
    BENCHMARKS.remove(TINY.name)


def _summaries(root: Path) -> dict[str, dict[str, float]]:
    """Each cell's ``run_summary.json``."""
    return {str(p.relative_to(root)): json.loads(p.read_text())
            for p in sorted(root.rglob("run_summary.json"))}


def _bundle_tree(root: Path) -> dict[str, str]:
    """:func:`~test_kill_resume._tree` with every cell's summary compared without its work
    counts and wall time."""
    tree = _tree(root)
    for name, summary in _summaries(root).items():
        kept = {k: v for k, v in summary.items()
                if k not in ("wall_seconds", "frames_stepped", "model_seconds")}
        tree[name] = json.dumps(kept, sort_keys=True)
    return tree


def _eval(out: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", KILLABLE, str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _kill_point(proc: subprocess.Popen[bytes], out: Path, k: int, duration: float,
                files: int, rng: np.random.Generator) -> None:
    if k % 2:  # once the bundle holds a random number of the reference's files
        target = int(rng.integers(1, files + 1))
        deadline = time.monotonic() + 120
        while (not out.exists() or _files(out) < target) and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(float(rng.uniform(0.0, 0.05)))
    else:
        time.sleep(float(rng.uniform(0.3, 1.0)) * duration)


def _kill_and_resume(tmp: Path, kills: int, seed: int) -> int:
    """Kill ``eval`` ``kills`` times, each into a fresh bundle at the same path, then run it
    again; returns how many kills left a partial bundle."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO / "src"), str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "DUPLEXEVAL_CACHE": os.environ.get("DUPLEXEVAL_CACHE", str(tmp / "cache"))}
    out, reference = tmp / "bundle", tmp / "reference"
    started = time.monotonic()
    proc = _eval(out, env)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()
    duration = time.monotonic() - started
    expected, work = _bundle_tree(out), _summaries(out)
    files = _files(out)
    out.rename(reference)
    rng = np.random.default_rng(seed)
    partial = 0
    for k in range(kills):
        proc = _eval(out, env)
        _kill_point(proc, out, k, duration, files, rng)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        partial += out.exists() and _bundle_tree(out) != expected
        again = _eval(out, env)
        _, err = again.communicate(timeout=600)
        assert again.returncode == 0, err.decode()
        assert b"Traceback" not in err
        assert _bundle_tree(out) == expected, f"kill {k} of eval"
        assert main(["verify", str(out)]) == 0
        for name, summary in _summaries(out).items():  # a kill never adds counted work
            assert summary["frames_stepped"] <= work[name]["frames_stepped"], name
        shutil.rmtree(out)
    return partial


def test_eval_killed_once_resumes_to_the_same_bundle(tiny: Benchmark, tmp_path: Path) -> None:
    _kill_and_resume(tmp_path, kills=FAST_EVAL_KILLS, seed=3)


@pytest.mark.slow
def test_eval_killed_at_random_points_resumes_to_the_same_bundle(tiny: Benchmark,
                                                                 tmp_path: Path) -> None:
    partial = _kill_and_resume(tmp_path, kills=EVAL_KILLS, seed=11)
    print(f"eval: {partial} of {EVAL_KILLS} kills left a partial bundle")
    assert partial >= EVAL_KILLS // 2  # the kills landed inside the work, not before or after
