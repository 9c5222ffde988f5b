"""A loopback server speaking the Gemini Live API's ``BidiGenerateContent`` WebSocket messages
(``ai.google.dev/api/live``), with a deterministic fake model.

Protocol as documented: the upgrade on ``/ws/google.ai.generativelanguage.v1beta.
GenerativeService.BidiGenerateContent`` with the key in the ``x-goog-api-key`` header (or
``?key=``); the first message is ``setup`` (answered ``setupComplete``; a ``setup`` with
``sessionResumption`` gets ``sessionResumptionUpdate`` handles, and one with a ``handle``
reattaches to that session, an unknown handle closes with 1007); every message is one JSON
object with one field, sent by the server as binary frames as the real service does.
``realtimeInput.audio`` must be ``audio/pcm;rate=16000`` (anything else closes with 1007).

Fake model: automatic activity detection over 20 ms chunks (RMS > 0.01 is speech); after
``silenceDurationMs`` (default 500) of silence following speech, a reply: an
``outputTranscription`` "hello" and ``reply_ms`` of a 440 Hz tone at 24 kHz as ``modelTurn``
``inlineData`` parts of 40 ms, one per 20 ms of input received (twice real time), then
``generationComplete``, and ``turnComplete`` once the input clock has passed the reply's
real-time end.  Speech starting while a reply is generated or still "playing" (before its
``turnComplete``), with ``activityHandling`` START_OF_ACTIVITY_INTERRUPTS, stops it with
``serverContent.interrupted``.  The input position (ms) and monotonic time of each reply's
first chunk are logged in ``replies``, every interruption's input position in ``interrupts``.

Faults (``faults[session number] = (kind, input_ms)``): ``goaway`` sends ``goAway`` and closes
(the session stays resumable); ``disconnect`` closes and forgets the session; ``stall`` stops
sending mid-reply (after its first chunk); ``garbage`` sends a frame that is not JSON; ``echo``
closes with a reason quoting the request's key.  ``mute`` never answers a ``setup``.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import numpy as np
from websockets.sync.server import Request, Response, ServerConnection

from loopback_ws import LoopbackWsServer

PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
IN_RATE, OUT_RATE = 16000, 24000
CHUNK = 320


@dataclass
class LiveState:
    """One Live session (survives its transport when resumable)."""

    number: int
    setup: dict[str, Any]
    conn: ServerConnection | None = None
    pending: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    input_ms: int = 0
    speaking: bool = False
    silent_ms: int = 0
    reply_sent: int | None = None
    """Samples of the current reply sent (None: no reply)."""
    reply_start_ms: int = 0
    generated: bool = False
    stalled: bool = False
    handle: str = ""


class FakeGeminiServer(LoopbackWsServer):
    """The server on 127.0.0.1 (a free port, or ``port``) in a daemon thread while open."""

    path = PATH

    def __init__(self, key: str, reply_ms: int = 2000,
                 faults: dict[int, tuple[str, int]] | None = None, port: int = 0,
                 mute: bool = False) -> None:
        super().__init__(port)
        self.key, self.reply_ms, self.faults = key, reply_ms, faults or {}
        self.mute = mute
        self.sessions: dict[str, LiveState] = {}
        self.count = 0
        self.setups: list[dict[str, Any]] = []
        self.messages: list[Any] = []
        """Every client message as received, on every connection (the transcript tests)."""
        self.replies: dict[int, list[tuple[float, int]]] = {}
        self.interrupts: dict[int, list[int]] = {}
        self.resumed: list[int] = []

    def _authorize(self, conn: ServerConnection, request: Request,
                   query: dict[str, list[str]]) -> Response | None:
        key = request.headers.get("x-goog-api-key") or query.get("key", [""])[0]
        if key != self.key:
            return conn.respond(HTTPStatus.FORBIDDEN, "API key not valid.\n")
        return None

    def _handle(self, conn: ServerConnection) -> None:
        if self.mute:  # reads, never answers: the client's handshake times out
            for _ in conn:
                pass
            return
        state: LiveState | None = None
        try:
            for message in conn:
                body = json.loads(message)
                with self._lock:
                    self.messages.append(body)
                    if state is None:
                        state = self._setup(conn, body.get("setup"))
                        if state is None:
                            return
                    elif state.conn is conn and "realtimeInput" in body and \
                            not self._input(state, conn, body["realtimeInput"]):
                        return
        except Exception:  # the client went away mid-send
            return

    @staticmethod
    def send(conn: ServerConnection | None, message: dict[str, Any]) -> None:
        if conn is not None:
            conn.send(json.dumps(message).encode())  # binary frames, as the service sends

    def _setup(self, conn: ServerConnection, setup: Any) -> LiveState | None:
        if not isinstance(setup, dict):
            conn.close(1007, "the first message must be setup")
            return None
        handle = (setup.get("sessionResumption") or {}).get("handle")
        if handle:
            state = self.sessions.get(handle)
            if state is None:
                conn.close(1007, "invalid session resumption handle")
                return None
            self.resumed.append(state.number)
        else:
            self.setups.append(setup)
            state = LiveState(self.count, setup)
            self.replies[state.number], self.interrupts[state.number] = [], []
            self.count += 1
        state.conn = conn
        self.send(conn, {"setupComplete": {}})
        self._new_handle(state)
        return state

    def _new_handle(self, state: LiveState) -> None:
        if "sessionResumption" not in state.setup:
            return
        self.sessions.pop(state.handle, None)
        state.handle = secrets.token_hex(8)
        self.sessions[state.handle] = state
        self.send(state.conn, {"sessionResumptionUpdate": {"newHandle": state.handle,
                                                           "resumable": True}})

    def _vad(self, state: LiveState) -> dict[str, Any]:
        return state.setup.get("realtimeInputConfig", {}).get("automaticActivityDetection", {})

    def _input(self, state: LiveState, conn: ServerConnection, realtime: dict[str, Any]) -> bool:
        audio = realtime.get("audio", {})
        if audio.get("mimeType") != "audio/pcm;rate=16000":
            conn.close(1007, f"unsupported audio {audio.get('mimeType')!r}")
            return False
        x = np.frombuffer(base64.b64decode(audio["data"]), "<i2").astype(np.float32) / 32768
        state.pending = np.concatenate([state.pending, x])
        while len(state.pending) >= CHUNK:
            chunk, state.pending = state.pending[:CHUNK], state.pending[CHUNK:]
            state.input_ms += 20
            fault = self.faults.get(state.number)
            if fault is not None and state.input_ms >= fault[1] and \
                    not (fault[0] == "stall" and not state.reply_sent):
                del self.faults[state.number]
                if not self._fault(state, conn, fault[0]):
                    return False
            self._detect(state, float(np.sqrt(np.mean(chunk ** 2))) > 0.01)
            if not state.stalled:
                self._generate(state)
        return True

    def _detect(self, state: LiveState, voiced: bool) -> None:
        if voiced and not state.speaking:
            state.speaking, state.silent_ms = True, 0
            handling = state.setup.get("realtimeInputConfig", {}).get(
                "activityHandling", "START_OF_ACTIVITY_INTERRUPTS")
            if state.reply_sent is not None and handling == "START_OF_ACTIVITY_INTERRUPTS":
                state.reply_sent = None
                self.interrupts[state.number].append(state.input_ms - 20)
                self.send(state.conn, {"serverContent": {"interrupted": True}})
        elif state.speaking and not voiced:
            state.silent_ms += 20
            if state.silent_ms >= self._vad(state).get("silenceDurationMs", 500):
                state.speaking = False
                state.reply_sent, state.generated = 0, False
                state.reply_start_ms = state.input_ms
                self.send(state.conn, {"serverContent": {"outputTranscription":
                                                         {"text": "hello"}}})
        elif voiced:
            state.silent_ms = 0

    def _generate(self, state: LiveState) -> None:
        if state.reply_sent is None:
            return
        total = OUT_RATE * self.reply_ms // 1000
        if not state.generated:
            n = min(OUT_RATE * 40 // 1000, total - state.reply_sent)
            t = np.arange(state.reply_sent, state.reply_sent + n) / OUT_RATE
            pcm = (0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype("<i2").tobytes()
            if state.reply_sent == 0:
                self.replies[state.number].append((time.monotonic(), state.input_ms))
            self.send(state.conn, {"serverContent": {"modelTurn": {"parts": [{"inlineData": {
                "mimeType": "audio/pcm;rate=24000", "data": base64.b64encode(pcm).decode()}}]}}})
            state.reply_sent += n
            if state.reply_sent >= total:
                state.generated = True
                self.send(state.conn, {"serverContent": {"generationComplete": True}})
        elif state.input_ms >= state.reply_start_ms + self.reply_ms:
            state.reply_sent = None
            self.send(state.conn, {"serverContent": {"turnComplete": True}})
            self._new_handle(state)

    def _fault(self, state: LiveState, conn: ServerConnection, kind: str) -> bool:
        """Act out a fault; False when this transport is over."""
        if kind == "goaway":
            self.send(conn, {"goAway": {"timeLeft": "0s"}})
            state.conn = None
            conn.close()
            return False
        if kind == "disconnect":
            self.sessions.pop(state.handle, None)
            state.conn = None
            conn.close()
            return False
        if kind == "garbage":
            conn.send(b"\x00\x01 not json")
            return False
        if kind == "echo":  # and forgets the session
            self.sessions.pop(state.handle, None)
            key = conn.request.headers.get("x-goog-api-key", "") if conn.request else ""
            conn.close(1008, f"API key {key} has expired")
            return False
        state.stalled = True  # stall: keep reading, never answer
        return True
