"""A blocking WebSocket client connection for remote systems (``websockets``' sync client).

Every failure of the transport becomes a :class:`~duplexeval.systems.base.SystemFailure` with
a reason (refused, handshake timeout, closed by the server with its code), passed through
:func:`~duplexeval.systems.credentials.redact` so no key reaches a sample's record.  Receive
times are read from :func:`time.monotonic` (seconds) the moment a message is handed over;
``websockets`` reads the socket in a background thread, so a message waits in its queue, not
in the kernel, while the caller is busy.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from .base import SystemFailure
from .credentials import redact

__all__ = ["Connection"]


class Connection:
    """One client connection: ``send`` bytes or text, ``recv`` with a timeout, ``close``."""

    def __init__(self, url: str, headers: dict[str, str] | None = None,
                 open_timeout: float = 10.0) -> None:
        try:
            from websockets.sync.client import connect
        except ImportError:
            raise SystemFailure("remote systems need websockets: pip install "
                                "'duplexeval[servers]'") from None
        self._secrets = tuple((headers or {}).values())
        self.url = url
        self._stack = contextlib.ExitStack()
        try:
            self._ws = self._stack.enter_context(connect(
                url, additional_headers=headers or None, open_timeout=open_timeout,
                max_size=None, compression=None))
        except Exception as exc:  # refused, DNS, HTTP status, timeout: all fail the sample
            raise SystemFailure(self._reason(f"cannot connect to {url}", exc)) from None

    def _reason(self, what: str, exc: BaseException) -> str:
        return redact(f"{what}: {type(exc).__name__}: {exc}", self._secrets)

    def send(self, data: bytes | str) -> float:
        """Send one message; returns the monotonic time (s) it was handed to the socket."""
        from websockets.exceptions import ConnectionClosed

        try:
            self._ws.send(data)
        except ConnectionClosed as exc:
            raise SystemFailure(self._reason("the server closed the connection", exc)) from None
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
            raise SystemFailure(self._reason("the server closed the connection", exc)) from None
        return message, time.monotonic()

    def close(self) -> None:
        """Close the connection (idempotent, never raises)."""
        with contextlib.suppress(Exception):  # a broken connection: nothing left to release
            self._stack.close()
