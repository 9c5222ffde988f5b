"""A blocking WebSocket client connection for remote systems (``websockets``' sync client).

Every failure of the transport becomes a :class:`~duplexeval.systems._base.SystemFailure` with
a reason (refused, handshake timeout, closed by the server with its code), passed through
:func:`~duplexeval.systems.realtime._credentials.redact` so no key reaches a sample's record.
Receive times are read from :func:`time.monotonic` (seconds) the moment a message is handed over;
``websockets`` reads the socket in a background thread, so a message waits in its queue, not
in the kernel, while the caller is busy.

Keepalive: the client pings every ``ping_interval`` s and closes the connection when no pong
comes within ``ping_timeout`` s (``websockets`` closes it with code 1011); a server whose event
loop is stuck answers no ping, so that closure is reported as a stall.
"""

from __future__ import annotations

import contextlib
import ssl as ssl_module
import time
from typing import Any

from duplexeval.systems._base import SystemFailure
from duplexeval.systems.realtime._credentials import redact

__all__ = ["Connection"]


class Connection:
    """One client connection: ``send`` bytes or text, ``recv`` with a timeout, ``close``."""

    def __init__(self, url: str, headers: dict[str, str] | None = None,
                 open_timeout: float = 10.0, ssl: ssl_module.SSLContext | None = None,
                 ping_interval: float | None = 20.0, ping_timeout: float | None = 20.0) -> None:
        try:
            from websockets.sync.client import connect
        except ImportError:
            raise SystemFailure("remote systems need websockets: pip install "
                                "'duplexeval[servers]'") from None
        self._secrets = tuple((headers or {}).values())
        self.url = url
        self._ping_timeout = ping_timeout
        self._stack = contextlib.ExitStack()
        try:
            self._ws = self._stack.enter_context(connect(
                url, additional_headers=headers or None, open_timeout=open_timeout,
                max_size=None, compression=None, ssl=ssl, ping_interval=ping_interval,
                ping_timeout=ping_timeout))
        except Exception as exc:  # refused, DNS, HTTP status, timeout: all fail the sample
            raise SystemFailure(self._reason(f"cannot connect to {url}", exc)) from None

    def _reason(self, what: str, exc: BaseException) -> str:
        return redact(f"{what}: {type(exc).__name__}: {exc}", self._secrets)

    def _closed(self, exc: Any) -> SystemFailure:
        """The failure for a closed connection: a stall when our keepalive closed it."""
        sent = getattr(exc, "sent", None)
        if getattr(exc, "rcvd", None) is None and sent is not None and sent.code == 1011 \
                and "keepalive" in sent.reason:
            return SystemFailure(f"stall: the server answered no keepalive ping within "
                                 f"{self._ping_timeout:g} s")
        return SystemFailure(self._reason("the server closed the connection", exc))

    def send(self, data: bytes | str) -> float:
        """Send one message; returns the monotonic time (s) it was handed to the socket."""
        from websockets.exceptions import ConnectionClosed

        try:
            self._ws.send(data)
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        return time.monotonic()

    def recv(self, timeout: float) -> tuple[Any, float] | None:
        """The next message and its monotonic arrival time (s), or ``None`` after ``timeout``
        seconds without one; a closed connection fails."""
        from websockets.exceptions import ConnectionClosed

        try:
            message = self._ws.recv(timeout=max(0.0, timeout))
        except TimeoutError:
            return None
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        return message, time.monotonic()

    def close(self) -> None:
        """Close the connection (idempotent, never raises)."""
        with contextlib.suppress(Exception):  # a broken connection: nothing left to release
            self._stack.close()
