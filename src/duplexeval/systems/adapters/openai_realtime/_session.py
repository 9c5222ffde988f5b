"""One ``openai-realtime`` session: the event protocol, deadline pacing, playout and barge-in.

Channel roles: the user channel goes up as ``input_audio_buffer.append`` (base64 PCM16 LE,
24 kHz mono), the system channel comes back as ``response.output_audio.delta`` (beta name
``response.audio.delta``).

Setup: connect (``Authorization: Bearer`` from the environment), wait for ``session.created``,
send ``session.update`` (server or semantic VAD, PCM formats, voice, reasoning effort), wait for
``session.updated``; the server's echo of the session is recorded in the trace.

Timeline (the shared :class:`~duplexeval.systems.realtime._driver.RealtimeDriver`): frame ``k``
(20 ms) is sent at the absolute deadline ``t0 + (k + 1) * 20 ms`` (``t0`` = the first
``step``), never after a fixed sleep.  Audio deltas arrive faster than real time and go through
the driver's playout buffer: a chunk starts at the later of its arrival and the end of the
audio before it, so the system channel is what a listener would hear.  The driver's trace is
the session's, with the server's echo of the session in ``realtime.server_session`` and the
VAD events, errors, ``response.done`` and barge-ins in ``server_events``.  Server VAD events
keep their ``audio_start_ms`` / ``audio_end_ms`` (positions in the written buffer = session
time, since the buffer is written in real time).

Barge-in: when ``input_audio_buffer.speech_started`` arrives while reply audio is still queued
beyond "now", the queued rest is flushed (never heard), and unless ``truncate`` is off the
client sends ``response.cancel`` (if a response is still being generated) and
``conversation.item.truncate`` with ``audio_end_ms`` = the milliseconds of that item actually
played.  Deltas of a cancelled item that still arrive are dropped.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from duplexeval.systems._base import Forced, StepOutput, SystemFailure
from duplexeval.systems.realtime._driven import DrivenSession
from duplexeval.systems.realtime._driver import Clock, RealtimeDriver
from duplexeval.systems.realtime._websocket import Connection

__all__ = ["FRAME", "RATE", "RealtimeApiSession", "RealtimeSettings"]

RATE = 24000
"""Hz, both directions (``audio/pcm`` at 24 kHz)."""
FRAME = 480
"""Samples per 20 ms frame."""
_AUDIO_DELTA = ("response.output_audio.delta", "response.audio.delta")
_TEXT_DELTA = ("response.output_audio_transcript.delta", "response.audio_transcript.delta")
_BENIGN_ERRORS = {"response_cancel_not_active"}
"""Error codes that a race makes harmless (the server cancelled first)."""


@dataclass(frozen=True)
class RealtimeSettings:
    """One session's connection settings (times in s); ``headers`` are never recorded."""

    url: str
    headers: tuple[tuple[str, str], ...]
    session: dict[str, Any] = field(default_factory=dict)
    truncate: bool = True
    stall_timeout: float = 30.0
    connect_timeout: float = 10.0


def pcm16(x: np.ndarray) -> str:
    """float32 [-1, 1] as base64 PCM16 little-endian."""
    return base64.b64encode((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes()).decode()


def from_pcm16(text: str) -> np.ndarray:
    """base64 PCM16 little-endian as float32."""
    return np.frombuffer(base64.b64decode(text), dtype="<i2").astype(np.float32) / 32768.0


class RealtimeApiSession(DrivenSession):
    """See the module docstring."""

    def __init__(self, settings: RealtimeSettings, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self.text: list[dict[str, Any]] = []
        self.server_session: dict[str, Any] = {}
        self._secrets = tuple(v for _, v in settings.headers)
        # a response being generated that sends nothing for stall_timeout s is a stalled
        # server (the sample fails), not a silent model
        self.driver = RealtimeDriver(RATE, FRAME, clock, settings.stall_timeout,
                                     stall_after="message",
                                     expecting=lambda: self._active_response is not None)
        self._items: dict[str, int] = {}
        """Start sample of each output item's audio on the playout clock."""
        self._current: str | None = None
        self._active_response: str | None = None
        self._cancelled: set[str] = set()
        self._conn = Connection(settings.url, dict(settings.headers), settings.connect_timeout)
        try:
            self._setup()
        except SystemFailure as exc:
            raise self._failed(exc) from None

    def _disconnect(self) -> None:
        self._conn.close()

    def _send(self, event: dict[str, Any]) -> float:
        return self._conn.send(json.dumps(event))

    def _expect(self, kind: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.settings.stall_timeout
        while True:
            got = self._conn.recv(deadline - time.monotonic())
            if got is None:
                raise SystemFailure(f"no {kind} from the server within "
                                    f"{self.settings.stall_timeout:g} s")
            event = _decode(got[0])
            if event.get("type") == "error":
                raise SystemFailure(f"the server reported an error: {_error_text(event)}")
            if event.get("type") == kind:
                return event

    def _setup(self) -> None:
        self._expect("session.created")
        self._send({"type": "session.update", "session": self.settings.session})
        self.server_session = self._expect("session.updated").get("session", {})

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        texts = len(self.text)
        message = json.dumps({"type": "input_audio_buffer.append", "audio": pcm16(user)})
        # the message is encoded before the deadline, so only the send is timed
        out = self._drive(lambda: self._conn.send(message), self._conn.recv,
                          lambda raw, arrival: self._handle(_decode(raw), arrival))
        return StepOutput(out, "".join(str(e["text"]) for e in self.text[texts:]))

    def _handle(self, event: dict[str, Any], arrival: float) -> None:
        kind = str(event.get("type", ""))
        at = self.driver.position(arrival)
        if kind in _AUDIO_DELTA:
            self._audio(event, arrival)
        elif kind in _TEXT_DELTA:
            self.text.append({"sample": at, "text": event.get("delta", "")})
        elif kind == "response.created":
            self._active_response = str(event.get("response", {}).get("id", ""))
        elif kind == "response.done":
            self._active_response = None
        elif kind == "error" and event.get("error", {}).get("code") not in _BENIGN_ERRORS:
            raise SystemFailure(f"the server reported an error: {_error_text(event)}")
        if kind.startswith("input_audio_buffer.") or kind in ("error", "response.done"):
            self.driver.log(kind, arrival, **{k: v for k, v in event.items() if k in (
                "audio_start_ms", "audio_end_ms", "item_id")})
        if kind == "input_audio_buffer.speech_started":
            self._barge_in(arrival)

    def _audio(self, event: dict[str, Any], arrival: float) -> None:
        item = str(event.get("item_id", ""))
        if item in self._cancelled:
            return
        try:
            pcm = from_pcm16(str(event.get("delta", "")))
        except ValueError as exc:
            raise SystemFailure(f"garbage from the server: an audio delta that is not base64 "
                                f"PCM16 ({exc})") from None
        start = self.driver.place(pcm, arrival, stream=item)
        self._items.setdefault(item, start)
        self._current = item

    def _barge_in(self, arrival: float) -> None:
        """The user spoke while reply audio was queued: flush it, cancel and truncate."""
        item = self._current
        now = self.driver.position(arrival)
        playout = self.driver.playout
        if item is None or playout is None or playout.end <= now:
            return
        played = max(0, now - self._items[item])
        dropped = self.driver.interrupt(arrival, "barge_in")
        self._cancelled.add(item)
        entry = self.driver.log("barge_in", arrival, item_id=item,
                                played_ms=round(played * 1000 / RATE), dropped=dropped)
        if self.settings.truncate:
            if self._active_response:
                self._send({"type": "response.cancel"})
            self._send({"type": "conversation.item.truncate", "item_id": item,
                        "content_index": 0, "audio_end_ms": entry["played_ms"]})
        entry["sent_truncate"] = self.settings.truncate

    def trace(self) -> dict[str, Any]:
        timing = self.driver.trace()
        timing["realtime"]["server_session"] = self.server_session
        return {"sample_rate": RATE, "text": self.text, **timing}

    def close(self) -> None:
        self.driver.close()
        self._conn.close()


def _decode(message: Any) -> dict[str, Any]:
    """A server event; anything but a JSON object with a ``type`` is garbage."""
    try:
        event = json.loads(message)
    except (TypeError, ValueError):
        raise SystemFailure("garbage from the server: a message that is not JSON") from None
    if not isinstance(event, dict) or "type" not in event:
        raise SystemFailure("garbage from the server: a JSON message without a type")
    return event


def _error_text(event: dict[str, Any]) -> str:
    error = event.get("error", {})
    if not isinstance(error, dict):
        return str(error)
    return f"{error.get('code') or error.get('type', 'error')}: {error.get('message', '')}"
