"""A TLS socket that two threads may read and write at once: every OpenSSL call on it is made
under one lock, and the waits for the network are made outside it.

OpenSSL forbids using one ``SSL`` object from two threads at a time, and CPython's ``ssl``
module does not serialize its calls (it releases the GIL around ``SSL_read`` and
``SSL_write``).  Yet a WebSocket client or server built on threads does exactly that: one
thread blocks reading while another sends.  Engine.IO's threaded client has its read loop in
``ws.recv()`` and its write loop in ``ws.send()``; python-socketio's threaded server under
werkzeug has simple-websocket's reading thread and Engine.IO's writer thread on one socket.
A send that overlaps a read can clobber the connection's shared state (its ``rwstate``, the
socket BIO's retry flags, the record layer): the reader then sees a spurious error (``EOF
occurred in violation of protocol``) or the peer a record that fails its MAC (``bad record
mac``), and the connection is lost mid-stream.  Over a loaded machine this broke the freeze-omni
TLS test intermittently ("frame 114: the server closed the connection (transport error)").

:class:`SerializedTLS` keeps the ``SSLSocket`` non-blocking, makes each ``recv``/``send`` a
non-blocking OpenSSL call under its lock, and waits with ``select`` (lock released) when
OpenSSL wants to read or write more: a blocked reader never holds up a sender, and no two
OpenSSL calls on the connection ever overlap.  Timeouts keep the socket module's meaning
(``None`` blocks, ``0`` is non-blocking, else seconds then ``TimeoutError``).
"""

from __future__ import annotations

import errno
import os
import select
import ssl
import threading
import time
from typing import Any

import websocket

__all__ = ["SerializedTLS", "SerializedTLSWebSocket"]


class SerializedTLS:
    """``sock`` (an ``ssl.SSLSocket``) with its OpenSSL calls serialized; every other attribute
    is the wrapped socket's."""

    def __init__(self, sock: ssl.SSLSocket) -> None:
        self._sock = sock
        self._timeout = sock.gettimeout()
        self._lock = threading.Lock()
        sock.settimeout(0.0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def fileno(self) -> int:
        return self._sock.fileno()

    def gettimeout(self) -> float | None:
        return self._timeout

    def settimeout(self, timeout: float | None) -> None:
        self._timeout = timeout

    def setblocking(self, flag: bool) -> None:
        self._timeout = None if flag else 0.0

    def pending(self) -> int:
        with self._lock:
            return self._sock.pending()

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        return self._call(lambda: self._sock.recv(bufsize, flags))

    def send(self, data: bytes | memoryview, flags: int = 0) -> int:
        return self._call(lambda: self._sock.send(data, flags))

    def sendall(self, data: bytes, flags: int = 0) -> None:
        view = memoryview(data)
        while len(view):
            view = view[self.send(view, flags):]

    def _call(self, operation: Any) -> Any:
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        want: ssl.SSLError
        while True:
            with self._lock:
                try:
                    return operation()
                except ssl.SSLWantReadError as exc:
                    want, event = exc, select.POLLIN
                except ssl.SSLWantWriteError as exc:
                    want, event = exc, select.POLLOUT
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                if not self._timeout:  # non-blocking: as the SSLSocket itself would say
                    raise want
                raise TimeoutError("timed out")
            # a close or shutdown by another thread wakes this (POLLNVAL, POLLHUP)
            fileno = self._sock.fileno()
            if fileno < 0:  # closed meanwhile: as a closed socket's recv or send says
                raise OSError(errno.EBADF, os.strerror(errno.EBADF))
            wait = select.poll()
            wait.register(fileno, event)
            wait.poll(None if left is None else max(1, round(left * 1000)))


class SerializedTLSWebSocket(websocket.WebSocket):
    """websocket-client's ``WebSocket`` whose TLS socket, once connected, is a
    :class:`SerializedTLS` (``create_connection(..., class_=SerializedTLSWebSocket)``)."""

    def connect(self, url: str, **options: Any) -> None:
        super().connect(url, **options)
        if isinstance(self.sock, ssl.SSLSocket):
            self.sock = SerializedTLS(self.sock)  # type: ignore[assignment]

