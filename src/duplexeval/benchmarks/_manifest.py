"""``eval.json``: the manifest of an evaluation bundle, and the hashes it keeps.

Layout of a bundle (``duplexeval eval ... -o OUT``)::

    OUT/
      eval.json                      this manifest (written last)
      cells/{benchmark}/{cell}/      one run directory per cell; its scores in scores/{variant}/
      tables/{benchmark}/            the benchmark's tables (md, csv, tex) and figures, and
                                     the measures' tables (``--measures``: realism.md, ...)
      measures/{benchmark}/{cell}/   with ``--repeats`` or counterfactual pairs: the cell's
                                     run with repeated tries or twins
      judge-cache.sqlite             the judge's answers (with a judge): verify reads only these

``files`` maps every file a number depends on (relative to ``OUT``, ``/``-separated) to its
SHA-256: each cell's sample wavs and records, its analysis and its scores, and the tables.  A
run's ``.lock`` and ``run_summary.json`` (wall times) are left out: they change on a resume
that changes no number.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from duplexeval._fileio import sha256_file
from duplexeval.runs._directory import RunDir
from duplexeval.version import __version__

VOLATILE = frozenset(p.name for p in RunDir(Path()).volatile_files())
"""Names of run files no number depends on."""

__all__ = ["MANIFEST_FILE", "MANIFEST_VERSION", "CellEntry", "EvalManifest", "ScoringEntry",
           "file_hashes", "sha256_file"]

MANIFEST_FILE = "eval.json"
MANIFEST_VERSION: Final = 3
"""3: ``measures``, ``repeats`` and each cell's ``scorings``; 2: ``data`` of each cell and
``judge_cache``; 1: the first."""


class ScoringEntry(BaseModel):
    """One more scoring of a cell for a measure (``eval --measures``)."""

    model_config = ConfigDict(extra="forbid")
    variant: str
    run: str
    """The run directory it scored, relative to the bundle: the cell's, or its run with
    repeated tries or twins (``measures/...``)."""
    results: str
    """Its results file, relative to the bundle."""


class CellEntry(BaseModel):
    """One cell of the evaluation."""

    model_config = ConfigDict(extra="forbid")
    benchmark: str
    cell: str
    suite: str
    subset: str
    """``quick``, ``full`` or ``first N``: which dialogues of the suite."""
    protocol: str
    variant: str
    mute: bool
    status: Literal["done", "skipped"]
    reason: str | None = None
    """Why a skipped cell was not run."""
    run: str
    """The run directory, relative to the bundle."""
    results: str | None = None
    """The results file, relative to the bundle (``None`` when skipped)."""
    samples: int = 0
    failed: int = 0
    data: str = ""
    """What the cell ran on: ``suite NAME (SUBSET)`` for a bundled suite's build, or the
    dataset folder given with ``--data`` ('' in a version-1 manifest or a skipped cell)."""
    scorings: list[ScoringEntry] = Field(default_factory=list)
    """The cell's scorings for the measures (none without ``--measures``)."""
    not_measured: dict[str, str] = Field(default_factory=dict)
    """Measures asked that the cell could not give, each with why (skipped: e.g. ``realism``
    on a dataset whose reference channel is silent)."""


class EvalManifest(BaseModel):
    """``eval.json`` (``schema_version`` changes with any incompatible change)."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Literal[1, 2, 3] = 3
    tool: str = Field(default_factory=lambda: f"duplexeval {__version__}")
    git_revision: str | None = None
    benchmarks: dict[str, str]
    """Name -> version of each benchmark evaluated."""
    system: dict[str, Any]
    """Name, version, arguments and capabilities of the system under test."""
    judge: dict[str, Any] | None = None
    """The judge's model and endpoint, and the prompt versions (``None``: no judged metric)."""
    judge_cache: str | None = None
    """The judge's answer cache, relative to the bundle when it is inside it
    (``judge-cache.sqlite``; ``verify`` answers only from it), else its path."""
    cells: list[CellEntry]
    tables: dict[str, list[str]]
    """Benchmark -> its table files, relative to the bundle."""
    files: dict[str, str]
    """Relative path -> SHA-256 of every file a number depends on."""
    measures: list[str] = Field(default_factory=list)
    """The measures asked for (:data:`~duplexeval.benchmarks._measures.MEASURES`; none by
    default)."""
    repeats: int = 1
    """Tries per sample of the cells' runs for the stability measure (1: none)."""
    counterfactual_replacement: Literal["silence", "noise"] = "silence"
    """What replaced the user's act in the counterfactual twins (``counterfactual`` among
    the measures): ``silence`` (the act removed) or ``noise`` (its content removed)."""


HASH_THREADS = 4
"""Threads that hash a bundle's files (:func:`file_hashes`)."""


def file_hashes(root: Path, folders: list[Path]) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folders`` (sorted; temporary files and
    a run's volatile files left out: :meth:`~duplexeval.runs._directory.RunDir.volatile_files`)."""
    paths = [path for folder in folders
             for path in sorted(p for p in folder.rglob("*") if p.is_file())
             if path.name not in VOLATILE and ".tmp-" not in path.name]
    # hashlib releases the GIL on large buffers: the wavs hash on every core
    with ThreadPoolExecutor(max_workers=HASH_THREADS, thread_name_prefix="sha256") as pool:
        digests = list(pool.map(sha256_file, paths))
    return dict(sorted((path.relative_to(root).as_posix(), digest)
                       for path, digest in zip(paths, digests, strict=True)))
