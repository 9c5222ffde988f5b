"""Where duplexeval keeps derived files it can always rebuild (joined model weights, analysis
results): ``$DUPLEXEVAL_CACHE`` if set, else ``~/.cache/duplexeval``."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """The cache folder (not created here)."""
    env = os.environ.get("DUPLEXEVAL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "duplexeval"
