"""The peer scorers ``duplexeval score --peer NAME`` knows, by name.

A peer module defines a :class:`PeerScorer` and registers it at import with
:func:`register_peer`; :data:`PEER_MODULES` lists the modules imported on first lookup, so
the command line needs no import of its own per peer.

Output conventions every peer scorer follows (the issue texts of FLEXI and FDB):

* ``OUT_DIR/per_sample.jsonl``: one ``{"sample": <folder name>, ...}`` line per sample, with
  the peer's own metric names; a sample the peer's code would skip is written as
  ``{"sample": ..., "skipped": <reason>}``;
* ``OUT_DIR/aggregate.json``: the aggregate under the names the peer's code prints.

Both are written atomically.  Bad or missing input raises
:class:`~duplexeval.errors.DuplexevalError` naming the file (exit code 2).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval.errors import DuplexevalError

__all__ = ["PEER_MODULES", "PeerOptions", "PeerScorer", "check_task", "get_peer", "peer_names",
           "register_peer"]

PEER_MODULES: tuple[str, ...] = ("flexi", "fdb")
"""Modules (relative to this package) that register peer scorers when imported."""


@dataclass(frozen=True)
class PeerOptions:
    """Options of a peer re-scoring.

    ``compat`` true reproduces the peer's released code value for value (the default under
    ``--peer``); false applies the paper's definitions and reports each difference.
    ``latency`` is FLEXI's pause-handling latency allowance in seconds (``None``: 0 under
    compat, as FLEXI's ``--latency`` default; measured from the pause samples under
    ``--paper``, see :mod:`duplexeval.peers.flexi`).  ``reference_distribution``
    is a JSON file of per-item reference backchannel distributions (model backchannel tasks).
    """

    compat: bool = True
    latency: float | None = None
    reference_distribution: Path | None = None
    judge: Any = None
    """A :class:`~duplexeval.metrics.content.score.JudgeSettings` for the peer's judged scores
    (``None``: they are listed as not computed)."""


@dataclass(frozen=True)
class PeerScorer:
    """A peer benchmark's re-scorer: its name, its tasks and the function scoring one output
    folder (``score(task, root, out_dir, options)`` returns the aggregate it wrote)."""

    name: str
    tasks: tuple[str, ...]
    score: Callable[[str, Path, Path, PeerOptions], dict[str, Any]]
    description: str = ""


_REGISTRY: dict[str, PeerScorer] = {}


def register_peer(scorer: PeerScorer) -> PeerScorer:
    """Add ``scorer`` under its name (a second registration of a name is an error)."""
    if scorer.name in _REGISTRY and _REGISTRY[scorer.name] is not scorer:
        raise ValueError(f"peer scorer {scorer.name!r} is already registered")
    _REGISTRY[scorer.name] = scorer
    return scorer


def _load() -> None:
    for module in PEER_MODULES:
        importlib.import_module(f"{__package__}.{module}")


def peer_names() -> list[str]:
    """The registered peer names, sorted."""
    _load()
    return sorted(_REGISTRY)


def get_peer(name: str) -> PeerScorer:
    """The scorer named ``name``; an unknown name is a one-line user error."""
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none yet"
        raise DuplexevalError(f"unknown peer {name!r} (known: {known})") from None


def check_task(scorer: PeerScorer, task: str) -> None:
    """A one-line user error unless ``task`` is one of the scorer's tasks."""
    if task not in scorer.tasks:
        raise DuplexevalError(f"--peer {scorer.name}: unknown task {task!r} "
                              f"(one of: {', '.join(scorer.tasks)})")
