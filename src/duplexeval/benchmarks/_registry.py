"""The benchmarks ``duplexeval eval`` knows: :data:`BENCHMARKS` (entry-point group
``duplexeval.benchmarks``: ``name = "package.module:BENCHMARK"``, a
:class:`~duplexeval.benchmarks._base.Benchmark`)."""

from __future__ import annotations

from duplexeval.benchmarks._base import Benchmark
from duplexeval.registry import Registry, instance_of

__all__ = ["BENCHMARKS"]


BENCHMARKS: Registry[Benchmark] = Registry("benchmark", "benchmarks", {
    "m3": "duplexeval.benchmarks._m3:M3",
    "flexi": "duplexeval.benchmarks._flexi:FLEXI",
    "mtr": "duplexeval.benchmarks._mtr:MTR",
    "fdb-v1": "duplexeval.benchmarks._fdb_v1:FDB_V1",
}, instance_of(Benchmark), sort=False)
"""The benchmarks by name (``m3``, ``flexi``, ``mtr``, ``fdb-v1``, and any a package adds)."""
