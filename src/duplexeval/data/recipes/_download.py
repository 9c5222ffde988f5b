"""``duplexeval data download NAME``: a peer benchmark's public data release, fetched from the
Hugging Face Hub only when asked and imported by the ``data import NAME`` recipe, into a dataset
folder in the cache that ``run`` and ``eval`` read.

Nothing else in duplexeval downloads data: the recipes read copies the user has, and this module
is the one place that fetches a release (``data download`` and, for ``eval``, the function
:func:`official_dataset`).

Which release: :data:`RELEASES` pins each name to a dataset repository, a revision and the files
the importer needs (``allow_patterns``, :func:`fnmatch.fnmatch` rules in which ``*`` also matches
``/``).  The repository ids come from ``datasets.md``; no commit of these repositories could be
checked from here, so each pins the branch ``main`` (see :attr:`Release.note`); ``revision=``
(``--revision``) takes a commit or tag instead.

The cache (:func:`duplexeval._cache.cache_root`)::

    CACHE/official/
      hub/                 huggingface_hub's own cache (``cache_dir=``): blobs, snapshots, refs;
                           an interrupted download keeps its finished files here and the next
                           call fetches only the rest
      NAME/                the imported dataset (``test.jsonl``, ``audio/``, ...), published by
                           one rename when the import has succeeded
        release.json       what it was made from: repository, revision, commit, files (last)
      .NAME.lock           one download and import of NAME at a time (POSIX ``flock``)
      .NAME.tmp-*/NAME/    an import under way: removed when it fails, and by the next call
                           when a killed one left it

Conventions:

* A dataset folder in the cache is complete or absent.  When ``NAME/release.json`` names the
  requested repository and revision, a call returns the folder without a request (and without
  importing ``huggingface_hub``); ``force=True`` resolves the revision again and re-imports.
* ``HF_HUB_OFFLINE`` (read at each call) is respected: offline, a complete folder is returned and
  anything else is a one-line error; no request is made.
* The hub is reached at ``endpoint``, else ``$HF_ENDPOINT``, else ``https://huggingface.co``
  (read at each call).  During a call ``HF_HUB_DISABLE_TELEMETRY`` and ``HF_HUB_DISABLE_XET`` are
  on (the environment and ``huggingface_hub.constants``, restored after): no telemetry or
  agent look-up, and files come over plain HTTP into ``hub/`` (Xet keeps a cache of its own
  under ``HF_HOME``); nothing is written outside ``CACHE/official``.
* Errors are one line (:class:`~duplexeval.errors.DuplexevalError`).  Exit code 2: an unknown
  name, a repository, revision or file the hub does not have (HTTP 401/403/404), offline mode
  without the dataset, or a release whose files are not what the importer reads.  Exit code 1
  (:class:`DownloadFailed`): the hub cannot be reached or fails (connection, timeout, HTTP 429
  or 5xx): trying again later may work.  Either way no dataset folder is left behind.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from duplexeval._cache import cache_root as default_cache_root
from duplexeval._fileio import atomic_write_json, exclusive_lock
from duplexeval.data.recipes._registry import recipe
from duplexeval.errors import DuplexevalError
from duplexeval.version import __version__

__all__ = ["RELEASES", "DownloadFailed", "Fetched", "Release", "fetch_official",
           "official_dataset", "official_root"]

DEFAULT_ENDPOINT = "https://huggingface.co"
RELEASE_FILE = "release.json"
SPLIT = "test"


class DownloadFailed(DuplexevalError):
    """The hub could not be reached or failed (exit code 1: trying again later may work)."""

    exit_code = 1


@dataclass(frozen=True)
class Release:
    """One public data release and how its files become the importer's ``SOURCE``."""

    name: str
    """The ``data import`` recipe that reads it, and the dataset folder's name."""
    repo_id: str
    """The Hugging Face dataset repository."""
    revision: str
    """The pinned commit hash or tag (``main`` where none could be checked)."""
    allow_patterns: tuple[str, ...]
    """The files downloaded: what the importer reads, nothing else."""
    marker: str
    """A file name the importer's ``SOURCE`` holds below it (found in the shallowest folder)."""
    levels_up: int
    """``SOURCE`` is this many folders above the marker file (at most the snapshot's root)."""
    expects: str
    """What the importer reads, for the mismatch message."""
    note: str
    """Where the repository id comes from and what is not verified."""


RELEASES: Mapping[str, Release] = {r.name: r for r in (
    Release(
        name="flexi", repo_id="qibai/FLEXI", revision="main",
        allow_patterns=("*/input.wav", "*/input.json", "*/pause.json", "*/interrupt.json",
                        "*/metadata.json", "*turn_taking.json"),
        marker="input.wav", levels_up=3,
        expects="SCENARIO/dialog_N/input.wav with its annotation files",
        note="audio on HF qibai/FLEXI (datasets.md section 6); its file tree is UNVERIFIED, "
             "and no commit was checked, so the branch main is pinned"),
    Release(
        name="mtr", repo_id="Jeff0918/MTR-DuplexBench", revision="main",
        allow_patterns=("*Dialogue_Quality/*.mp3",
                        "*Scenarios_encoding/dialogue_quality/semantic_turned_time_v3.jsonl"),
        marker="semantic_turned_time_v3.jsonl", levels_up=3,
        expects="Dialogue_Quality/*.mp3 and "
                "Scenarios_encoding/dialogue_quality/semantic_turned_time_v3.jsonl",
        note="data on HF Jeff0918/MTR-DuplexBench (datasets.md section 5; its file tree is "
             "UNVERIFIED); dialogue quality only, what `data import mtr` reads; no commit was "
             "checked, so the branch main is pinned"),
    Release(
        name="fdb-v1", repo_id="Ssshangfu/Full-Duplex-Bench-Data", revision="main",
        allow_patterns=("*/input.wav", "*/turn_taking.json", "*/pause.json",
                        "*/interrupt.json", "*/metadata.json", "*/transcription.json"),
        marker="input.wav", levels_up=4,
        expects="[v1_0/]TASK/ID/input.wav with its annotation files",
        note="a third-party HF mirror of Full-Duplex-Bench v1/v1.5 (datasets.md section 4 "
             "marks it UNVERIFIED; the authors publish on Google Drive); no commit was "
             "checked, so the branch main is pinned"),
)}
"""Every release ``data download`` knows, by name."""


@dataclass(frozen=True)
class Fetched:
    """What :func:`fetch_official` did."""

    path: Path
    """The dataset folder (M3 layout, split ``test``)."""
    release: Release
    revision: str
    commit: str
    """The commit the files came from (from ``release.json`` when nothing was done)."""
    imported: str | None
    """The importer's summary line when it ran now; ``None`` when the folder was complete."""


def official_root(cache_root: Path | None = None) -> Path:
    """``CACHE/official``: the hub's cache and the imported datasets."""
    return (cache_root if cache_root is not None else default_cache_root()) / "official"


def official_dataset(name: str, *, cache_root: Path | None = None, endpoint: str | None = None,
                     revision: str | None = None, force: bool = False) -> Path:
    """The dataset folder of the official release ``name`` (``flexi``, ``mtr``, ``fdb-v1``),
    downloaded and imported when the cache does not hold it complete (see the module
    docstring); ``revision`` overrides the pin, ``force`` re-resolves and re-imports."""
    return fetch_official(name, cache_root=cache_root, endpoint=endpoint, revision=revision,
                          force=force).path


def fetch_official(name: str, *, cache_root: Path | None = None, endpoint: str | None = None,
                   revision: str | None = None, force: bool = False) -> Fetched:
    """:func:`official_dataset`, saying what was done."""
    release = _release(name)
    revision = revision or release.revision
    root = official_root(cache_root)
    target = root / release.name
    done = _complete(target, release, revision)
    if done is not None and not force:
        return Fetched(target, release, revision, done, None)
    if _offline():
        missing = "force needs the hub" if done is not None else \
            f"{target} does not hold {release.repo_id}@{revision}"
        raise DuplexevalError(f"{release.name}: HF_HUB_OFFLINE is set and {missing}; unset it "
                              "to download")
    root.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(root / f".{release.name}.lock"):
        done = _complete(target, release, revision)
        if done is not None and not force:
            return Fetched(target, release, revision, done, None)
        _remove_leftovers(root, release.name)
        url = (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        snapshot, commit = _download(release, revision, root / "hub", url)
        line = _import(release, revision, snapshot, commit, url, target)
    return Fetched(target, release, revision, commit, line)


# -- which release, and is it there --------------------------------------------------------------

def _release(name: str) -> Release:
    if name not in RELEASES:
        raise DuplexevalError(f"unknown official dataset {name!r}; known: "
                              f"{', '.join(RELEASES)}")
    return RELEASES[name]


def _complete(target: Path, release: Release, revision: str) -> str | None:
    """The commit recorded in ``target/release.json`` when it holds ``release`` at
    ``revision``; ``None`` otherwise."""
    try:
        data = json.loads((target / RELEASE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("repo_id") != release.repo_id \
            or data.get("revision") != revision or not (target / f"{SPLIT}.jsonl").is_file():
        return None
    return str(data.get("commit", ""))


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}




def _remove_leftovers(root: Path, name: str) -> None:
    """Staging folders a killed call left (safe: the caller holds the release's lock)."""
    for path in root.glob(f".{name}.tmp-*"):
        shutil.rmtree(path, ignore_errors=True)


# -- the download --------------------------------------------------------------------------------

_HUB_SETTINGS = {"HF_HUB_DISABLE_TELEMETRY": True, "HF_HUB_DISABLE_XET": True,
                 "HF_HUB_OFFLINE": False}
"""Set for the call, in the environment and in ``huggingface_hub.constants`` (which reads the
environment once, at its import); offline mode was checked before."""


@contextlib.contextmanager
def _hub() -> Iterator[ModuleType]:
    """``huggingface_hub`` with telemetry and Xet off and its warnings quiet (a failure is our
    one line); the settings are restored after."""
    saved_env = {key: os.environ.get(key) for key in _HUB_SETTINGS}
    os.environ.update({key: "1" if on else "0" for key, on in _HUB_SETTINGS.items()})
    log = logging.getLogger("huggingface_hub")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        import huggingface_hub
        from huggingface_hub import constants

        saved = {key: getattr(constants, key) for key in _HUB_SETTINGS}
        try:
            for key, value in _HUB_SETTINGS.items():
                setattr(constants, key, value)
            yield huggingface_hub
        finally:
            for key, value in saved.items():
                setattr(constants, key, value)
    finally:
        log.setLevel(level)
        for key, old in saved_env.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


def _download(release: Release, revision: str, hub_cache: Path, endpoint: str
              ) -> tuple[Path, str]:
    """The snapshot folder of ``release`` at ``revision`` (only its ``allow_patterns``) and
    its commit; hub failures become one-line errors."""
    where = f"{release.name}: {release.repo_id}@{revision} from {endpoint}"
    with _hub() as hub:
        try:
            path = hub.snapshot_download(
                release.repo_id, repo_type="dataset", revision=revision,
                cache_dir=hub_cache, allow_patterns=list(release.allow_patterns),
                endpoint=endpoint, library_name="duplexeval", library_version=__version__)
        except Exception as exc:  # every failure of the hub call, classified below
            raise _hub_error(where, exc) from None
    snapshot = Path(path)
    return snapshot, snapshot.name


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _hub_error(where: str, exc: BaseException) -> DuplexevalError:
    """Exit 2 for what the hub does not have, exit 1 for a hub that fails or cannot be
    reached (see the module docstring)."""
    for cause in _chain(exc):
        names = {c.__name__ for c in type(cause).__mro__}
        if names & {"RepositoryNotFoundError", "RevisionNotFoundError",
                     "RemoteEntryNotFoundError"}:
            return DuplexevalError(f"{where}: not found ({_first_line(cause)})")
        status = getattr(getattr(cause, "response", None), "status_code", None)
        if isinstance(status, int) and status in (401, 403, 404):
            return DuplexevalError(f"{where}: not found or not accessible (HTTP {status})")
        if isinstance(status, int) and (status == 429 or status >= 500):
            return DownloadFailed(f"{where}: the hub failed (HTTP {status}); try again later")
        if names & {"TransportError", "ConnectionError", "TimeoutError", "TimeoutException"}:
            return DownloadFailed(f"{where}: cannot reach the hub ({_first_line(cause)})")
    return DownloadFailed(f"{where}: download failed ({_first_line(exc)})")


# -- the import ----------------------------------------------------------------------------------

def _source(release: Release, snapshot: Path) -> Path:
    """The importer's ``SOURCE`` in the snapshot: ``levels_up`` folders above the shallowest
    marker file, at most the snapshot itself."""
    found = sorted(snapshot.rglob(release.marker), key=lambda p: (len(p.parts), str(p))) \
        if snapshot.is_dir() else []
    if not found:
        raise DuplexevalError(
            f"{release.name}: {release.repo_id} has no file matching "
            f"{', '.join(release.allow_patterns)}; `data import {release.name}` expects "
            f"{release.expects}")
    depth = len(found[0].relative_to(snapshot).parts)
    return found[0].parents[min(release.levels_up, depth) - 1]


def _arguments(release: Release, source: Path, out: Path) -> argparse.Namespace:
    """The arguments ``data import NAME SOURCE -o OUT`` would pass, the recipe's own options
    at their defaults."""
    parser = argparse.ArgumentParser(add_help=False)
    item = recipe(release.name)
    item.add_arguments(parser)
    args = parser.parse_args([])
    args.source, args.output, args.split, args.force = str(source), str(out), SPLIT, False
    return args


def _import(release: Release, revision: str, snapshot: Path, commit: str, endpoint: str,
            target: Path) -> str:
    """Import the snapshot into a staging folder beside ``target`` and publish it there with
    one rename; on any failure the staging folder goes and ``target`` is as it was."""
    source = _source(release, snapshot)
    staging = Path(tempfile.mkdtemp(prefix=f".{release.name}.tmp-{os.getpid()}-",
                                    dir=target.parent))
    out = staging / release.name
    try:
        try:
            line = recipe(release.name).run(_arguments(release, source, out), out)
        except DuplexevalError as exc:
            raise DuplexevalError(
                f"{release.name}: the files of {release.repo_id}@{revision} are not what "
                f"`data import {release.name}` reads ({exc.lines()[0]})") from None
        files = sorted(path for p in snapshot.rglob("*") if p.is_file()
                       and any(fnmatch.fnmatch(path := p.relative_to(snapshot).as_posix(), g)
                               for g in release.allow_patterns))
        atomic_write_json(out / RELEASE_FILE, _record(release, revision, commit, endpoint,
                                                      files))
        _publish(out, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return line


def _record(release: Release, revision: str, commit: str, endpoint: str,
            files: list[str]) -> dict[str, Any]:
    return {"name": release.name, "repo_id": release.repo_id, "repo_type": "dataset",
            "revision": revision, "commit": commit, "endpoint": endpoint,
            "allow_patterns": list(release.allow_patterns), "files": files,
            "importer": f"data import {release.name}", "duplexeval": __version__,
            "note": release.note}


def _publish(out: Path, target: Path) -> None:
    """Rename ``out`` onto ``target``; an older ``target`` (another revision, or ``force``)
    moves into ``out``'s staging folder first, which the caller removes."""
    if target.exists():
        os.replace(target, out.parent / f"old-{target.name}")
    os.replace(out, target)
