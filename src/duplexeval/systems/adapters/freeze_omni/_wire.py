"""The Freeze-Omni demo server's Socket.IO events (``bin/server.py``, ``web/resources/demo.html``).

=====================  ==========  ============================================================
event                  direction   payload
=====================  ==========  ============================================================
``recording-started``  c -> s      none: the server interrupts any reply, resets its VAD and
                                   dialogue state, and emits ``stop_tts`` (twice)
``audio``              c -> s      a JSON *string* ``{"sample_rate": 16000, "audio": [...]}``:
                                   the bytes of int16 little-endian mono PCM at 16 kHz as a list
                                   of uint8 (the web client sends 256-sample chunks, 16 ms)
``recording-stopped``  c -> s      none: interrupt and reset
``prompt_text``        c -> s      the system prompt (a string); answered by ``prompt_success``
``audio``              s -> c      binary: int16 little-endian mono PCM at 24 kHz, one queued
                                   TTS chunk; the server emits **at most one chunk per incoming
                                   ``audio`` message**, so a client must keep sending (silence
                                   too) to receive a reply
``stop_tts``           s -> c      stop playback now (the web client empties its queue and stops
                                   the current chunk); sent after an interruption
``too_many_users``     s -> c      the server is full (``--max_users``, 5 by default)
``out_time``           s -> c      the server ends the session after ``--timeout`` s idle
``prompt_success``     s -> c      the prompt was set
=====================  ==========  ============================================================

Inside the server a thread reads the received PCM in 160 ms blocks through Silero VAD
(threshold 0.8, 2 s of silence ends a turn) and the LLM's state classifier; its replies are
synthesized sentence by sentence into the queue the ``audio`` handler drains.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from duplexeval.systems._base import SystemFailure

__all__ = ["CHUNK", "IN_RATE", "OUT_RATE", "audio_payload", "parse_audio"]

IN_RATE = 16000
"""Hz: what the server reads."""
OUT_RATE = 24000
"""Hz: what its TTS writes."""
CHUNK = 256
"""Samples per ``audio`` message at 16 kHz (16 ms), the web client's ScriptProcessor size."""


def audio_payload(frame: np.ndarray) -> str:
    """One input frame (float32 in [-1, 1] at 16 kHz) as the ``audio`` event's JSON string;
    samples are scaled by 32767 and clipped, as the web client does."""
    pcm = (np.clip(frame, -1.0, 1.0) * 32767.0).astype("<i2")
    return json.dumps({"sample_rate": IN_RATE, "audio": list(pcm.tobytes())})


def parse_audio(data: Any) -> np.ndarray:
    """The server's ``audio`` payload as float32 at 24 kHz (int16 / 32768); anything that is
    not whole int16 samples is garbage (:class:`SystemFailure`)."""
    if not isinstance(data, bytes | bytearray):
        raise SystemFailure(f"garbage from the server: an audio event carrying "
                            f"{type(data).__name__}, not int16 PCM bytes")
    if len(data) % 2:
        raise SystemFailure(f"garbage from the server: a {len(data)}-byte audio event is not "
                            "int16 PCM (odd length)")
    return np.frombuffer(bytes(data), dtype="<i2").astype(np.float32) / 32768.0
