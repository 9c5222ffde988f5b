"""Where datasets are found: the bundled ones inside the package and the official M3 toy data.

The official M3 toy data is third-party and never shipped: it is looked up in
``$DUPLEXEVAL_M3_TOY`` or a ``shared/m3_toy/ja`` folder beside the working directory or one of
its parents.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["bundled_dataset", "find_m3_toy"]


def bundled_dataset(name: str) -> Path:
    """Folder of a dataset shipped inside the package (``duplexeval/bundled/NAME``)."""
    path = Path(str(resources.files("duplexeval") / "bundled" / name))
    if not path.is_dir():
        raise FileNotFoundError(f"no bundled dataset {name!r}")
    return path


def find_m3_toy() -> Path | None:
    """The official M3 toy data folder (``.../m3_toy/ja``) if it can be found."""
    env = os.environ.get("DUPLEXEVAL_M3_TOY")
    if env:
        return Path(env) if Path(env).is_dir() else None
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        candidate = folder / "shared" / "m3_toy" / "ja"
        if candidate.is_dir():
            return candidate
    return None
