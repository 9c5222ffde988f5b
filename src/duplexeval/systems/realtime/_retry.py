"""Retrying the opening of a remote system's connection, when the failure is one a second
attempt can turn around.

Conventions:

* Transient (retried): the server answered the upgrade or handshake request with HTTP 429 or
  5xx (a rate limit, an overloaded or restarting server, a proxy's error page), or the opening
  timed out, or the connection was reset or dropped during the opening handshake.  Everything
  else is permanent and fails the sample at once: a refused connection (nothing listens), a
  4xx other than 429 (a wrong path, a wrong key), a TLS or DNS error, a protocol error.
* Attempt ``i`` (0-based) that fails transiently is followed by a wait of
  ``min(max_delay, base_delay * 2**i)`` seconds, or the server's ``Retry-After`` (seconds or an
  HTTP date) when it asks for longer, up to :data:`RETRY_AFTER_CAP`; at most ``attempts``
  attempts are made, then the last failure is raised with ``"(N attempts)"`` appended.
* Only the opening is retried.  A connection that fails once the session runs (a disconnect,
  a stall, a garbage frame) fails the sample, or is resumed where the protocol allows it
  (:mod:`duplexeval.systems.realtime._connection`): the model's state is on the server, and a
  new connection would start another dialogue.  ``duplexeval run`` on the same ``--out`` runs
  the failed samples again.
* The wait goes through :data:`sleep` (a module attribute, so tests record waits instead).
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from duplexeval.systems._base import SystemFailure

__all__ = ["CONNECT_RETRY", "RETRY_AFTER_CAP", "ConnectRetry", "Transient", "open_with_retries",
           "retry_after_seconds", "transient_status"]

RETRY_AFTER_CAP = 30.0
"""The longest ``Retry-After`` honoured when opening a connection (s)."""

T = TypeVar("T")
sleep: Callable[[float], None] = time.sleep
"""How a wait is made (tests replace it)."""


@dataclass(frozen=True)
class ConnectRetry:
    """How many attempts to open a connection, and the waits between them (s)."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, attempt: int, asked: float | None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based); ``asked``: the
        server's ``Retry-After``."""
        wait = min(self.max_delay, self.base_delay * 2.0 ** attempt)
        if asked is not None:
            wait = max(wait, min(asked, RETRY_AFTER_CAP))
        return wait


CONNECT_RETRY = ConnectRetry()
"""The policy every WebSocket and Socket.IO adapter opens its connections with."""


class Transient(SystemFailure):
    """An opening failure worth another attempt; ``retry_after``: what the server asked (s)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def open_with_retries(open_once: Callable[[], T], policy: ConnectRetry = CONNECT_RETRY) -> T:
    """``open_once()``, again after each :class:`Transient` failure (see the module
    docstring); a permanent :class:`SystemFailure` is raised at once."""
    for attempt in range(policy.attempts):
        try:
            return open_once()
        except Transient as exc:
            if attempt + 1 == policy.attempts:
                raise SystemFailure(f"{exc} ({policy.attempts} attempts)") from None
            sleep(policy.delay(attempt, exc.retry_after))
    raise AssertionError("unreachable: attempts >= 1")


def transient_status(status: int) -> bool:
    """Whether an HTTP status answering an upgrade or handshake request is worth a retry."""
    return status == 429 or 500 <= status <= 599


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A ``Retry-After`` header in seconds (a number, or an HTTP date from ``now``); ``None``
    when absent or unreadable, 0 for a time past."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return None
        seconds = when - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)
