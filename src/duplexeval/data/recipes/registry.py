"""The table of ``duplexeval data import FORMAT`` recipes, and the staged output they write.

A recipe is a module that defines ``RECIPE = Recipe(...)``; adding one is one line in
:data:`RECIPE_MODULES`.  The command line gives each recipe a subcommand
``data import NAME SOURCE -o DATASET_DIR`` with the shared options (``--split``, ``--force``)
and the recipe's own (``add_arguments``), then calls ``run(args, staging)``, where ``staging``
is an empty folder beside ``DATASET_DIR`` that becomes ``DATASET_DIR`` only when the recipe
returns (:func:`staged_output`): a malformed source leaves nothing written.

Recipes read files the user has; none downloads anything.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ...errors import DuplexevalError

__all__ = ["RECIPE_MODULES", "Recipe", "recipe", "recipes", "staged_output"]

RECIPE_MODULES: tuple[str, ...] = (
    "duplexeval.data.recipes.candor",
    "duplexeval.data.recipes.magicdata",
    "duplexeval.data.recipes.topiocqa",
)
"""Modules defining ``RECIPE``, in the order ``data import --help`` lists them."""


@dataclass(frozen=True)
class Recipe:
    """One importer: ``run(args, staging)`` writes the dataset into ``staging`` and returns the
    line printed on success."""

    name: str
    help: str
    source_help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Path], str]
    writes_specs: bool = False
    """True when the recipe writes dialogue specs (``specs/``) that ``--synth`` can voice."""


def recipes() -> dict[str, Recipe]:
    """Every registered recipe by name."""
    out: dict[str, Recipe] = {}
    for module_name in RECIPE_MODULES:
        item: Recipe = importlib.import_module(module_name).RECIPE
        out[item.name] = item
    return out


def recipe(name: str) -> Recipe:
    """The recipe called ``name``; a one-line error listing the known ones otherwise."""
    table = recipes()
    if name not in table:
        raise DuplexevalError(f"unknown import format {name!r}; known: {', '.join(table)}")
    return table[name]


@contextlib.contextmanager
def staged_output(out: Path, force: bool = False) -> Iterator[Path]:
    """An empty folder next to ``out``; renamed onto ``out`` when the block succeeds, removed
    when it raises.  An existing ``out`` is an error unless ``force`` (then it is replaced)."""
    out = Path(out)
    if out.exists() and not force:
        raise DuplexevalError(f"{out} already exists; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        trash = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, trash)
        os.replace(staging, out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, out)
