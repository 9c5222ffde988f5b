"""``duplexcascade``: a client of a DuplexCascade server (``server.py``'s
``KyutaiBridgeServer``): float32 PCM over a WebSocket, ``audio_control`` stop events.

``--system duplexcascade --system-arg url=wss://HOST:31606 [--system-arg verify=0]``; the wire
format is in :mod:`.wire`, the real-time timeline in :mod:`duplexeval.systems.realtime._driver`.
Needs the ``servers`` extra (``websockets``).
"""

from duplexeval.systems.adapters.duplexcascade._system import DuplexCascadeSystem

__all__ = ["DuplexCascadeSystem"]
