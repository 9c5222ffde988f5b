"""Retries with exponential backoff, done here rather than inside the ``openai`` client (whose
own retries are set to 0) so that the policy is explicit and testable.

Conventions:

* Transient failures are retried: HTTP 429, HTTP 5xx, timeouts, connection errors (a connection
  dropped before or during the answer) and a 200 whose body is not JSON
  (:class:`MalformedResponse`: a proxy's error page).  Every other failure (a 4xx other than
  429, a response without an answer, any other exception the call raises) is permanent and not
  retried.
* Attempt ``i`` (0-based) that fails transiently is followed by a wait of
  ``min(max_delay, base_delay * 2**i)`` seconds, multiplied by ``1 + jitter * u`` with ``u``
  uniform in ``[-1, 1]`` drawn from a ``random.Random(seed)`` owned by the policy's
  :class:`Backoff` (so a run's waits are reproducible; ``jitter=0`` gives none).  A failed
  response's ``Retry-After`` (seconds or an HTTP date; or ``retry-after-ms``) is honoured: the
  wait is at least what it asks, up to :data:`RETRY_AFTER_CAP` seconds.
* At most ``1 + max_retries`` attempts are made; the wait function is injectable, so tests do
  not wait.
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["RETRY_AFTER_CAP", "Backoff", "CallFailed", "MalformedResponse", "RetryPolicy",
           "call_with_retries", "describe", "is_transient", "retry_after"]

RETRY_AFTER_CAP = 120.0
"""The longest ``Retry-After`` honoured (seconds); a longer one waits this long."""

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry, and how long to wait in between (seconds)."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.25
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("retry counts and delays must be non-negative")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter {self.jitter} is not within [0, 1]")


class Backoff:
    """The waits of one policy, with its own seeded generator (thread-safe)."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self._rng = random.Random(policy.seed)
        self._lock = threading.Lock()

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based)."""
        p = self.policy
        base = min(p.max_delay, p.base_delay * 2.0 ** attempt)
        if p.jitter == 0.0:
            return base
        with self._lock:
            u = self._rng.uniform(-1.0, 1.0)
        return base * (1.0 + p.jitter * u)


class CallFailed(Exception):
    """A call that finally failed; ``attempts`` requests were made."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


class MalformedResponse(Exception):
    """A successful HTTP status whose body could not be read as the API's JSON (transient)."""


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying: 429, 5xx, a timeout, a connection error or a
    malformed response body."""
    import openai  # loaded by the client that raised ``exc``, if any

    if isinstance(exc, openai.APIConnectionError | MalformedResponse):  # incl. APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """The wait (seconds, finite, >= 0) a failed response asks for in ``retry-after-ms`` or
    ``Retry-After`` (delta seconds or an HTTP date, relative to ``now``, epoch seconds), or
    ``None`` when it asks none or the header cannot be read."""
    import openai  # loaded by the client that raised ``exc``, if any

    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError):
                continue
            seconds = when.timestamp() - (time.time() if now is None else now)
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def describe(exc: BaseException) -> str:
    """A one-line description of a failed call."""
    import openai  # loaded by the client that raised ``exc``, if any

    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection error"
    if isinstance(exc, openai.APIStatusError):
        message = " ".join(str(exc.message).split())[:200]
        return f"HTTP {exc.status_code}: {message}"
    if isinstance(exc, MalformedResponse):
        return f"malformed response: {' '.join(str(exc).split())[:200]}"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


def call_with_retries(fn: Callable[[], T], backoff: Backoff,
                      sleep: Callable[[float], None] = time.sleep) -> tuple[T, int]:
    """``fn()`` and the number of attempts it took; raises :class:`CallFailed` when the
    failure is permanent or the retries are exhausted."""
    attempts = 0
    while True:
        attempts += 1
        try:
            return fn(), attempts
        except Exception as exc:  # anything the client raises is a failed call
            if not is_transient(exc):
                raise CallFailed(f"{describe(exc)} (permanent; {attempts} attempt"
                                 f"{'s' if attempts > 1 else ''})", attempts) from exc
            if attempts > backoff.policy.max_retries:
                raise CallFailed(f"{describe(exc)} (retries exhausted after {attempts} "
                                 "attempts)", attempts) from exc
            asked = retry_after(exc)
            wait = backoff.delay(attempts - 1)
            sleep(wait if asked is None else max(wait, min(asked, RETRY_AFTER_CAP)))
