"""The DuplexCascade WebSocket wire format, as its web client and the M3-DuplexBench client
(``inference/models/duplexcascade.py``) speak it; the server's source was not available here,
so nothing beyond what those clients send and read is assumed.

=========  ===================================================================================
direction  message
=========  ===================================================================================
c -> s     binary: float32 little-endian mono PCM at 24 kHz, one 1920-sample (80 ms) frame
c -> s     text ``Done``: the end of the input (the server finishes and closes)
s -> c     binary: float32 little-endian mono PCM at 24 kHz, any length (TTS chunks, generated
           faster than real time)
s -> c     text: a JSON object; ``{"type": "audio_control", "action": "stop"}`` tells the
           client to stop playback now (barge-in); other objects (transcripts, state) are
           information only
=========  ===================================================================================

The server opens its speech-to-text and text-to-speech links to its Kyutai ``moshi-server``
workers after the WebSocket handshake, so a client waits (1 s in the M3 client) before sending
audio.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from duplexeval.systems._base import SystemFailure

__all__ = ["DONE", "FRAME", "SAMPLE_RATE", "Message", "encode_frame", "parse"]

SAMPLE_RATE = 24000
"""Hz, both directions."""
FRAME = 1920
"""Samples per 80 ms input frame."""
DONE = "Done"
"""The client's end-of-input text message."""


@dataclass(frozen=True)
class Message:
    """One server message: ``audio`` (``pcm``), ``stop``, ``event`` (another JSON object, in
    ``event``) or ``text`` (a text frame that is not a JSON object: ignored, as the M3 client
    does)."""

    kind: str
    pcm: np.ndarray | None = None
    event: dict[str, Any] | None = None


def encode_frame(frame: np.ndarray) -> bytes:
    """One input frame as float32 little-endian bytes."""
    return np.ascontiguousarray(frame, dtype="<f4").tobytes()


def parse(raw: Any) -> Message:
    """A received WebSocket message; binary audio that is not whole float32 samples, or holds
    NaN or infinite values, is garbage (:class:`SystemFailure`)."""
    if isinstance(raw, bytes | bytearray | memoryview):
        data = bytes(raw)
        if len(data) % 4:
            raise SystemFailure(f"garbage from the server: a {len(data)}-byte binary message "
                                "is not float32 PCM (length not a multiple of 4)")
        pcm = np.frombuffer(data, dtype="<f4").astype(np.float32)
        if not np.all(np.isfinite(pcm)):
            raise SystemFailure("garbage from the server: float32 PCM with NaN or infinite "
                                "values")
        return Message("audio", pcm=pcm)
    try:
        event = json.loads(raw)
    except (TypeError, ValueError):
        return Message("text")
    if not isinstance(event, dict):
        return Message("text")
    if event.get("type") == "audio_control" and event.get("action") == "stop":
        return Message("stop", event=event)
    return Message("event", event=event)
