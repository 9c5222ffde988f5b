"""Where duplexeval keeps derived files it can always rebuild (joined model weights, analysis
results): ``$DUPLEXEVAL_CACHE`` if set, else ``~/.cache/duplexeval``; and the scratch folders
of commands that need files only while they run (under the cache too, so that a command writes
nothing outside its output folder and the cache)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from duplexeval._fileio import process_alive

__all__ = ["cache_root", "scratch_folder"]

SCRATCH = "scratch"
"""The cache's folder of scratch folders."""


def cache_root() -> Path:
    """The cache folder (not created here)."""
    env = os.environ.get("DUPLEXEVAL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "duplexeval"


@contextlib.contextmanager
def scratch_folder(purpose: str) -> Iterator[Path]:
    """A new empty folder ``<cache>/scratch/<purpose>.<pid>.<random>``, removed with what it
    holds when the block ends (an exception included).  One that a killed process left (its
    pid no longer alive) is removed by the next call.  Where the cache cannot be created (a
    read-only home), the system's temporary folder is used instead."""
    root = cache_root() / SCRATCH
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        root = Path(tempfile.gettempdir())
    else:
        _remove_orphans(root)
    with tempfile.TemporaryDirectory(prefix=f"{purpose}.{os.getpid()}.", dir=root) as tmp:
        yield Path(tmp)


def _remove_orphans(root: Path) -> None:
    """Remove the scratch folders under ``root`` whose process is gone."""
    for folder in root.iterdir():
        parts = folder.name.split(".")
        if len(parts) == 3 and parts[1].isdigit() and not process_alive(int(parts[1])):
            shutil.rmtree(folder, ignore_errors=True)
