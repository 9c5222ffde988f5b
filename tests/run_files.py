"""A run directory's files for byte-for-byte comparisons between executors (local, processes,
Dask): every file but its lock, with ``run_summary.json``'s wall time removed (the one number
that differs by construction)."""

from __future__ import annotations

import json
from pathlib import Path

RUN = ["run", "--system", "scripted", "--system-arg", "jitter=0.1", "--seed", "5"]
"""The scripted run both executor tests make (seeded jitter: its outputs depend on the seed)."""


def run_files(root: Path) -> dict[str, bytes]:
    """Every file of a run directory but its lock, with the summary's wall time removed."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != ".lock":
            data = path.read_bytes()
            if path.name == "run_summary.json":
                summary = json.loads(data)
                summary.pop("wall_seconds")
                data = json.dumps(summary).encode()
            out[path.relative_to(root).as_posix()] = data
    return out
