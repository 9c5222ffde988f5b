"""The ``>>>`` examples in the public modules' docstrings run as written (``make test`` runs
them here, module by module, so a docstring example cannot drift from the code)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["duplexeval.timeline", "duplexeval.version"]
"""The modules whose docstrings carry examples (the ``Span`` algebra first, as pyannote.core)."""


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
