"""``moshi-ws``: the Moshi / PersonaPlex ``/api/chat`` WebSocket protocol as a system.

``--system moshi-ws --system-arg url=ws://HOST:PORT/api/chat``
``[--system-arg mode=lockstep|realtime]``; the wire format is in :mod:`.wire`, the two
timelines (lockstep: input-clocked; real time: deadline-paced with a playout buffer) in
:mod:`.session`.  Needs the ``servers`` extra (``websockets``, ``sphn``).
"""

from duplexeval.systems.adapters.moshi_ws._system import MoshiWsSystem

__all__ = ["MoshiWsSystem"]
