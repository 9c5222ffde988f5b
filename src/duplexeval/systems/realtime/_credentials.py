"""Credentials for remote systems: read from environment variables only, never stored.

A system argument names the *variable* (``api_key_env=MY_KEY``), never the key itself; the key
is read when a session connects and lives only in that connection's request headers.  Run
configs record the arguments (so the variable's name), never its value.  Error messages pass
through :func:`redact`, which blanks the value of every environment variable whose name looks
secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``), so a server that echoes a header
back, or a command that prints its environment, cannot leak a key into a sample's record.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from duplexeval.systems._base import SystemFailure

__all__ = ["api_key", "check_url", "redact"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)
_MIN_SECRET = 6
"""Shorter values are not blanked (they would blank ordinary words)."""


def api_key(variable: str) -> str:
    """The value of environment variable ``variable``; a missing or empty one fails the sample
    with a message that names the variable only."""
    value = os.environ.get(variable, "")
    if not value:
        raise SystemFailure(f"environment variable {variable} (named by api_key_env) is not set")
    return value


def bearer(variable: str | None) -> tuple[tuple[str, str], ...]:
    """An ``Authorization: Bearer`` request header with the value of environment variable
    ``variable`` (see :func:`api_key`), or no header when ``variable`` is empty or ``None``;
    the value is never recorded."""
    return (("Authorization", f"Bearer {api_key(variable)}"),) if variable else ()


def _secrets() -> list[str]:
    values = {v for k, v in os.environ.items()
              if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET}
    return sorted(values, key=len, reverse=True)


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """``text`` with every secret-looking environment value (and each of ``extra``) replaced
    by ``***``."""
    for secret in (*extra, *_secrets()):
        if secret:
            text = text.replace(secret, "***")
    return text


def check_url(url: str, schemes: tuple[str, ...] = ("ws", "wss")) -> str:
    """``url`` if it is a ``ws://`` or ``wss://`` address without embedded credentials (they
    would be written to the run config); raises ``ValueError`` otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in schemes or not parts.hostname:
        raise ValueError(f"url must be {' or '.join(s + '://HOST:PORT/...' for s in schemes)}, "
                         f"got {redact(url)!r}")
    if parts.username or parts.password:
        raise ValueError("url must not hold credentials (they would be recorded in the run "
                         "config); put the key in an environment variable and name it with "
                         "api_key_env=VARIABLE")
    return url
