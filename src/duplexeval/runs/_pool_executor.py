"""The process-pool executor: a run's work units spread over this machine's cores.

Each unit (:mod:`duplexeval.runs._units`: one pass with its forks, or one sample under
``single``) runs in a worker process of a ``spawn`` pool, which rebuilds the system from its
class and arguments once per process (:class:`~duplexeval.runs._units.SystemRef`, as a Dask
worker does) and writes the unit's sample files atomically into the run directory; the caller
keeps the run's lock and writes ``config.json``, the metadata and the summary, as with the local
executor.  A unit's outputs do not depend on where or in which order it runs, so the run
directory is byte-identical to a local run's (``tests/test_pool_executor.py``).

Workers run one thread each (:data:`WORKER_THREADS`): CTranslate2's kernels are pinned
(:mod:`duplexeval.speech._kernels`), so Whisper's words do not depend on the thread count, and
the onnxruntime sessions that could (piper's) are given one intra-op thread whatever the process
(:mod:`duplexeval.speech.engines._piper`), so ``workers`` processes use ``workers`` cores.

Units are submitted longest first (frames to step: the pass from its context start to its last
fork's end, and each fork), so that the last one to finish is a short one and no core idles
while one long pass runs on.  One pool serves every run made while the executor is open (``with
ProcessExecutor() as pool:``, as the demo does over its cells and systems); :meth:`run` outside
one starts a pool for that run alone, except after a ``with`` that an exception (Ctrl-C) left:
then a thread still inside an evaluation is refused, rather than starting a new pool.
:meth:`map` (the analysis's batches, the judge calls)
runs in this process, as :class:`~duplexeval.runs._execution.LocalExecutor` does: the analysis
spreads its Whisper windows over its own pool (:mod:`duplexeval.speech._asr_pool`).

A worker that dies (killed, out of memory) breaks the pool: the run raises, and resuming it
runs again only the samples whose files were not renamed into place.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TypeVar

from duplexeval.errors import DuplexevalError
from duplexeval.runs._units import OnDone, SystemRef, UnitReport, UnitTask, run_unit_on_worker
from duplexeval.speech._asr_pool import _main_not_reimported
from duplexeval.systems._base import System

__all__ = ["WORKER_THREADS", "ProcessExecutor", "default_workers", "unit_cost"]

A = TypeVar("A")
R = TypeVar("R")

WORKER_THREADS = {"OMP_NUM_THREADS": "1", "DUPLEXEVAL_ORT_THREADS": "1",
                  "DUPLEXEVAL_ASR_THREADS": "1"}
"""The environment a worker sets before it imports any model: one thread per worker."""


def default_workers() -> int:
    """The CPUs this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def unit_cost(task: UnitTask) -> float:
    """Seconds of audio the unit steps, about: its shared pass from the context start to the
    last fork, and each fork's continuation to its input's end; what orders the submission."""
    samples = task.unit.samples
    start = min(min(s.context_start, s.input_start) for s in samples)
    shared = max(s.fork_time for s in samples) - start
    return max(0.0, shared) + sum(max(0.0, s.input_end - s.fork_time) for s in samples)


def _init_worker() -> None:
    os.environ.update(WORKER_THREADS)


@dataclass
class ProcessExecutor:
    """Runs a run's units in ``workers`` processes of this machine (default: one per CPU);
    see the module docstring."""

    workers: int | None = None
    _pool: ProcessPoolExecutor | None = field(default=None, init=False, repr=False)
    _closed: bool = field(default=False, init=False, repr=False)

    def __enter__(self) -> ProcessExecutor:
        """Start the pool (its workers load their models on their first unit)."""
        self._closed = False
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers or default_workers(),
                mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker)
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        """Stop the pool: units not started are cancelled, running ones finish.  Left by an
        exception (Ctrl-C, a failure), the executor refuses :meth:`run` until it is entered
        again, so that a thread still inside an evaluation (the demo's rows side by side)
        stops there instead of starting a pool of its own; left normally, a later run starts
        a pool for that run alone, as outside any ``with``."""
        self._closed = kind is not None
        self._stop()

    def _stop(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def run(self, tasks: Sequence[UnitTask], system: System, done: OnDone) -> None:
        """Run every task in the pool, longest first; ``done`` in this process as each
        finishes.  A unit's exception (``fail_fast``, a broken worker) cancels the units not
        started and is raised here once the running ones are back."""
        if not tasks:
            return
        if self._pool is None:
            if self._closed:
                raise DuplexevalError("the process pool was shut down by an interruption or "
                                      "a failure; resuming runs the unfinished samples")
            self.__enter__()
            try:
                return self.run(tasks, system, done)
            finally:
                self._stop()
        ref = SystemRef.of(system)
        order = sorted(range(len(tasks)), key=lambda i: -unit_cost(tasks[i]))
        pool = self._pool  # another thread may stop it: its submit then raises RuntimeError
        with _main_not_reimported():  # workers start on submit: an unguarded script is not rerun
            pending: dict[Future[UnitReport], int] = {
                pool.submit(run_unit_on_worker, tasks[i], ref): rank
                for rank, i in enumerate(order)}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: pending[f]):  # submission order
                    i = order[pending.pop(future)]
                    done(tasks[i], _result(future, tasks[i]))
        except BaseException:
            for future in pending:
                future.cancel()
            wait(pending)  # running units finish their files before the caller goes on
            raise

    def map(self, fn: Callable[[A], R], items: Sequence[A],
            done: Callable[[int, R], None]) -> None:
        """``done(i, fn(items[i]))`` for every item, in order, in this process (see the
        module docstring)."""
        for i, item in enumerate(items):
            done(i, fn(item))


def _result(future: Future[UnitReport], task: UnitTask) -> UnitReport:
    try:
        return future.result()
    except DuplexevalError:
        raise
    except Exception as exc:
        from concurrent.futures.process import BrokenProcessPool

        if isinstance(exc, BrokenProcessPool):
            raise DuplexevalError(f"unit {task.unit.key}: a worker process died ({exc}); "
                                  "resuming the run runs its unfinished samples") from None
        raise
