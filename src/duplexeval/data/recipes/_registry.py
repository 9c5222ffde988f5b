"""The table of ``duplexeval data import FORMAT`` recipes, and the staged output they write.

A recipe is a :class:`Recipe` (a module's ``RECIPE = Recipe(...)``); adding one is one line in
:data:`RECIPES` (or a ``duplexeval.recipes`` entry point in another package).  The command line
gives each recipe a subcommand ``data import NAME SOURCE -o DATASET_DIR`` with the shared options
(``--split``, ``--force``) and the recipe's own (``add_arguments``), then calls ``run(args,
staging)``, where ``staging`` is an empty folder beside ``DATASET_DIR`` whose files move into
``DATASET_DIR`` only when the recipe returns (:func:`staged_output`): a malformed source leaves
nothing written, and the dataset's other splits stay.  A recipe with ``staged=False`` is given
``DATASET_DIR`` itself and checks it on its own (the peer benchmarks' importers, ``flexi`` and
``fdb-v1``).

Recipes read files the user has; none downloads anything (``data download``,
:mod:`.download`, fetches a peer's public release and hands it to the recipe of its name).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from duplexeval.errors import DuplexevalError
from duplexeval.registry import Registry, instance_of

__all__ = ["RECIPES", "Recipe", "recipe", "recipes", "staged_output"]

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
    staged: bool = True
    """False: ``run`` is given the output folder itself (and refuses to overwrite on its own)."""


RECIPES: Registry[Recipe] = Registry("import format", "recipes", {
    "candor": "duplexeval.data.recipes._candor:RECIPE",
    "magicdata": "duplexeval.data.recipes._magicdata:RECIPE",
    "topiocqa": "duplexeval.data.recipes._topiocqa:RECIPE",
    "flexi": "duplexeval.data.recipes._peers:FLEXI",
    "fdb-v1": "duplexeval.data.recipes._peers:FDB_V1",
    "mtr": "duplexeval.data.recipes._mtr:RECIPE",
}, instance_of(Recipe), sort=False)
"""The ``data import`` recipes (:class:`~duplexeval.registry.Registry`, entry-point group
``duplexeval.recipes``: ``name = "package.module:RECIPE"``, a :class:`Recipe`)."""


def recipes() -> dict[str, Recipe]:
    """Every registered recipe by name."""
    return RECIPES.all()


def recipe(name: str) -> Recipe:
    """The recipe called ``name``; a one-line error listing the known ones otherwise."""
    return RECIPES.get(name)


@contextlib.contextmanager
def staged_output(out: Path, guards: tuple[str, ...] = (), force: bool = False
                  ) -> Iterator[Path]:
    """An empty folder next to ``out``, removed when the block raises.  When it succeeds, its
    files move into ``out`` (each with an atomic rename, the ``*.jsonl`` files last), so
    ``out``'s other files stay.  ``guards`` are paths relative to ``out`` (``test.jsonl``,
    ``specs``) that must not exist yet unless ``force``."""
    out = Path(out)
    taken = [g for g in guards if (out / g).exists()]
    if taken and not force:
        raise DuplexevalError(f"{out} already holds {', '.join(taken)}; pass --force to "
                              "replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if not out.exists():
        os.replace(staging, out)
        return
    for guard in taken:
        target = out / guard
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    files = sorted((p for p in staging.rglob("*") if p.is_file()),
                   key=lambda p: (p.suffix == ".jsonl", str(p)))
    for path in files:
        target = out / path.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    shutil.rmtree(staging, ignore_errors=True)
