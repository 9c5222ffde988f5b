"""What the loopback WebSocket fakes of this suite's wall-clock adapters share: a
``websockets`` sync server on 127.0.0.1 (a free port, or a given one: a resumed run needs the
same URL) in a daemon thread while a context is open."""

from __future__ import annotations

import threading
from typing import Any, Self

from websockets.sync.server import Request, Response, ServerConnection, serve

__all__ = ["LoopbackWsServer"]


class LoopbackWsServer:
    """Subclasses handle connections (:meth:`_handle`) and may refuse upgrades (:meth:`_check`)."""

    def __init__(self, port: int = 0) -> None:
        self.port = port

    def __enter__(self) -> Self:
        self._server = serve(self._handle, "127.0.0.1", self.port, process_request=self._check,
                             compression=None, max_size=None)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._thread.join(5)

    def _check(self, conn: ServerConnection, request: Request) -> Response | None:
        return None

    def _handle(self, conn: ServerConnection) -> None:
        raise NotImplementedError
