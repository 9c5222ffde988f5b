"""The peer scorers ``duplexeval score --peer NAME`` knows, by name.

A peer module defines a :class:`PeerScorer`; :data:`PEERS` names the built-in ones (imported
on first lookup) and finds a package's through the ``duplexeval.peers`` entry-point group.

Output conventions every peer scorer follows (the issue texts of FLEXI and FDB):

* ``OUT_DIR/per_sample.jsonl``: one ``{"sample": <folder name>, ...}`` line per sample, with
  the peer's own metric names; a sample the peer's code would skip is written as
  ``{"sample": ..., "skipped": <reason>}``;
* ``OUT_DIR/aggregate.json``: the aggregate under the names the peer's code prints.

Both are written atomically.  Bad or missing input raises
:class:`~duplexeval.errors.DuplexevalError` naming the file (exit code 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval.errors import DuplexevalError
from duplexeval.registry import Registry, instance_of

__all__ = ["PEERS", "PeerOptions", "PeerScorer", "check_task", "get_peer", "peer_names",
           "register_peer"]



@dataclass(frozen=True)
class PeerOptions:
    """Options of a peer re-scoring.

    ``compat`` true reproduces the peer's released code value for value (the default under
    ``--peer``); false applies the paper's definitions and reports each difference.
    ``latency`` is FLEXI's pause-handling latency allowance in seconds (``None``: 0 under
    compat, as FLEXI's ``--latency`` default; measured from the pause samples under
    ``--paper``, see :mod:`duplexeval.peers.flexi._scorer`).  ``reference_distribution``
    is a JSON file of per-item reference backchannel distributions (model backchannel tasks).
    """

    compat: bool = True
    latency: float | None = None
    reference_distribution: Path | None = None
    judge: Any = None
    """A :class:`~duplexeval.metrics.content._score.JudgeSettings` for the peer's judged scores
    (``None``: they are listed as not computed)."""
    variant: str = "m3"
    """``m3``: the timing variant that scores the official pipeline's folder."""
    language: str = ""
    """``m3``: the folder's language and domain, for breakdowns ('' when not given)."""
    domain: str = ""
    transcript_key: str = "output_asr_path"
    """``m3``: the metadata field holding each sample's transcript path."""


@dataclass(frozen=True)
class PeerScorer:
    """A peer benchmark's re-scorer: its name, its tasks and the function scoring one output
    folder (``score(task, root, out_dir, options)`` returns the aggregate it wrote)."""

    name: str
    tasks: tuple[str, ...]
    score: Callable[[str, Path, Path, PeerOptions], dict[str, Any]]
    description: str = ""


PEERS: Registry[PeerScorer] = Registry("peer", "peers", {
    "flexi": "duplexeval.peers.flexi._scorer:FLEXI",
    "fdb-v1": "duplexeval.peers.fdb._scorer:FDB_V1",
    "m3": "duplexeval.peers.m3._scorer:M3",
}, instance_of(PeerScorer))
"""The peer scorers (:class:`~duplexeval.registry.Registry`, entry-point group
``duplexeval.peers``: ``name = "package.module:SCORER"``, a :class:`PeerScorer`)."""


def register_peer(scorer: PeerScorer) -> PeerScorer:
    """Add ``scorer`` under its name in this process (a package adds one for every process
    with a ``duplexeval.peers`` entry point)."""
    if scorer.name in PEERS.names() and PEERS.get(scorer.name) is not scorer:
        raise ValueError(f"peer scorer {scorer.name!r} is already registered")
    return PEERS.add(scorer.name, scorer)


def peer_names() -> list[str]:
    """The registered peer names, sorted."""
    return PEERS.names()


def get_peer(name: str) -> PeerScorer:
    """The scorer named ``name``; an unknown name is a one-line user error."""
    return PEERS.get(name)


def check_task(scorer: PeerScorer, task: str) -> None:
    """A one-line user error unless ``task`` is one of the scorer's tasks."""
    if task not in scorer.tasks:
        raise DuplexevalError(f"--peer {scorer.name}: unknown task {task!r} "
                              f"(one of: {', '.join(scorer.tasks)})")
