"""Benchmarks as first-class objects: each a versioned declaration of its cells and tables
(:mod:`~.base`; ``m3``, ``flexi``, ``mtr`` and any a package adds through :data:`BENCHMARKS`),
and :func:`evaluate`, which runs, analyses, scores and tabulates them into one bundle::

    from duplexeval import benchmarks
    from duplexeval.systems import load_system

    result = benchmarks.evaluate(load_system("scripted"), ["m3", "flexi"], "out/eval")
    print(result.manifest.tables["m3"])       # tables/m3/table5.md, ...

    # with the measures no benchmark has (:mod:`~.measures`): tables/m3/realism.md, ...
    more = benchmarks.Measures.of(["realism", "barge-in-cost"], repeats=4, counterfactual=True)
    benchmarks.evaluate(load_system("scripted"), ["m3"], "out/eval-measures", measures=more)
"""

from duplexeval.benchmarks._base import Benchmark, Cell, CellResult, MeasureScoring
from duplexeval.benchmarks._evaluate import EvalResult, evaluate
from duplexeval.benchmarks._manifest import EvalManifest
from duplexeval.benchmarks._measures import Measures
from duplexeval.benchmarks._registry import BENCHMARKS
from duplexeval.benchmarks._verify import VerifyReport, verify_bundle

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "Cell",
    "CellResult",
    "EvalManifest",
    "EvalResult",
    "MeasureScoring",
    "Measures",
    "VerifyReport",
    "evaluate",
    "verify_bundle",
]
