"""Re-scoring peer benchmarks' own output folders (FLEXI, Full-Duplex-Bench) at parity with
their released evaluators.

One module per peer registers a :class:`~.registry.PeerScorer` in :mod:`.registry`;
``duplexeval score --peer NAME --task TASK DIR -o OUT_DIR`` dispatches through it.  Shared
input readers live here too (:mod:`.vad_segments`: speech segments computed elsewhere).

This layer sits above ``metrics`` (it may use its statistics) and below ``report``.
"""

from __future__ import annotations

from duplexeval.peers._registry import (
    PEERS,
    PeerOptions,
    PeerScorer,
    get_peer,
    peer_names,
    register_peer,
)
from duplexeval.peers._vad_segments import VAD_SEGMENTS_FILE, read_vad_segments

__all__ = [
    "PEERS",
    "VAD_SEGMENTS_FILE",
    "PeerOptions",
    "PeerScorer",
    "get_peer",
    "peer_names",
    "read_vad_segments",
    "register_peer",
]
