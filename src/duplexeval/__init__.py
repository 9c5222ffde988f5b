"""duplexeval: benchmark full-duplex spoken dialogue systems (M3-DuplexBench, MTR-DuplexBench,
FLEXI) on one engine.

The public facade::

    import duplexeval
    from duplexeval.systems.registry import load_system

    result = duplexeval.evaluate(load_system("scripted"), ["m3", "flexi", "mtr"], "out/eval")
    report = duplexeval.verify("out/eval")          # offline: hashes, scores, tables
    run = duplexeval.open_run("out/eval/cells/m3/m3-chat-en-multi-gen")
    results = duplexeval.results.load(run.root)      # a run, its scores folder or the file

``evaluate`` is :func:`duplexeval.benchmarks.evaluate` (an
:class:`~duplexeval.benchmarks.EvalResult`), ``verify`` is
:func:`duplexeval.benchmarks.verify.verify_bundle`, ``open_run`` is
:func:`duplexeval.runs.open_run`.  They are imported on first use, so ``import duplexeval`` is
cheap.
"""

from __future__ import annotations

from typing import Any

from duplexeval.version import __version__

__all__ = ["__version__", "evaluate", "open_run", "results", "verify"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from duplexeval.benchmarks.evaluate import evaluate

        return evaluate
    if name == "verify":
        from duplexeval.benchmarks.verify import verify_bundle

        return verify_bundle
    if name == "open_run":
        from duplexeval.runs.directory import open_run

        return open_run
    if name == "results":
        import importlib

        return importlib.import_module("duplexeval.results")
    raise AttributeError(f"module 'duplexeval' has no attribute {name!r}")
