"""duplexeval: benchmark full-duplex spoken dialogue systems (M3-DuplexBench, MTR-DuplexBench,
FLEXI, Full-Duplex-Bench) on one engine.

The public facade::

    import duplexeval

    result = duplexeval.evaluate(duplexeval.load_system("scripted"), ["m3", "flexi", "mtr"],
                                 "out/eval")
    report = duplexeval.verify("out/eval")          # offline: hashes, scores, tables
    run = duplexeval.open_run("out/eval/cells/m3/m3-chat-en-multi-gen")
    results = duplexeval.load_results(run.root)     # a run, its scores folder or the file

What a user needs, by topic (each name is the object of the module in brackets):

* evaluating: ``evaluate``, ``EvalResult`` [:mod:`duplexeval.benchmarks._evaluate`],
  ``verify`` [:func:`duplexeval.benchmarks._verify.verify_bundle`], ``Benchmark``, ``Cell``
  [:mod:`duplexeval.benchmarks._base`];
* reading: ``open_run`` [:mod:`duplexeval.runs._directory`], ``load_results`` and the module
  ``results`` [:mod:`duplexeval.results`];
* writing a system: ``System``, ``Session``, ``SessionSpec``, ``Capabilities``,
  ``StepOutput`` [:mod:`duplexeval.systems._base`], ``load_system``
  [:mod:`duplexeval.systems._registry`];
* data: ``Dataset``, ``Dialogue`` [:mod:`duplexeval.data._dialogue`], ``load_dataset``
  [:mod:`duplexeval.data._validate`];
* the registries a package extends through entry points: ``Registry``
  [:mod:`duplexeval.registry`], ``SYSTEMS``, ``VARIANTS``, ``BENCHMARKS``, ``SUITES``,
  ``RECIPES``, ``PEERS``, ``TTS_ENGINES``.

They are imported on first use, so ``import duplexeval`` is cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from duplexeval.version import __version__

__all__ = [
    "BENCHMARKS", "PEERS", "RECIPES", "SUITES", "SYSTEMS", "TTS_ENGINES", "VARIANTS",
    "Benchmark", "Capabilities", "Cell", "Dataset", "Dialogue", "EvalResult", "Registry",
    "Session", "SessionSpec", "StepOutput", "System", "__version__", "evaluate",
    "load_dataset", "load_results", "load_system", "open_run", "results", "verify",
]

_LAZY: dict[str, tuple[str, str]] = {
    "evaluate": ("duplexeval.benchmarks._evaluate", "evaluate"),
    "EvalResult": ("duplexeval.benchmarks._evaluate", "EvalResult"),
    "verify": ("duplexeval.benchmarks._verify", "verify_bundle"),
    "Benchmark": ("duplexeval.benchmarks._base", "Benchmark"),
    "Cell": ("duplexeval.benchmarks._base", "Cell"),
    "BENCHMARKS": ("duplexeval.benchmarks._registry", "BENCHMARKS"),
    "open_run": ("duplexeval.runs._directory", "open_run"),
    "load_results": ("duplexeval.results", "load"),
    "System": ("duplexeval.systems._base", "System"),
    "Session": ("duplexeval.systems._base", "Session"),
    "SessionSpec": ("duplexeval.systems._base", "SessionSpec"),
    "Capabilities": ("duplexeval.systems._base", "Capabilities"),
    "StepOutput": ("duplexeval.systems._base", "StepOutput"),
    "load_system": ("duplexeval.systems._registry", "load_system"),
    "SYSTEMS": ("duplexeval.systems._registry", "SYSTEMS"),
    "Dataset": ("duplexeval.data._dialogue", "Dataset"),
    "Dialogue": ("duplexeval.data._dialogue", "Dialogue"),
    "load_dataset": ("duplexeval.data._validate", "load_dataset"),
    "Registry": ("duplexeval.registry", "Registry"),
    "VARIANTS": ("duplexeval.metrics._base", "VARIANTS"),
    "SUITES": ("duplexeval.suites._registry", "SUITES"),
    "RECIPES": ("duplexeval.data.recipes._registry", "RECIPES"),
    "PEERS": ("duplexeval.peers._registry", "PEERS"),
    "TTS_ENGINES": ("duplexeval.speech._tts", "TTS_ENGINES"),
}
"""Public name -> (module, attribute), imported on first use."""


def __getattr__(name: str) -> Any:
    if name == "results":
        return importlib.import_module("duplexeval.results")
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'duplexeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
