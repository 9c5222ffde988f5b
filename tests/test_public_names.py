"""The public names of ``duplexeval`` (the facade the README and the docs teach) are pinned:
adding, removing or rebinding one is a decision recorded here and in CHANGELOG.md, not an
accident.  ``import duplexeval`` stays cheap: the facade imports its names on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import duplexeval

PUBLIC = ["__version__", "evaluate", "open_run", "results", "verify"]
"""``duplexeval.__all__``, in its order."""


def test_the_public_names_are_pinned() -> None:
    assert duplexeval.__all__ == PUBLIC


def test_each_public_name_is_the_object_the_docs_name() -> None:
    from duplexeval.benchmarks.evaluate import evaluate
    from duplexeval.benchmarks.verify import verify_bundle
    from duplexeval.results import load
    from duplexeval.runs.directory import open_run
    from duplexeval.version import __version__

    assert duplexeval.evaluate is evaluate
    assert duplexeval.verify is verify_bundle
    assert duplexeval.open_run is open_run
    assert duplexeval.results.load is load
    assert duplexeval.__version__ == __version__
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = duplexeval.nothing  # type: ignore[attr-defined]


def test_importing_the_package_imports_no_stage() -> None:
    code = ("import sys, duplexeval; "
            "print(sorted(m for m in sys.modules if m.startswith('duplexeval')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "['duplexeval', 'duplexeval.version']"
