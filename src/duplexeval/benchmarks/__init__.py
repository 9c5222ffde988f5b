"""Benchmarks as first-class objects: each a versioned declaration of its cells and tables
(:mod:`~.base`; ``m3``, ``flexi``, ``mtr`` and any a package adds through :data:`BENCHMARKS`),
and :func:`evaluate`, which runs, analyses, scores and tabulates them into one bundle::

    from duplexeval import benchmarks
    from duplexeval.systems._registry import load_system

    result = benchmarks.evaluate(load_system("scripted"), ["m3", "flexi"], "out/eval")
    print(result.manifest.tables["m3"])       # tables/m3/table5.md, ...
"""

from duplexeval.benchmarks._base import Benchmark, Cell, CellResult
from duplexeval.benchmarks._evaluate import EvalResult, evaluate
from duplexeval.benchmarks._manifest import EvalManifest
from duplexeval.benchmarks._registry import BENCHMARKS
from duplexeval.benchmarks._verify import VerifyReport, verify_bundle

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "Cell",
    "CellResult",
    "EvalManifest",
    "EvalResult",
    "VerifyReport",
    "evaluate",
    "verify_bundle",
]
