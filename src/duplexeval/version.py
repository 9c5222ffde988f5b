"""The version of duplexeval (read by the build backend and recorded in every output).

``__version__`` is the release number, the same for every commit until the next release: it is
part of what run configs, analysis settings and results record, so it must not change with each
commit (an analysis cached under one commit stays valid under the next).  Which commit a
``duplexeval`` is, when it is not a release, is what :func:`describe` adds: ``duplexeval
--version`` prints it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["__version__", "describe"]

__version__ = "0.1.0"

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
    ``0.1.0 (git 62de404)``, with ``, modified`` when tracked files differ from that commit.

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
