"""The wire vocabulary of vLLM-Omni's ``/v1/realtime?duplex=1`` as the client reads it: event
names, error codes, and helpers to decode events and build URLs (see :mod:`.session` for the
protocol).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from duplexeval.systems._base import SystemFailure

__all__ = ["AUDIO_EVENTS", "BENIGN_ERRORS", "FATAL_RESUME_ERRORS", "TRANSCRIPT_EVENTS",
           "Refused", "decode_event", "error_code", "error_text", "response_id", "with_query"]

AUDIO_EVENTS = ("response.output_audio.delta", "response.audio.delta")
"""Reply audio (GA and beta names): base64 in ``delta`` (or ``audio``), ``sample_rate_hz``."""
TRANSCRIPT_EVENTS = ("response.output_audio_transcript.delta", "response.audio_transcript.delta",
                     "response.output_text.delta", "response.text.delta")
BENIGN_ERRORS = {"playback_ack_too_late"}
"""Errors recorded, not fatal: a refused late acknowledgement (vllm-omni's own benchmarks
count it harmless)."""
FATAL_RESUME_ERRORS = {"invalid_session_resume", "session_resume_expired",
                       "unsupported_session_resume", "invalid_resume_token",
                       "session_resume_conflict"}
"""Resume refusals that no retry can change (vllm-omni's client gives up on them too)."""


class Refused(SystemFailure):
    """An ``error`` event answering a handshake, with its code."""

    def __init__(self, message: str, code: object) -> None:
        super().__init__(message)
        self.code = code


def with_query(url: str, **params: str) -> str:
    """``url`` with ``params`` set in its query (existing values replaced)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))


def decode_event(message: Any) -> dict[str, Any]:
    """A server event; anything but a JSON object with a string ``type`` is garbage."""
    try:
        event = json.loads(message)
    except (TypeError, ValueError):
        raise SystemFailure("garbage from the server: a message that is not JSON") from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise SystemFailure("garbage from the server: a JSON message without a type")
    return event


def response_id(event: dict[str, Any]) -> str | None:
    """``response_id``, or ``response.id``, of an event."""
    rid = event.get("response_id")
    if isinstance(rid, str) and rid:
        return rid
    response = event.get("response")
    if isinstance(response, dict) and isinstance(response.get("id"), str):
        return str(response["id"])
    return None


def error_text(event: dict[str, Any]) -> str:
    """``code: message`` of an ``error`` event."""
    error = event.get("error")
    if isinstance(error, dict):
        return f"{error.get('code') or error.get('type', 'error')}: {error.get('message', '')}"
    return f"{event.get('code', 'error')}: {error if error is not None else ''}"


def error_code(event: dict[str, Any]) -> object:
    """The ``code`` of an ``error`` event (in its ``error`` object, or at the top level)."""
    error = event.get("error")
    return error.get("code") if isinstance(error, dict) else event.get("code")
