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
``"stall"`` (send nothing more, and keep reading: the connection stays open) or ``"slow"``
(send every further message ``delay`` s late: slower than the service, never silent).
:meth:`LoopbackWsServer.refuse` answers the next ``times`` upgrades with an HTTP status (429,
500, with a ``Retry-After`` when given); :meth:`LoopbackWsServer.hang` holds the next ``times``
upgrades ``seconds`` s unanswered (the client's opening times out), then refuses them 503."""

from __future__ import annotations

import contextlib
import threading
import time
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
        self._injected: tuple[str, int, float] | None = None
        self._refusals: list[tuple[int, str | None, float]] = []
        self.refused_upgrades = 0
        """Upgrades answered by :meth:`refuse` or :meth:`hang`."""

    def inject(self, kind: str, after: int, delay: float = 0.2) -> None:
        """Fault every connection after it sent ``after`` messages (see the module docstring)."""
        if kind not in ("drop", "garbage", "stall", "slow"):
            raise ValueError(f"unknown fault {kind!r}")
        self._injected = (kind, after, delay)

    def refuse(self, status: int, times: int, retry_after: str | None = None) -> None:
        """Answer the next ``times`` upgrades on the served path with HTTP ``status``."""
        self._refusals += [(status, retry_after, 0.0)] * times

    def hang(self, seconds: float, times: int) -> None:
        """Leave the next ``times`` upgrades unanswered for ``seconds``, then refuse them 503."""
        self._refusals += [(503, None, seconds)] * times

    def _faulty(self, conn: ServerConnection) -> None:
        """:meth:`_handle` with the injected fault wrapped around ``conn.send``."""
        if self._injected is not None:
            kind, after, delay = self._injected
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
                if kind == "slow":
                    time.sleep(delay)
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
        with self._lock:
            refusal = self._refusals.pop(0) if self._refusals else None
        if refusal is not None:
            status, retry_after, seconds = refusal
            self.refused_upgrades += 1
            time.sleep(seconds)
            response = conn.respond(HTTPStatus(status), f"fault: HTTP {status}\n")
            if retry_after is not None:
                response.headers["Retry-After"] = retry_after
            return response
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
