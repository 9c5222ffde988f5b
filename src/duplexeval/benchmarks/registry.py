"""The benchmarks ``duplexeval eval`` knows: :data:`BENCHMARKS` (entry-point group
``duplexeval.benchmarks``: ``name = "package.module:BENCHMARK"``, a
:class:`~duplexeval.benchmarks.base.Benchmark`)."""

from __future__ import annotations

from duplexeval.benchmarks.base import Benchmark
from duplexeval.errors import DuplexevalError
from duplexeval.registry import Registry

__all__ = ["BENCHMARKS"]


def _benchmark(found: object, what: str) -> Benchmark:
    if not isinstance(found, Benchmark):
        raise DuplexevalError(f"{what}: {found!r} is not a Benchmark")
    return found


BENCHMARKS: Registry[Benchmark] = Registry("benchmark", "benchmarks", {
    "m3": "duplexeval.benchmarks.m3:M3",
    "flexi": "duplexeval.benchmarks.flexi:FLEXI",
    "mtr": "duplexeval.benchmarks.mtr:MTR",
}, _benchmark, sort=False)
"""The benchmarks by name (``m3``, ``flexi``, ``mtr``, and any a package adds)."""
