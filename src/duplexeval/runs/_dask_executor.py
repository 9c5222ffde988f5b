"""The Dask executor: a run's work units on a Dask cluster (``duplexeval run --executor dask``).

Each unit (:mod:`duplexeval.runs._units`: one pass with its forks, or one sample under
``single``) is one Dask task, :func:`~duplexeval.runs._units.run_unit_on_worker`.  The worker
rebuilds the system from its class and arguments once per worker process
(:class:`~duplexeval.runs._units.SystemRef`), reads the dialogue's audio from its path and writes
the unit's sample files (wavs, then the record) atomically into the run directory, which must
therefore be on a file system every worker sees, at the same path.  The client holds the run's
lock, writes ``config.json`` before the first task and the metadata and summary after the last,
as the local executor does; the outputs are byte-identical to a local run's.

The client keeps one unit in flight per free worker slot (worker threads, bounded by the
resources units ask for), so a worker holds only the unit it runs.  Losing a worker loses only
the sample files it had not renamed into place: the scheduler reruns its unit elsewhere, and
the rerun skips the unit's finished samples.  A unit whose
workers die ``distributed.scheduler.allowed-failures`` times (Dask's default: 3) gets a
``failed`` record for each unfinished sample, written by the client; like any failed sample it
runs again when the run is resumed.

Without a scheduler address the executor starts a ``LocalCluster`` of worker processes bound to
127.0.0.1 (one thread each, no dashboard) for the run and stops it afterwards.  ``resources``
(``--unit-resources GPU=1``) are requested by every unit, so a unit runs only on a worker that
declares them (``dask worker ... --resources GPU=1``); the workers of a local cluster declare
them once each.  Workers should run one thread each (``--nthreads 1``): a worker's system is
shared by its threads.

:meth:`DaskExecutor.map` spreads other work the same way (``duplexeval analyze`` and ``score``
with ``--executor dask``: the analysis's sample batches, the judge calls): one task per item,
one in flight per free worker slot, results handed to the client as they finish; those tasks
ask for no resources.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

from duplexeval.errors import DuplexevalError
from duplexeval.runs._units import (
    OnDone,
    SystemRef,
    UnitReport,
    UnitTask,
    record_lost,
    run_unit_on_worker,
)
from duplexeval.systems._base import System

__all__ = ["DaskExecutor", "parse_resources"]

A = TypeVar("A")
R = TypeVar("R")

CONNECT_TIMEOUT_S = 3.0
"""How long the client tries to reach a ``--scheduler`` before giving up."""


def _distributed() -> ModuleType:
    try:
        import distributed
    except ImportError:
        raise DuplexevalError("--executor dask needs the dask extra: "
                              "pip install 'duplexeval[dask]'") from None
    return distributed


def parse_resources(pairs: Sequence[str]) -> dict[str, float]:
    """``KEY=NUMBER`` pairs (``--unit-resources GPU=1``) as a dict."""
    out: dict[str, float] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        try:
            amount = float(value)
        except ValueError:
            amount = -1.0
        if not sep or not key or amount <= 0:
            raise DuplexevalError(f"--unit-resources {pair!r}: expected NAME=AMOUNT with a "
                                  "positive amount, e.g. GPU=1")
        out[key] = amount
    return out


def _probe(address: str) -> None:
    """Fail at once, in one line, when a ``tcp://HOST:PORT`` scheduler does not accept a TCP
    connection (Dask's client would retry until its timeout); other schemes go to Dask."""
    scheme, sep, rest = address.rpartition("://")
    host, _, port = rest.rpartition(":")
    if (sep and scheme != "tcp") or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise DuplexevalError(f"cannot reach the Dask scheduler at {address}: "
                              f"{exc.strerror or _first_line(exc)}") from None


def _handshake(address: str) -> None:
    """One Dask handshake with the scheduler, so that a port that answers but is no Dask
    scheduler fails in one line too (a half-made ``Client`` would print its own errors)."""
    from distributed.comm.core import connect

    async def shake() -> None:
        comm = await connect(address, timeout=CONNECT_TIMEOUT_S)  # type: ignore[no-untyped-call]
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(shake(), CONNECT_TIMEOUT_S + 1))
    except Exception as exc:
        hint = "" if isinstance(exc, OSError) else " (is it a Dask scheduler?)"
        raise DuplexevalError(f"cannot reach the Dask scheduler at {address}: "
                              f"{type(exc).__name__}: {_first_line(exc)}{hint}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass
class DaskExecutor:
    """Runs units as tasks on a Dask cluster: the one at ``scheduler`` (``tcp://HOST:PORT``), or
    a local cluster of ``workers`` processes (default: one per CPU).  Use it as a context
    manager to connect (or start the cluster) before the run and keep it for several runs;
    :meth:`run` outside one connects for that run alone."""

    scheduler: str | None = None
    workers: int | None = None
    resources: Mapping[str, float] = field(default_factory=dict)
    _stack: ExitStack | None = field(default=None, init=False, repr=False)
    _client: Any = field(default=None, init=False, repr=False)

    def __enter__(self) -> DaskExecutor:
        """Connect to the scheduler (or start the local cluster) now: an unreachable
        scheduler or missing resources fail here, before the run writes anything."""
        if self.scheduler:
            _probe(self.scheduler)
        dist = _distributed()
        if self.scheduler:
            _handshake(self.scheduler)
        with ExitStack() as stack:
            self._client = stack.enter_context(self._connect(dist))
            self._check_resources(self._client)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            stack.close()

    def run(self, tasks: Sequence[UnitTask], system: System, done: OnDone) -> None:
        """Submit every task and call ``done`` as each finishes (see the module docstring)."""
        if not tasks:
            return
        if self._client is None:
            with self:
                return self.run(tasks, system, done)
        dist = _distributed()
        ref = SystemRef.of(system)
        self._drive(lambda task: (run_unit_on_worker, task, ref), tasks, dict(self.resources),
                    lambda i, future: done(tasks[i], _report(future, tasks[i], dist)))

    def map(self, fn: Callable[[A], R], items: Sequence[A],
            done: Callable[[int, R], None]) -> None:
        """``done(i, fn(items[i]))`` as each item's task finishes on a worker (the
        :class:`~duplexeval.runs._execution.TaskMap` of analysis and judge calls); a task's
        exception is raised here, a task whose workers kept dying is one line."""
        if not items:
            return
        if self._client is None:
            with self:
                return self.map(fn, items, done)
        dist = _distributed()

        def finished(i: int, future: Any) -> None:
            try:
                result = future.result()
            except dist.KilledWorker as exc:
                raise DuplexevalError(f"task {i} of {getattr(fn, '__name__', fn)}: its "
                                      f"workers died ({_first_line(exc)})") from None
            done(i, result)

        self._drive(lambda item: (fn, item), items, {}, finished)

    def _drive(self, call: Callable[[Any], tuple[Any, ...]], items: Sequence[Any],
               resources: dict[str, float], finished: Callable[[int, Any], None]) -> None:
        """Submit ``call(item)`` (a function and its arguments) per item, keeping one task per
        free worker slot in flight (a worker holds only the task it runs, so a worker that
        dies is blamed for that task alone); ``finished(i, future)`` as each ends."""
        dist, client = _distributed(), self._client
        token = uuid.uuid4().hex[:8]
        queue = list(enumerate(items))[::-1]
        running: dict[Any, int] = {}
        completed = dist.as_completed([], loop=client.loop)

        def submit() -> None:
            while queue and len(running) < self._slots(client, resources):
                i, item = queue.pop()
                fn, *args = call(item)
                future = client.submit(fn, *args, pure=False, key=f"duplexeval-{token}-{i:06d}",
                                       resources=resources or None)
                running[future] = i
                completed.add(future)

        try:
            submit()
            for future in completed:
                i = running.pop(future)  # released: a lost worker's done tasks stay done
                finished(i, future)
                submit()
        except BaseException:
            client.cancel(list(running))
            raise

    @staticmethod
    def _slots(client: Any, resources: Mapping[str, float]) -> int:
        """Tasks the cluster's workers can run at once (threads, bounded by the resources the
        tasks ask for); at least one, so that a cluster still starting gets work."""
        total = 0
        for w in client.scheduler_info().get("workers", {}).values():
            have = w.get("resources", {})
            total += min([int(w.get("nthreads", 1))] + [int(have.get(k, 0) // v)
                                                        for k, v in resources.items()])
        return max(1, total)

    @contextmanager
    def _connect(self, dist: ModuleType) -> Iterator[Any]:
        if self.scheduler:
            logger = logging.getLogger("distributed")
            level = logger.level
            logger.setLevel(logging.CRITICAL)  # connection retries are not the user's news
            try:
                client = dist.Client(self.scheduler, timeout=CONNECT_TIMEOUT_S,
                                     set_as_default=False)
            except (OSError, TimeoutError) as exc:
                raise DuplexevalError(f"cannot reach the Dask scheduler at {self.scheduler}: "
                                      f"{_first_line(exc)}") from None
            finally:
                logger.setLevel(level)
            with client:
                yield client
            return
        with warnings.catch_warnings():
            # another cluster may hold the default HTTP port: a free one is taken, say nothing
            warnings.filterwarnings("ignore", message="Port .* is already in use")
            cluster = dist.LocalCluster(n_workers=self.workers or os.cpu_count() or 1,
                                        threads_per_worker=1, processes=True,
                                        host="127.0.0.1", dashboard_address=None,
                                        silence_logs=logging.CRITICAL,
                                        resources=dict(self.resources) or None)
        with cluster, dist.Client(cluster, set_as_default=False) as client:
            yield client

    def _check_resources(self, client: Any) -> None:
        """A unit that asks for resources no worker has would wait forever: refuse."""
        if not self.resources:
            return
        workers = client.scheduler_info().get("workers", {}).values()
        if workers and not any(all(w.get("resources", {}).get(k, 0) >= v
                                   for k, v in self.resources.items()) for w in workers):
            wanted = " ".join(f"{k}={v:g}" for k, v in self.resources.items())
            raise DuplexevalError(f"no worker of {self.scheduler} declares the resources "
                                  f"{wanted}; start workers with `dask worker "
                                  f"{self.scheduler} --nthreads 1 --resources {wanted}`")


def _report(future: Any, task: UnitTask, dist: ModuleType) -> UnitReport:
    """The unit's report; a unit whose workers kept dying gets ``failed`` records."""
    try:
        report: UnitReport = future.result()
    except dist.KilledWorker as exc:
        why = f"KilledWorker: the workers running unit {task.unit.key} died ({exc})"
        report = record_lost(task, why)
        if task.fail_fast and report.failed:
            raise DuplexevalError(why) from None
    return report
