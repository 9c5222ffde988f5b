"""The results reader: ``duplexeval.results.load(path)``, with versions.

A scored run's ``results.json`` (written by ``duplexeval score`` into ``RUN_DIR/scores/VARIANT/``)
is validated by the pydantic model :class:`~duplexeval.results._model.Results`; its
``schema_version`` (:data:`SCHEMA_VERSION`) changes with every incompatible change.

Conventions:

* ``path`` may be the file itself, a scores folder or a run directory: its one scoring, or its
  ``m3`` scores when several variants scored it (a run scored before per-variant folders has
  its results in ``scores/`` itself, which is read too).
* A file of a **newer** version than this package knows is refused with one line naming the
  file (upgrade duplexeval to read it); **older** versions (1: timing only, 2: with content)
  are read, their newer fields taking their defaults.  When an older file lies in a run
  directory, the run's protocol and dataset are filled in from its ``config.json``.
* Audio is never embedded: ``events[].audio`` is the sample's stereo wav relative to
  ``source.path`` (the run directory).
* The JSON Schema is generated from the model (:mod:`duplexeval.results._schema`).

Every problem is a one-line :class:`~duplexeval.errors.DuplexevalError` naming the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from duplexeval._fileio import has_non_finite, read_json
from duplexeval.errors import DuplexevalError
from duplexeval.results._content import ContentRecord, OfflineRecord
from duplexeval.results._model import SCHEMA_VERSION, DatasetRef, Results
from duplexeval.runs._directory import RunDir, ScoreFiles

__all__ = ["ScoredRun", "load", "load_scored", "read_content_records", "results_file"]

OLDEST_VERSION = 1
"""The oldest ``schema_version`` this reader upgrades."""

M = TypeVar("M", bound=BaseModel)

Scorer = Callable[[Path], None]
"""Scores a run directory in place (writes its ``scores/`` folder)."""


def results_file(path: str | Path) -> Path:
    """The results file that ``path`` names: the file itself, the one in a scores folder, or
    the one of a run directory (which may not exist yet)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise DuplexevalError(f"{path}: no such file or folder")
    here = ScoreFiles(path).results
    if here.is_file():
        return here
    run = RunDir(path)
    if run.config_path.is_file():
        return _pick(run.scored(), run.scores().results, path)
    variants = [ScoreFiles(p) for p in sorted(path.iterdir())
                if p.is_dir() and ScoreFiles(p).results.is_file()]
    if variants:  # a folder of per-variant scores folders (RUN_DIR/scores, scores-truth)
        return _pick(variants, ScoreFiles(path / "m3").results, path)
    raise DuplexevalError(f"{path}: neither a results file, a scores folder nor a run "
                          f"directory (no {here.name}, no {run.config_path.name})")


def _pick(scored: list[ScoreFiles], default: Path, where: Path) -> Path:
    """One scoring among ``scored``: the only one, else ``default`` (the ``m3`` scores, which
    may not exist yet); several without ``m3`` must be named by their folder."""
    if len(scored) == 1:
        return scored[0].results
    if len(scored) > 1 and default not in [s.results for s in scored]:
        names = ", ".join(s.root.name for s in scored)
        raise DuplexevalError(f"{where}: scored by several variants ({names}); name one's "
                              f"folder, e.g. {scored[0].root}")
    return default


def load(path: str | Path) -> Results:
    """The results at ``path`` (see the module docstring), upgraded to this version."""
    file = results_file(path)
    if not file.is_file():
        raise DuplexevalError(f"{file}: not found; score the run first (duplexeval score "
                              f"{file.parent.parent})")
    data = read_json(file, "results file")
    if not isinstance(data, dict):
        raise DuplexevalError(f"{file}: not a results file (expected a JSON object)")
    if has_non_finite(data):  # a NaN token would print as "nan" in every table
        raise DuplexevalError(f"{file}: holds NaN or Infinity, which a results file never "
                              "does (strict JSON: a value that is not a number is null)")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < OLDEST_VERSION:
        raise DuplexevalError(f"{file}: not a results file (schema_version {version!r})")
    if version > SCHEMA_VERSION:
        raise DuplexevalError(f"{file}: results schema version {version} is newer than this "
                              f"duplexeval reads ({SCHEMA_VERSION}); upgrade duplexeval")
    results = _validate(file, {**data, "schema_version": SCHEMA_VERSION})
    if version < SCHEMA_VERSION:
        results = _fill_from_run(results, file)
    return results


def _validate(file: Path, data: dict[str, Any]) -> Results:
    try:
        return Results.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "top level"
        raise DuplexevalError(f"{file}: {where}: {first['msg']} "
                              f"({exc.error_count()} problem(s))") from None


def _fill_from_run(results: Results, file: Path) -> Results:
    """An older file in a run directory (``scores/`` or ``scores/VARIANT/``): the protocol and
    dataset from the run's config."""
    source = results.source
    found = [RunDir(p) for p in file.parents[1:3] if RunDir(p).config_path.is_file()]
    if source.kind != "run" or source.protocol or not found:
        return results
    run = found[0]
    try:
        config = run.read_config()
    except DuplexevalError:
        return results
    data = config.dataset
    dataset = DatasetRef(name=data.name, path=data.path, content_hash=data.content_hash,
                         language=data.language or "", domain=data.domain or "")
    filled = source.model_copy(update={"protocol": config.protocol, "dataset": dataset})
    return results.model_copy(update={"source": filled})


@dataclass(frozen=True)
class ScoredRun:
    """A scored run as the reports read it: the results and the scores folder beside them."""

    results: Results
    files: ScoreFiles
    path: Path
    """The path it was loaded from (a run directory, a scores folder or a results file)."""

    @property
    def run_dir(self) -> Path:
        """The run directory the scores belong to (``scores/VARIANT/``, ``scores-truth/...``
        or, for runs scored before per-variant folders, ``scores/``): the nearest parent with a
        ``config.json``, else the scores folder's parent."""
        for parent in self.files.root.parents[:2]:
            if RunDir(parent).config_path.is_file():
                return parent
        return self.files.root.parent

    @property
    def truth(self) -> bool:
        """Whether the scores were made from the truth analysis (``scores-truth``)."""
        truth_root = RunDir(self.run_dir).scores(truth=True).root.parent
        return truth_root in (self.files.root, self.files.root.parent)

    def judged(self) -> list[ContentRecord]:
        """The judged content records (empty when the run was scored without a judge)."""
        return _records(self.files.content, ContentRecord)

    def offline(self) -> list[OfflineRecord]:
        """The offline content records (empty when none were written)."""
        return _records(self.files.content_offline, OfflineRecord)


def _records(path: Path, model: type[M]) -> list[M]:
    if not path.is_file():
        return []
    out: list[M] = []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "line"
            raise DuplexevalError(f"{path}:{no}: {where}: {first['msg']}") from None
    return out


def read_content_records(path: str | Path) -> list[ContentRecord]:
    """The judged content records of ``path``: a ``content.jsonl`` file, or a scores folder
    holding one; a missing file or a bad line is one line naming the file (and the line)."""
    path = Path(path)
    file = ScoreFiles(path).content if path.is_dir() else path
    if not file.is_file():
        raise DuplexevalError(f"{file}: no such content file (`duplexeval score RUN_DIR "
                              "--judge-url URL --judge-model MODEL` writes one)")
    return _records(file, ContentRecord)


def load_scored(path: str | Path, scorer: Scorer | None = None) -> ScoredRun:
    """:func:`load` with the scores folder.  A run directory that has no results is scored
    first by ``scorer`` (e.g. ``score_run_dir`` with default settings) or, without one,
    refused with one line."""
    file = results_file(path)
    if file.exists() and not file.is_file():  # not "unscored": a folder, a FIFO in its place
        raise DuplexevalError(f"{file}: not a regular file")
    if not file.is_file():
        run_dir = next((p for p in file.parents if RunDir(p).config_path.is_file()),
                       file.parent.parent.parent)
        if scorer is None:
            raise DuplexevalError(f"{run_dir}: not scored (no {file.parent.name}/{file.name}); "
                                  f"run `duplexeval score {run_dir}` first")
        scorer(run_dir)
    return ScoredRun(load(file), ScoreFiles(file.parent), Path(path))
