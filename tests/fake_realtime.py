"""A loopback server speaking the OpenAI Realtime API's WebSocket events (GA names), with a
deterministic fake model.

Protocol as documented: ``GET /v1/realtime?model=M`` with ``Authorization: Bearer KEY``;
``session.created`` first; ``session.update`` answered by ``session.updated`` (the session
merged); ``input_audio_buffer.append`` (base64 PCM16 24 kHz) appended to the input buffer.

Server VAD over the buffer (20 ms chunks, RMS > 0.01 is speech): ``speech_started`` with
``audio_start_ms`` at the first voiced chunk, ``speech_stopped`` with ``audio_end_ms`` after
``silence_duration_ms`` of silence, then (``create_response``) a response: ``response.created``,
``reply_ms`` of a 440 Hz tone as ``response.output_audio.delta`` events of 40 ms, one per
appended 20 ms (twice real time: faster than real time, like the real service), one transcript
delta, ``response.output_audio.done`` and ``response.done``.  Speech starting while a response
is generated cancels it when ``interrupt_response`` is on (``response.done`` with status
``cancelled``).  ``response.cancel`` without an active response is an error
``response_cancel_not_active``; ``conversation.item.truncate`` is logged and answered with
``conversation.item.truncated``.

Options for ``duplexeval rtcheck``: ``min_speech_ms`` debounces the VAD (``speech_started``
only after that much continuous voiced audio; 0: at the first voiced chunk, so a 60 ms
transient interrupts), ``audio_ms`` is the reply audio sent per appended 20 ms (40: twice
real time; below 20 the server is slower than real time and its replies stall).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
from websockets.sync.server import Request, Response, ServerConnection

from loopback_ws import LoopbackWsServer

RATE = 24000
CHUNK = 480


def b64(x: np.ndarray) -> str:
    return base64.b64encode((x * 32767).astype("<i2").tobytes()).decode()


class _Conversation:
    """One connection's state: the buffer, the VAD and the response being generated."""

    def __init__(self, server: FakeRealtimeServer, conn: ServerConnection) -> None:
        self.server, self.conn = server, conn
        self.session: dict[str, Any] = {"type": "realtime", "model": "fake"}
        self.pending = np.zeros(0, np.float32)
        self.buffer_ms = 0
        self.speaking = False
        self.silent_ms = 0
        self.items = 0
        self.response: dict[str, Any] | None = None
        self.voiced_ms = 0

    def send(self, event: dict[str, Any]) -> None:
        self.conn.send(json.dumps(event))

    def vad(self) -> dict[str, Any]:
        return self.session.get("audio", {}).get("input", {}).get("turn_detection", {})

    def on_append(self, audio: str) -> None:
        x = np.frombuffer(base64.b64decode(audio), "<i2").astype(np.float32) / 32768
        self.pending = np.concatenate([self.pending, x])
        while len(self.pending) >= CHUNK:
            chunk, self.pending = self.pending[:CHUNK], self.pending[CHUNK:]
            self.detect(float(np.sqrt(np.mean(chunk ** 2))) > 0.01)
            self.buffer_ms += 20
        self.generate()

    def detect(self, voiced: bool) -> None:
        self.voiced_ms = self.voiced_ms + 20 if voiced else 0
        if voiced and not self.speaking and self.voiced_ms < self.server.min_speech_ms:
            return
        if voiced and not self.speaking:
            self.speaking, self.silent_ms = True, 0
            self.items += 1
            self.send({"type": "input_audio_buffer.speech_started",
                       "audio_start_ms": self.buffer_ms, "item_id": f"user_{self.items}"})
            if self.response is not None and self.vad().get("interrupt_response", True):
                self.finish("cancelled")
        elif self.speaking and not voiced:
            self.silent_ms += 20
            if self.silent_ms >= self.vad().get("silence_duration_ms", 500):
                self.speaking = False
                self.send({"type": "input_audio_buffer.speech_stopped",
                           "audio_end_ms": self.buffer_ms, "item_id": f"user_{self.items}"})
                if self.vad().get("create_response", True):
                    self.start()
        elif voiced:
            self.silent_ms = 0

    def start(self) -> None:
        self.items += 1
        rid, item = f"resp_{self.items}", f"item_{self.items}"
        self.response = {"id": rid, "item": item, "sent": 0}
        self.send({"type": "response.created", "response": {"id": rid, "status": "in_progress"}})
        self.send({"type": "response.output_audio_transcript.delta", "response_id": rid,
                   "item_id": item, "delta": "hello"})

    def generate(self) -> None:
        r = self.response
        if r is None:
            return
        n = RATE * self.server.audio_ms // 1000
        t = np.arange(r["sent"], r["sent"] + n) / RATE
        self.send({"type": "response.output_audio.delta", "response_id": r["id"],
                   "item_id": r["item"], "output_index": 0, "content_index": 0,
                   "delta": b64((0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32))})
        r["sent"] += n
        if r["sent"] >= RATE * self.server.reply_ms // 1000:
            self.send({"type": "response.output_audio.done", "response_id": r["id"],
                       "item_id": r["item"]})
            self.finish("completed")

    def finish(self, status: str) -> None:
        assert self.response is not None
        self.send({"type": "response.done",
                   "response": {"id": self.response["id"], "status": status}})
        self.response = None

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        self.server.messages.append(event)
        self.server.received.append(event if kind != "input_audio_buffer.append"
                                    else {"type": kind})
        if kind == "session.update":
            self.session.update(event["session"])
            self.send({"type": "session.updated", "session": self.session})
        elif kind == "input_audio_buffer.append":
            self.on_append(event["audio"])
        elif kind == "response.cancel":
            if self.response is None:
                self.send({"type": "error", "error": {
                    "type": "invalid_request_error", "code": "response_cancel_not_active",
                    "message": "Cancellation failed: no active response found"}})
            else:
                self.finish("cancelled")
        elif kind == "conversation.item.truncate":
            self.server.truncates.append(event)
            self.send({"type": "conversation.item.truncated", "item_id": event["item_id"],
                       "content_index": 0, "audio_end_ms": event["audio_end_ms"]})


class FakeRealtimeServer(LoopbackWsServer):
    """The server on 127.0.0.1 (a free port) in a daemon thread while the context is open;
    ``fault="error"`` answers the session update with an error quoting the request's
    ``Authorization`` header, ``fault="garbage"`` with a message that is not JSON."""

    path = "/v1/realtime"

    def __init__(self, key: str, reply_ms: int = 3000, fault: str | None = None,
                 min_speech_ms: int = 0, audio_ms: int = 40) -> None:
        super().__init__()
        self.key, self.reply_ms, self.fault = key, reply_ms, fault
        self.min_speech_ms, self.audio_ms = min_speech_ms, audio_ms
        self.received: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        """Every client event as received, appends with their audio (the transcript tests)."""
        self.truncates: list[dict[str, Any]] = []

    def _authorize(self, conn: ServerConnection, request: Request,
                   query: dict[str, list[str]]) -> Response | None:
        return self.bearer_refused(conn, request, self.key, "invalid api key\n")

    def _handle(self, conn: ServerConnection) -> None:
        convo = _Conversation(self, conn)
        convo.send({"type": "session.created", "session": convo.session})
        try:
            for message in conn:
                event = json.loads(message)
                if self.fault == "error" and event.get("type") == "session.update":
                    header = conn.request.headers.get("Authorization") if conn.request else ""
                    convo.send({"type": "error", "error": {
                        "code": "invalid_value", "message": f"bad session for {header}"}})
                    continue
                if self.fault == "garbage":
                    conn.send("<html>502 Bad Gateway</html>")
                    continue
                convo.on_event(event)
        except Exception:  # the client went away mid-send
            return
