"""A connection that reattaches to its server session when the transport drops.

Servers that journal a session (Gemini Live's session resumption, vLLM-Omni's
``session.resume``) let a client that lost its WebSocket open a new one and go on where it
was.  :class:`ResumingConnection` holds the current :class:`~.websocket.Connection`; a send or a
receive that fails with a :class:`~duplexeval.systems._base.SystemFailure` reattaches, then::

    send    fails -> reattach -> send the same message again on the new transport
    recv    fails -> reattach -> None (nothing received: the caller's loop goes on)

Reattaching: when the adapter says the session can be resumed (it holds a handle or a token),
the old transport is closed and ``reopen()`` is tried up to ``attempts`` times, after
``backoff * 2**attempt`` seconds each (0.05, 0.1, 0.2 ... s).  ``reopen`` opens a transport and
does the adapter's resume handshake; it closes what it opened when it fails, and raises
:class:`FinalRefusal` when retrying cannot help (the server forgot the session).  When no
attempt succeeds the original failure is raised with the last refusal appended, e.g.
``"the server closed the connection: ...; session resume failed: no attempt left"``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from duplexeval.systems._base import SystemFailure
from duplexeval.systems.realtime._websocket import Connection

__all__ = ["FinalRefusal", "ResumingConnection"]


class FinalRefusal(SystemFailure):
    """A refused resume that no further attempt can turn around."""


class ResumingConnection:
    """See the module docstring.  ``what`` names the mechanism in the failure message
    (``"session resume"``, ``"session resumption"``); ``on_resumed(attempt)`` runs after a
    successful reattach (attempt from 0)."""

    def __init__(self, first: Connection, reopen: Callable[[], Connection],
                 can_resume: Callable[[], bool], on_resumed: Callable[[int], None],
                 attempts: int, what: str = "session resume", backoff: float = 0.05) -> None:
        self._conn: Connection | None = first
        self._reopen = reopen
        self._can_resume = can_resume
        self._on_resumed = on_resumed
        self.attempts = attempts
        self.what = what
        self.backoff = backoff

    @property
    def current(self) -> Connection:
        """The transport in use; a closed connection fails."""
        if self._conn is None:
            raise SystemFailure("the connection is closed")
        return self._conn

    def send(self, message: bytes | str) -> float:
        """Send ``message`` (again after a reattach); its monotonic send time (s)."""
        try:
            return self.current.send(message)
        except SystemFailure as exc:
            self.resume(exc)
            return self.current.send(message)

    def recv(self, timeout: float) -> tuple[Any, float] | None:
        """The next message and its monotonic arrival time (s); ``None`` after ``timeout``
        seconds without one, or after a reattach."""
        try:
            return self.current.recv(timeout)
        except SystemFailure as exc:
            self.resume(exc)
            return None

    def resume(self, why: SystemFailure) -> None:
        """Reattach after the transport failed with ``why``, or raise ``why`` (with the last
        refusal when attempts were made)."""
        if not self._can_resume():
            raise why
        self.close()
        refused = ""
        for attempt in range(self.attempts):
            time.sleep(self.backoff * 2 ** attempt)
            try:
                conn = self._reopen()
            except FinalRefusal as exc:
                refused = str(exc)
                break
            except SystemFailure as exc:
                refused = str(exc)
                continue
            self._conn = conn
            self._on_resumed(attempt)
            return
        raise SystemFailure(f"{why}; {self.what} failed: {refused or 'no attempt left'}")

    def close(self) -> None:
        """Close the transport (idempotent, never raises)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
