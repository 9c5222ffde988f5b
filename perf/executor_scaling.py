"""What does the Dask executor cost and gain?  The same run on the local executor and on local
Dask clusters of 1, 2, ... worker processes (one thread each, loopback).

The run: ``scripted`` (jitter 0.1) on the bundled sample-en voiced with the clip bank, under
multi-gen (4 units: one pass per dialogue and user channel, 22 samples).  ``scripted`` itself
is cheap (about 0.15 ms a frame), so ``--step-ms`` adds a sleep per frame, standing in for model
time spent off the CPU (a GPU, a server); ``--step-ms 0`` measures the pure overhead.

Printed per executor: cluster start (``LocalCluster`` up and a client connected), the run
(:func:`~duplexeval.runs.execute_run`: submit, run, write, metadata), cluster stop, the total,
the speed-up of the run against local, and the overhead: the total minus the local run's time
divided by the worker count (what a perfect split with free start-up would take).  Each Dask
run's files are checked byte-identical to the local run's (the summary's wall time aside).

Batched continuations (``--batch 1,8``): the same run on the local executor with the forks of
each pass stepped one at a time (batch size 1) and as batch rows (8).  ``scripted``'s batch
steps its rows one after another (not vectorised), so with ``--step-ms 0`` this measures the
driver; the simulated model time is spent once per batch step whatever the rows (a GPU step
that costs the same for 1 or 8 rows: an assumption, the upper bound of what batching gives),
so with ``--step-ms`` it shows what batching saves when the model step dominates.  Printed:
frames stepped (equal), batch steps, wall time, frames per second; outputs checked identical.

Usage: .venv/bin/python perf/executor_scaling.py [--workers 1,2,4] [--step-ms 0.5]
       [--batch 1,8]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval.data import Need, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import DaskExecutor, execute_run
from duplexeval.systems import BatchSession, Forced, Session, SessionSpec, StepOutput
from duplexeval.systems.builtin._scripted import ScriptedSystem

SAMPLE_EN = Path(__file__).resolve().parents[1] / "src" / "duplexeval" / "bundled" / "sample-en"


class _Slow(Session):
    def __init__(self, inner: Session, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        time.sleep(self.seconds)
        return self.inner.step(user, force)

    def snapshot(self) -> Any:
        return self.inner.snapshot()

    def restore(self, state: Any) -> None:
        self.inner.restore(state)

    def reseed(self, seed: int) -> None:
        self.inner.reseed(seed)

    def trace(self) -> dict[str, Any]:
        return self.inner.trace()

    def fork_batch(self, states: Any, seeds: Any) -> BatchSession:
        return _SlowBatch(self.inner.fork_batch(states, seeds), self.seconds)


class _SlowBatch(BatchSession):
    """Batch rows with the simulated model time spent once per batch step."""

    steps = 0

    def __init__(self, inner: BatchSession, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds

    @property
    def size(self) -> int:
        return self.inner.size

    def step(self, users: Any) -> list[StepOutput | None]:
        time.sleep(self.seconds)
        _SlowBatch.steps += 1
        return self.inner.step(users)

    def trace(self, row: int) -> dict[str, Any]:
        return self.inner.trace(row)


class SlowScripted(ScriptedSystem):
    """``scripted`` with ``step_ms`` of sleep per frame (simulated model time)."""

    name = "slow-scripted"

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return (*super().arg_names(), "step_ms")

    def open(self, spec: SessionSpec) -> Session:
        return _Slow(super().open(spec), self.float_arg("step_ms", 0.0) / 1000)


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name not in (".lock", "run_summary.json"):
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def _timed_run(executor: DaskExecutor | None, out: Path, **run: Any) -> dict[str, float]:
    t0 = time.monotonic()
    if executor is not None:
        executor.__enter__()
    t1 = time.monotonic()
    try:
        execute_run(out=out, progress=False, executor=executor, **run)
        t2 = time.monotonic()
    finally:
        if executor is not None:
            executor.__exit__(None, None, None)
    t3 = time.monotonic()
    return {"start": t1 - t0, "run": t2 - t1, "stop": t3 - t2, "total": t3 - t0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4",
                        help="Dask worker counts (default 1,2,4)")
    parser.add_argument("--batch", default="1,8",
                        help="batch sizes of the local batched-continuation rows (default 1,8)")
    parser.add_argument("--step-ms", type=float, default=0.5,
                        help="simulated model time per frame, ms (default 0.5)")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",") if n.strip()]
    with tempfile.TemporaryDirectory(prefix="executor-scaling-") as tmp:
        work = Path(tmp)
        source, _ = load_dataset(SAMPLE_EN, alignment=Need.REQUIRE)
        voice_bursts(source, work / "sample-en")
        dataset, _ = load_dataset(work / "sample-en", audio=Need.REQUIRE)
        plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN))
        system = SlowScripted(jitter="0.1", step_ms=f"{args.step_ms:g}")
        run = {"system": system, "dataset": dataset, "plan": plan, "seed": 5}
        batches = _batch_rows(work, [int(n) for n in args.batch.split(",") if n.strip()], run)
        rows = [("local", _timed_run(None, work / "local", **run))]
        reference = _files(work / "local")
        for n in counts:
            out = work / f"dask-{n}"
            rows.append((f"dask, {n} worker{'s' * (n > 1)}",
                         _timed_run(DaskExecutor(workers=n), out, **run)))
            assert _files(out) == reference, f"{out}: outputs differ from the local run"
        _print(rows, len(plan.samples), args.step_ms, counts)
        _print_batches(batches)


def _batch_rows(work: Path, sizes: list[int], run: dict[str, Any]) -> list[dict[str, float]]:
    """The local run at each batch size: frames, batch steps, wall seconds (outputs equal),
    after one untimed warm-up run (clip bank, resampling, imports)."""
    execute_run(out=work / "warm-up", progress=False, batch_size=sizes[0], **run)
    out, reference = [], None
    for size in sizes:
        target = work / f"batch-{size}"
        _SlowBatch.steps = 0
        t0 = time.monotonic()
        result = execute_run(out=target, progress=False, batch_size=size, **run)
        wall = time.monotonic() - t0
        files = _files(target)
        files.pop("config.json")  # records the batch size; nothing else differs
        reference = reference or files
        assert files == reference, f"{target}: outputs differ from batch size {sizes[0]}"
        out.append({"batch": size, "frames": result.frames_stepped,
                    "batch_steps": _SlowBatch.steps, "wall": wall})
    return out


def _print_batches(rows: list[dict[str, float]]) -> None:
    print("\nbatched continuations, local executor (frames counted as one fork at a time):")
    print(f"{'batch size':<12}{'frames':>9}{'batch steps':>13}{'wall s':>9}{'frames/s':>10}"
          f"{'speed-up':>10}")
    for r in rows:
        print(f"{r['batch']:<12}{r['frames']:>9}{r['batch_steps']:>13}{r['wall']:>9.2f}"
              f"{r['frames'] / r['wall']:>10.0f}{rows[0]['wall'] / r['wall']:>9.2f}x")
    print("outputs: identical at every batch size")


def _print(rows: list[tuple[str, dict[str, float]]], samples: int, step_ms: float,
           counts: list[int]) -> None:
    load = os.getloadavg()[0]
    print(f"scripted (+{step_ms:g} ms/frame) on sample-en, multi-gen, {samples} samples in 4 "
          f"units; {os.cpu_count()} CPUs, {platform.python_version()}, load {load:.2f}")
    print(f"{'executor':<18}{'start s':>9}{'run s':>9}{'stop s':>9}{'total s':>9}"
          f"{'run speed-up':>14}{'overhead s':>12}")
    base = rows[0][1]["run"]
    for (name, t), n in zip(rows, [1, *counts], strict=True):
        overhead = t["total"] - base / n
        print(f"{name:<18}{t['start']:>9.2f}{t['run']:>9.2f}{t['stop']:>9.2f}"
              f"{t['total']:>9.2f}{base / t['run']:>13.2f}x{overhead:>12.2f}")
    print("outputs: every Dask run byte-identical to the local run")
    print(json.dumps({name: {k: round(v, 3) for k, v in t.items()} for name, t in rows}))


if __name__ == "__main__":
    # the system class must be importable by name on the workers: use this file as a module
    import executor_scaling

    executor_scaling.main()
