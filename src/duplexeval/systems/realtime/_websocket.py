"""A blocking WebSocket client connection for remote systems (``websockets``' sync client).

Opening is retried when a second attempt can help (HTTP 429 or 5xx on the upgrade, a timeout,
a connection dropped during the handshake: :mod:`duplexeval.systems.realtime._retry`).  Every
failure of the transport becomes a :class:`~duplexeval.systems._base.SystemFailure` with
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
from duplexeval.systems.realtime._retry import (
    Transient,
    open_with_retries,
    retry_after_seconds,
    transient_status,
)

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

        def open_once() -> Any:
            try:
                return self._stack.enter_context(connect(
                    url, additional_headers=headers or None, open_timeout=open_timeout,
                    max_size=None, compression=None, ssl=ssl, ping_interval=ping_interval,
                    ping_timeout=ping_timeout))
            except Exception as exc:  # refused, DNS, HTTP status, timeout: all fail the sample
                raise self._opening_failure(exc) from None

        self._ws = open_with_retries(open_once)

    def _opening_failure(self, exc: Exception) -> SystemFailure:
        """The failure to open: :class:`~.retry.Transient` for an HTTP 429/5xx answer to the
        upgrade, a timeout or a connection dropped during the handshake; else permanent."""
        from websockets.exceptions import InvalidMessage, InvalidStatus

        reason = self._reason(f"cannot connect to {self.url}", exc)
        if isinstance(exc, InvalidStatus):
            status = exc.response.status_code
            if transient_status(status):
                return Transient(reason, retry_after_seconds(
                    exc.response.headers.get("Retry-After")))
            return SystemFailure(reason)
        if isinstance(exc, ConnectionRefusedError):
            return SystemFailure(reason)
        if isinstance(exc, (TimeoutError, InvalidMessage, EOFError, ConnectionResetError)):
            return Transient(reason)
        return SystemFailure(reason)

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
