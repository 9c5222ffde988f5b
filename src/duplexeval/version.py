"""The version of duplexeval (recorded in every output).

The version comes from git tags, through the build backend (hatch-vcs, i.e. setuptools-scm):
a commit tagged ``vX.Y.Z`` installs as ``X.Y.Z``, any other as a dev version after the last
tag (``0.1.1.dev5+g62de404``; before the first tag, after the fallback version
``0.1.0``: ``0.1.1.dev<N>+g<rev>``, N counting every commit).

``__version__`` is the release part of it (``0.1.1`` there): the same for every commit until
the next release, because it is part of what run configs, analysis settings and results record
and of the keys of their caches, so it must not change with each commit (an analysis cached
under one commit stays valid under the next).  Which commit a ``duplexeval`` is, when it is not
a release, is what :func:`describe` adds: ``duplexeval --version`` prints it, and
:func:`git_revision` is the commit that run configs and evaluation manifests record.
"""

from __future__ import annotations

import functools
import re
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["__version__", "describe", "git_revision", "release_of"]


def release_of(installed: str) -> str:
    """The release part of a PEP 440 version: ``0.1.1.dev5+g62de404`` → ``0.1.1``.

    >>> release_of("0.1.dev12+g62de404.d20261202")
    '0.1'
    >>> release_of("1.2.0")
    '1.2.0'
    """
    found = re.match(r"\d+(?:\.\d+)*", installed)
    return found.group(0) if found else installed


def _installed() -> str:
    try:
        return version("duplexeval")
    except PackageNotFoundError:  # run from a source folder that was never installed
        return "0+unknown"


__version__ = release_of(_installed())

_HERE = Path(__file__).resolve()


def _git(*args: str) -> str | None:
    """``git ARGS`` in this file's folder; its stripped output, or ``None`` when it fails."""
    try:
        done = subprocess.run(["git", *args], cwd=_HERE.parent, capture_output=True, text=True,
                              timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def describe() -> str:
    """``__version__``, with the git revision when this code is a checkout of duplexeval that is
    not its release: ``0.1.0`` for an installed package or a commit tagged ``v0.1.0``, else
    ``0.1.1 (git 62de404)``, with ``, modified`` when tracked files differ from that commit.

    Only a repository whose work tree holds this very file counts, so a package installed
    inside another project's repository is not described by that project's commits.
    """
    top = _git("rev-parse", "--show-toplevel")
    if top is None or (Path(top) / "src" / "duplexeval" / "version.py").resolve() != _HERE:
        return __version__
    if _git("describe", "--tags", "--exact-match", "HEAD") == f"v{__version__}":
        return __version__
    revision = _git("rev-parse", "--short", "HEAD")
    if revision is None:  # a repository without a commit yet
        return __version__
    modified = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return f"{__version__} (git {revision}{', modified' if modified else ''})"


@functools.cache
def git_revision() -> str | None:
    """The commit of the checkout holding this code (``git rev-parse HEAD``; ``None`` outside
    a repository), asked once per process: what ``config.json`` and ``eval.json`` record.

    Once, because a process runs the code it imported, whatever is committed afterwards: a
    commit made while a long job runs (``perf/demo_runs.py`` compares 20 minutes of runs in
    one process and its pool) must not make two runs of the same code record two revisions,
    which made their run directories differ in ``config.json`` alone.
    """
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=_HERE.parent, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None
