"""``freeze-omni``: a client of the Freeze-Omni demo server (``bin/server.py``: Flask-SocketIO
over HTTPS with a self-signed certificate).

``--system freeze-omni --system-arg url=https://HOST:8081 --system-arg verify=0``; the events
and audio formats are in :mod:`.wire`, the Socket.IO connection in :mod:`.link`, the real-time
timeline in :mod:`.session`.  Needs the ``servers`` extra (``python-socketio[client]``).
"""

from duplexeval.systems.adapters.freeze_omni._system import FreezeOmniSystem

__all__ = ["FreezeOmniSystem"]
