"""SIGKILL at random points of ``run``, ``analyze``, ``score`` and ``report``: the same command
again completes, and the folder it leaves is byte for byte the one an uninterrupted command leaves.

Each command runs in a subprocess on a copy of one scored run (``run --system silence`` on the
voiced sample-en, single protocol, 2 s windows): once uninterrupted (the reference), and once
killed (every other kill after a random delay of 40 to 100 % of the reference's duration, its
first second or so being Python importing; the others within 50 ms of the command's first
write), then run again.  The fast suite kills ``score`` twice and ``run`` once
(:data:`FAST_KILLS`); the slow one kills ``analyze``, ``score`` and ``report``
:data:`SLOW_KILLS` times each and ``run`` (``--system silence`` into a fresh folder,
then resumed) :data:`RUN_KILLS` times.  No file differs, timestamps included: a run's files hold
none but :data:`VARYING`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import ModuleTemp
from duplexeval.cli import main
from duplexeval.systems import Session, SessionSpec, StepOutput
from duplexeval.systems.builtin._replay import SilenceSystem

REPO = Path(__file__).resolve().parents[1]
SLOW_KILLS = 7
"""Kills per command in the slow suite (analyze, score, report: 21)."""
RUN_KILLS = 20
"""Kills of ``run`` in the slow suite."""
FAST_KILLS = {"score": 2, "run": 1}
"""Kills per command in the fast suite."""

COMMANDS = {
    "analyze": ["analyze", "run", "--vad", "energy", "--asr", "none"],
    "score": ["score", "run", "--vad", "energy", "--asr", "none"],
    "report": ["report", "run", "-o", "tables"],
    "run": ["run", "--system", "silence", "--dataset", "DATASET", "--protocol", "single",
            "--window", "2", "--out", "run"],
}
"""``DATASET`` is the voiced sample-en's absolute path (``config.json`` records it)."""

VARYING = {"run/run_summary.json": ("wall_seconds", "frames_stepped", "model_seconds")}
"""Values left out of the byte comparison, all in ``run_summary.json``: ``wall_seconds``
(wall-clock time, differs between two uninterrupted runs too) and ``frames_stepped``/
``model_seconds``, the work the invocations did (``runs/_execution.py``'s ``_Tally``: counted
after every unit, so a kill leaves the unit in flight uncounted); those two are checked
against the uninterrupted count instead (:func:`_work_is_counted`), and exactly by
:func:`test_a_killed_run_counts_the_work_of_its_finished_units`.  Every other byte is
compared."""


@pytest.fixture(scope="module")
def base(sample_voiced: Path, module_tmp: ModuleTemp) -> Path:
    """A folder holding ``run/``: run and scored once (``report`` needs its scores; ``analyze``
    and ``score`` redo theirs after the fixture removes them)."""
    root = module_tmp.mktemp("kill-base")
    assert main(["run", "--system", "silence", "--dataset", str(sample_voiced), "--protocol",
                 "single", "--window", "2", "--out", str(root / "run")]) == 0
    assert main(["score", str(root / "run"), "--vad", "energy", "--asr", "none"]) == 0
    return root


def _tree(root: Path) -> dict[str, str]:
    """Each file's sha256, but for :data:`VARYING`'s files: their JSON without that key."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            name = str(p.relative_to(root))
            data = p.read_bytes()
            if name in VARYING:
                try:
                    obj = json.loads(data)
                    for key in VARYING[name]:
                        obj.pop(key, None)
                    data = json.dumps(obj, sort_keys=True).encode()
                except (ValueError, AttributeError):
                    pass  # a torn file is compared as it is
            out[name] = hashlib.sha256(data).hexdigest()
    return out


def _files(root: Path) -> int:
    """How many files (and folders) there are under ``root``: a cheap sign of a first write."""
    return sum(len(names) + len(dirs) for _, dirs, names in os.walk(root))


def _copy(base: Path, to: Path, command: str) -> Path:
    shutil.copytree(base, to)
    if command == "run":  # run again from nothing
        shutil.rmtree(to / "run")
    elif command != "report":  # analysed and scored again from nothing
        shutil.rmtree(to / "run" / "analysis")
        shutil.rmtree(to / "run" / "scores")
    return to


def _cli(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "duplexeval.cli", *argv], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _kill_and_resume(base: Path, tmp: Path, command: str, kills: int, seed: int,
                     dataset: Path | None = None) -> int:
    """Kill ``command`` ``kills`` times, each on a fresh copy, and run it again; returns how
    many kills interrupted its writing (left a folder that is neither the copy nor the
    result)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "DUPLEXEVAL_CACHE": str(tmp / "cache")}
    argv = [str(dataset) if a == "DATASET" else a for a in COMMANDS[command]]
    clean = _copy(base, tmp / "clean", command)
    started = time.monotonic()
    proc = _cli(argv, clean, env)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    duration = time.monotonic() - started
    expected = _tree(clean)
    rng = np.random.default_rng(seed)
    interrupted = 0
    for k in range(kills):
        killed = _copy(base, tmp / f"killed-{k}", command)
        initial = _tree(killed)
        proc = _cli(argv, killed, env)
        if k % 2:  # within 50 ms of its first write (the folder changed)
            deadline, files = time.monotonic() + 60, _files(killed)
            while _files(killed) == files and proc.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(float(rng.uniform(0.0, 0.05)))
        else:  # anywhere, mostly past the imports
            time.sleep(float(rng.uniform(0.4, 1.0)) * duration)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        interrupted += _tree(killed) not in (initial, expected)
        again = _cli(argv, killed, env)
        _, err = again.communicate(timeout=300)
        assert again.returncode == 0, err.decode()
        assert b"Traceback" not in err
        assert _tree(killed) == expected, f"kill {k} of {command}"
        if command == "run":
            _work_is_counted(killed / "run", clean / "run")
    return interrupted


def _work_is_counted(resumed: Path, clean: Path) -> None:
    """A resumed ``single`` run counts an uninterrupted run's frames, less at most one
    sample's (a kill between a sample's record and the summary's rewrite)."""
    got, want = (json.loads((r / "run_summary.json").read_text()) for r in (resumed, clean))
    most = max(json.loads(p.read_text())["frames"] for p in (clean / "samples").rglob("*.json"))
    assert want["frames_stepped"] - most <= got["frames_stepped"] <= want["frames_stepped"]


@pytest.mark.parametrize(("command", "kills"), sorted(FAST_KILLS.items()))
def test_killed_a_few_times_resumes_to_the_same_bytes(base: Path, tmp_path: Path,
                                                      sample_voiced: Path, command: str,
                                                      kills: int) -> None:
    _kill_and_resume(base, tmp_path, command, kills=kills, seed=1, dataset=sample_voiced)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_killed_at_random_points_resumes_to_the_same_bytes(base: Path, tmp_path: Path,
                                                           sample_voiced: Path,
                                                           command: str) -> None:
    kills = RUN_KILLS if command == "run" else SLOW_KILLS
    interrupted = _kill_and_resume(base, tmp_path, command, kills=kills, seed=7,
                                   dataset=sample_voiced)
    print(f"{command}: {interrupted} of {kills} kills interrupted its writing")


class KillingSilence(SilenceSystem):
    """``silence`` that SIGKILLs its own process on frame ``F`` of the ``S``-th session it
    opens when ``KILL_AT=S:F`` is set (an environment variable, so the killed and the resumed
    run have the same configuration)."""

    opened = 0

    def open(self, spec: SessionSpec) -> Session:
        session = super().open(spec)
        KillingSilence.opened += 1
        at = os.environ.get("KILL_AT")
        if at is None or int(at.split(":")[0]) != KillingSilence.opened:
            return session
        frame, step = int(at.split(":")[1]), session.step

        def killing(user: np.ndarray, force: Any = None) -> StepOutput:
            if session.frames == frame:
                os.kill(os.getpid(), signal.SIGKILL)
            return step(user, force)

        session.step = killing  # type: ignore[method-assign]
        return session


def _frames_of(run: Path) -> int:
    return sum(json.loads(p.read_text())["frames"] for p in (run / "samples").rglob("*.json"))


def test_a_killed_run_counts_the_work_of_its_finished_units(sample_voiced: Path,
                                                            tmp_path: Path) -> None:
    """Killed on frame 20 of its 4th sample (one sample a unit under ``single``)::

        invocation 1   s1 s2 s3 [s4 ..20 frames: killed]
                       run_summary.json: frames of s1+s2+s3 (rewritten after each unit)
        invocation 2               s4 s5 ... sN
                       run_summary.json: frames of s1..sN = an uninterrupted run's

    The 20 frames of s4 the kill lost are not counted: they left no output."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO / "tests")]),
           "DUPLEXEVAL_CACHE": str(tmp_path / "cache")}
    argv = ["run", "--system", "test_kill_resume:KillingSilence", "--dataset",
            str(sample_voiced), "--protocol", "single", "--window", "2", "--out"]
    clean = _cli([*argv, "clean"], tmp_path, env)
    assert clean.wait(timeout=300) == 0
    killed = _cli([*argv, "killed"], tmp_path, {**env, "KILL_AT": "4:20"})
    assert killed.wait(timeout=300) == -signal.SIGKILL
    after_kill = json.loads((tmp_path / "killed" / "run_summary.json").read_text())
    assert after_kill["samples"] == 3 and after_kill["frames_stepped"] == _frames_of(
        tmp_path / "killed") > 0
    assert after_kill["wall_seconds"] > 0
    resumed = _cli([*argv, "killed"], tmp_path, env)
    assert resumed.wait(timeout=300) == 0
    got, want = (json.loads((tmp_path / r / "run_summary.json").read_text())
                 for r in ("killed", "clean"))
    assert got["frames_stepped"] == want["frames_stepped"] == _frames_of(tmp_path / "clean")
    assert got["model_seconds"] == want["model_seconds"] == round(
        want["frames_stepped"] * 480 / 24000, 6)
    assert (got["samples"], got["failed"]) == (want["samples"], want["failed"])
