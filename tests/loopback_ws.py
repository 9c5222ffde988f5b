"""What the loopback WebSocket fakes of this suite's wall-clock adapters share: a
``websockets`` sync server on 127.0.0.1 (a free port, or a given one: a resumed run needs the
same URL) in a daemon thread while a context is open, serving one request path.

Every upgrade request is recorded (``paths``: path with query; ``headers_seen``: the headers of
those on the served path); another path is refused with 404, and then a subclass's
:meth:`LoopbackWsServer._authorize` may refuse it (:meth:`LoopbackWsServer.bearer_refused` is
the ``Authorization: Bearer`` check).

Faults (``tests/test_fault_injection.py``): :meth:`LoopbackWsServer.inject` makes every
connection, once it has sent ``after`` messages, ``"drop"`` (close its socket, no close frame:
a disconnect mid-stream), ``"garbage"`` (send one frame that is not the protocol's, then go on)
or ``"stall"`` (send nothing more, and keep reading: the connection stays open)."""

from __future__ import annotations

import contextlib
import threading
from http import HTTPStatus
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from websockets.sync.server import Request, Response, ServerConnection, serve

__all__ = ["LoopbackWsServer"]


class LoopbackWsServer:
    """Subclasses set :attr:`path`, handle connections (:meth:`_handle`) and may refuse
    upgrades (:meth:`_accepts`, :meth:`_authorize`)."""

    path = "/"
    """The one request path served."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.paths: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._injected: tuple[str, int] | None = None

    def inject(self, kind: str, after: int) -> None:
        """Fault every connection after it sent ``after`` messages (see the module docstring)."""
        if kind not in ("drop", "garbage", "stall"):
            raise ValueError(f"unknown fault {kind!r}")
        self._injected = (kind, after)

    def _faulty(self, conn: ServerConnection) -> None:
        """:meth:`_handle` with the injected fault wrapped around ``conn.send``."""
        if self._injected is not None:
            kind, after = self._injected
            send, sent = conn.send, [0]

            def faulty_send(message: Any, *args: Any, **kwargs: Any) -> None:
                sent[0] += 1
                if sent[0] <= after:
                    return send(message, *args, **kwargs)
                if kind == "drop":
                    conn.socket.close()
                    raise ConnectionError("fault: dropped")
                if kind == "garbage" and sent[0] == after + 1:
                    send(b"\x00\xffnot a frame of this protocol"
                         if isinstance(message, bytes) else "{not json")
                    return send(message, *args, **kwargs)
                if kind == "stall":
                    return None  # swallowed: the server goes on reading, sends nothing
                return send(message, *args, **kwargs)

            conn.send = faulty_send  # type: ignore[method-assign]
        with contextlib.suppress(ConnectionError, OSError):
            self._handle(conn)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{self.path}"

    def __enter__(self) -> Self:
        self._server = serve(self._faulty, "127.0.0.1", self.port, process_request=self._check,
                             compression=None, max_size=None)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._thread.join(5)

    def _check(self, conn: ServerConnection, request: Request) -> Response | None:
        self.paths.append(request.path)
        parts = urlsplit(request.path)
        query = parse_qs(parts.query)
        if parts.path != self.path or not self._accepts(query):
            return conn.respond(HTTPStatus.NOT_FOUND, "not found\n")
        self.headers_seen.append(dict(request.headers.raw_items()))
        return self._authorize(conn, request, query)

    def _accepts(self, query: dict[str, list[str]]) -> bool:
        """Whether the request's query belongs to the served endpoint."""
        return True

    def _authorize(self, conn: ServerConnection, request: Request,
                   query: dict[str, list[str]]) -> Response | None:
        """A refusal of the upgrade, or ``None`` to accept it."""
        return None

    @staticmethod
    def bearer_refused(conn: ServerConnection, request: Request, key: str | None,
                       body: str = "unauthorized\n") -> Response | None:
        """401 unless ``Authorization: Bearer key`` was sent (``key`` ``None``: no check)."""
        if key is not None and request.headers.get("Authorization") != f"Bearer {key}":
            return conn.respond(HTTPStatus.UNAUTHORIZED, body)
        return None

    def _handle(self, conn: ServerConnection) -> None:
        raise NotImplementedError
