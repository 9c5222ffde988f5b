"""The public names of ``duplexeval`` (the facade the README and the docs teach) are pinned:
adding, removing or rebinding one is a decision recorded here and in CHANGELOG.md, not an
accident.  ``import duplexeval`` stays cheap: the facade imports its names on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import duplexeval

PUBLIC = [
    "BENCHMARKS", "PEERS", "RECIPES", "SUITES", "SYSTEMS", "TTS_ENGINES", "VARIANTS",
    "Benchmark", "Capabilities", "Cell", "Dataset", "Dialogue", "EvalResult", "Registry",
    "Session", "SessionSpec", "StepOutput", "System", "__version__", "evaluate",
    "load_dataset", "load_results", "load_system", "open_run", "results", "verify",
]
"""``duplexeval.__all__``, in its order."""


def test_the_public_names_are_pinned() -> None:
    assert duplexeval.__all__ == PUBLIC


def test_each_public_name_is_the_object_the_docs_name() -> None:
    from duplexeval.benchmarks import evaluate, verify_bundle
    from duplexeval.results import load
    from duplexeval.runs import open_run
    from duplexeval.version import __version__

    assert duplexeval.evaluate is evaluate
    assert duplexeval.verify is verify_bundle
    assert duplexeval.open_run is open_run
    assert duplexeval.results.load is load is duplexeval.load_results
    assert duplexeval.__version__ == __version__
    from duplexeval.benchmarks import BENCHMARKS
    from duplexeval.data import Dataset
    from duplexeval.registry import Registry
    from duplexeval.systems import (
        SYSTEMS,
        Capabilities,
        Session,
        SessionSpec,
        StepOutput,
        System,
        load_system,
    )

    assert (duplexeval.System, duplexeval.Session, duplexeval.SessionSpec,
            duplexeval.Capabilities, duplexeval.StepOutput) == (System, Session, SessionSpec,
                                                                 Capabilities, StepOutput)
    assert duplexeval.load_system is load_system and duplexeval.SYSTEMS is SYSTEMS
    assert duplexeval.BENCHMARKS is BENCHMARKS and duplexeval.Dataset is Dataset
    assert duplexeval.Registry is Registry
    for name in PUBLIC:  # every public name resolves
        assert getattr(duplexeval, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = duplexeval.nothing  # type: ignore[attr-defined]


def test_importing_the_package_imports_no_stage() -> None:
    code = ("import sys, duplexeval; "
            "print(sorted(m for m in sys.modules if m.startswith('duplexeval')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "['duplexeval', 'duplexeval.version']"
