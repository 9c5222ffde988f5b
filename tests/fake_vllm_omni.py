"""A loopback server speaking vLLM-Omni's full-duplex Realtime contract (``/v1/realtime?duplex=1``,
as vllm-omni's ``clients/duplex.py`` and ``entrypoints/duplex`` do it), with a deterministic
fake model in place of MiniCPM-o / PersonaPlex.

Protocol: an upgrade on ``/v1/realtime`` with ``duplex=1`` only; the first client event is
``session.update`` (answered by ``session.created`` with the session, a ``resume_token`` and an
``incarnation``) or, on a URL with ``resume=1``, ``session.resume`` (answered by
``session.resumed`` with a fresh token and the incarnation plus one, then a replay of every
journaled event after ``last_received_server_event_seq``; a wrong token, incarnation or an
unknown session is ``error`` ``invalid_resume_token``).  Every event after ``session.created``
has a ``server_event_seq`` and is journaled until the client's ``session.event_ack``.
``input_audio_buffer.append`` carries base64 audio in the session's ``input_audio_format``
(``pcm16`` or ``pcm_f32le``) at its ``sample_rate_hz``; an append declaring another format or
rate is answered by ``error`` ``bad_audio``.
``playback.ack`` follows the server's rules: ``item_id`` must be ``item_<response_id>``
(``playback_item_mismatch``), the response must exist (``playback_item_not_found``), and the
first ack of a response is refused with ``playback_ack_too_late`` once a later user input has
been committed; an accepted ack reserves the response's history slot (later acks for it are
accepted) and is answered by ``playback.acknowledged``.  ``session.heartbeat`` is counted;
``session.close`` is answered by ``session.closed``.

Fake model, one decision per model unit (the first closes at 1030 ms of appended audio, each
later one 1000 ms after; ``capabilities.chunk_period_ms`` = 1000): a unit with a voiced 20 ms
chunk (RMS > 0.01) is heard; a silent unit after a heard one commits the user input (the
commit sequence advances) and starts a response: ``response.created``, ``response.speak``,
a transcript delta "hello", and the reply (a 440 Hz tone of ``reply_ms``) as
``response.output_audio.delta`` events of 200 ms, one unit's worth (1 s) per unit, faster than
real time; then ``response.done``.  Any other unit is a ``response.listen`` beat.  The
monotonic time at which each response's first delta was sent, and the input position (ms of
appended audio) that closed its unit, are logged in ``onsets``.

Faults (``faults[session number] = (kind, unit)``, sessions counted from 0 in the order of
their ``session.update``; acted out when that unit closes): ``drop`` closes the transport but
keeps the session, whose model goes on deciding that unit (its events wait in the journal for
the resume's replay); ``disconnect`` closes it and forgets the session (a resume is
refused); ``stall`` stops answering; ``garbage`` sends a text frame that is not JSON; ``echo``
sends an error quoting the request's ``Authorization`` header.  ``mute`` never answers a
``session.update``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from websockets.sync.server import Request, Response, ServerConnection

from loopback_ws import LoopbackWsServer

OUT_RATE = 24000
FIRST_UNIT_MS, UNIT_MS = 1030, 1000
"""Input that closes unit 0, and each unit after it (``DUPLEX_FIRST_UNIT_MS``, ``_UNIT_MS``)."""
DECODERS = {"pcm16": ("<i2", 32768.0), "pcm_f32le": ("<f4", 1.0)}


def b64(x: np.ndarray) -> str:
    return base64.b64encode((x * 32767).astype("<i2").tobytes()).decode()


@dataclass
class DuplexState:
    """One duplex session, surviving its transport (a resume reattaches to it)."""

    number: int
    session_id: str
    token: str
    encoding: str = "pcm16"
    rate: int = 16000
    """The session's input format and rate (``input_audio_format``, ``sample_rate_hz``)."""
    incarnation: int = 0
    seq: int = 0
    journal: list[dict[str, Any]] = field(default_factory=list)
    conn: ServerConnection | None = None
    pending: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    appended: int = 0
    unit: int = 0
    voiced: bool = False
    """Whether the unit being decided has a voiced 20 ms chunk."""
    heard: bool = False
    commit_seq: int = 0
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    speaking: str | None = None
    stalled: bool = False


class FakeVllmOmniServer(LoopbackWsServer):
    """The server on 127.0.0.1 (a free port, or ``port``) in a daemon thread while open."""

    path = "/v1/realtime"

    def __init__(self, reply_ms: int = 1500, faults: dict[int, tuple[str, int]] | None = None,
                 require_key: str | None = None, port: int = 0, mute: bool = False) -> None:
        self.reply_ms, self.faults = reply_ms, faults or {}
        super().__init__(port)
        self.require_key, self.mute = require_key, mute
        self.sessions: dict[str, DuplexState] = {}
        self.count = 0
        self.onsets: dict[int, list[tuple[float, float]]] = {}
        self.acks: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        """Every client event as received, on every connection (the transcript tests)."""
        self.refused: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.closed: list[int] = []
        self.heartbeats: list[int] = []
        self.resumed: list[int] = []

    def _accepts(self, query: dict[str, list[str]]) -> bool:
        return query.get("duplex") == ["1"]

    def _authorize(self, conn: ServerConnection, request: Request,
                   query: dict[str, list[str]]) -> Response | None:
        return self.bearer_refused(conn, request, self.require_key)

    # -- connection --------------------------------------------------------------------------

    def _handle(self, conn: ServerConnection) -> None:
        if self.mute:  # reads, never answers: the client's handshake times out
            for _ in conn:
                pass
            return
        state: DuplexState | None = None
        with contextlib.suppress(Exception):  # the client went away mid-send
            for message in conn:
                event = json.loads(message)
                with self._lock:
                    self.messages.append(event)
                    if state is None:
                        state = self._open(conn, event)
                        if state is None:
                            return
                        continue
                    if state.conn is not conn:
                        return  # superseded by a resumed transport
                    if not self._on_event(state, conn, event):
                        return

    def _open(self, conn: ServerConnection, event: dict[str, Any]) -> DuplexState | None:
        if event.get("type") == "session.update":
            self.updates.append(event)
            number = self.count
            self.count += 1
            sid = f"sess_{number}"
            session = event.get("session", {})
            state = DuplexState(number, sid, secrets.token_hex(8),
                                session.get("input_audio_format", "pcm16"),
                                int(session.get("sample_rate_hz", 16000)), conn=conn)
            self.sessions[sid] = state
            self.onsets[number] = []
            conn.send(json.dumps({
                "type": "session.created", "resume_token": state.token, "incarnation": 0,
                "session": {**event.get("session", {}), "session_id": sid,
                            "capabilities": {"chunk_period_ms": 1000, "first_unit_ms": 1030}}}))
            return state
        if event.get("type") == "session.resume":
            state = self.sessions.get(str(event.get("session_id")))
            if state is None or event.get("resume_token") != state.token or \
                    event.get("incarnation") != state.incarnation:
                conn.send(json.dumps({"type": "error", "error": {
                    "type": "invalid_request_error", "code": "invalid_resume_token",
                    "message": "Unknown session or stale resume credentials."}}))
                return None
            state.incarnation += 1
            state.token = secrets.token_hex(8)
            state.conn = conn
            self.resumed.append(state.number)
            conn.send(json.dumps({"type": "session.resumed", "session_id": state.session_id,
                                  "resume_token": state.token,
                                  "incarnation": state.incarnation}))
            last = int(event.get("last_received_server_event_seq", 0))
            for past in state.journal:
                if past["server_event_seq"] > last:
                    conn.send(json.dumps(past))
            return state
        conn.send(json.dumps({"type": "error", "error": {
            "code": "bad_event", "message": "the first event must be session.update"}}))
        return None

    def _emit(self, state: DuplexState, event: dict[str, Any]) -> None:
        state.seq += 1
        event = {**event, "server_event_seq": state.seq}
        state.journal.append(event)
        if state.conn is not None:
            with contextlib.suppress(Exception):  # a dropped transport: kept for the replay
                state.conn.send(json.dumps(event))

    def _on_event(self, state: DuplexState, conn: ServerConnection,
                  event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "session.event_ack":
            seq = int(event.get("server_event_seq", 0))
            state.journal = [e for e in state.journal if e["server_event_seq"] > seq]
        elif kind == "input_audio_buffer.append":
            if state.stalled:
                return True
            if event.get("sample_rate_hz", state.rate) != state.rate or \
                    event.get("format", state.encoding) != state.encoding:
                self._emit(state, {"type": "error", "error": {
                    "code": "bad_audio", "message": "audio does not match the session format"}})
                return True
            dtype, scale = DECODERS[state.encoding]
            x = np.frombuffer(base64.b64decode(event["audio"]), dtype).astype(np.float32)
            return self._append(state, conn, x / scale)
        elif kind == "playback.ack":
            self._ack(state, event)
        elif kind == "session.heartbeat":
            self.heartbeats.append(state.number)
        elif kind == "session.close":
            self.closed.append(state.number)
            self._emit(state, {"type": "session.closed", "reason": "client_closed"})
            return False
        return True

    # -- the fake model ----------------------------------------------------------------------

    def _append(self, state: DuplexState, conn: ServerConnection, x: np.ndarray) -> bool:
        """Close every unit the appended audio completes (exactly at its boundary sample)."""
        state.pending = np.concatenate([state.pending, x])
        first, unit, chunk = (state.rate * ms // 1000 for ms in (FIRST_UNIT_MS, UNIT_MS, 20))
        while len(state.pending) >= (need := first + state.unit * unit - state.appended):
            audio, state.pending = state.pending[:need], state.pending[need:]
            state.appended += need
            chunks = audio[:len(audio) // chunk * chunk].reshape(-1, chunk)
            state.voiced = bool(np.any(np.sqrt(np.mean(chunks ** 2, axis=1)) > 0.01))
            fault = self.faults.get(state.number)
            if fault is not None and state.unit >= fault[1]:
                if fault[0] != "drop":
                    return self._fault(state, conn, fault[0])
                del self.faults[state.number]  # once: the resumed transport runs on
                state.conn = None  # the model goes on: its events wait in the journal
                conn.close()
            self._decide(state)
            state.unit += 1
        return True

    def _decide(self, state: DuplexState) -> None:
        if state.speaking is not None:
            self._speak(state, state.speaking)
            return
        if state.heard and not state.voiced:
            state.heard = False
            state.commit_seq += 1
            rid = f"resp_{state.number}_{len(state.responses)}"
            state.responses[rid] = {"commit_seq": state.commit_seq, "reserved": False,
                                    "sent": 0}
            state.speaking = rid
            self._emit(state, {"type": "response.created",
                               "response": {"id": rid, "status": "in_progress"}})
            self._emit(state, {"type": "response.speak", "response_id": rid})
            self._emit(state, {"type": "response.output_audio_transcript.delta",
                               "response_id": rid, "item_id": f"item_{rid}", "delta": "hello"})
            self.onsets[state.number].append((time.monotonic(),
                                              state.appended * 1000 / state.rate))
            self._speak(state, rid)
            return
        state.heard |= state.voiced
        self._emit(state, {"type": "response.listen"})

    def _speak(self, state: DuplexState, rid: str) -> None:
        """One unit (1 s) of the reply as 200 ms deltas; the last unit ends the response."""
        response = state.responses[rid]
        total = OUT_RATE * self.reply_ms // 1000
        step = OUT_RATE // 5
        for _ in range(5):
            if response["sent"] >= total:
                break
            n = min(step, total - response["sent"])
            t = np.arange(response["sent"], response["sent"] + n) / OUT_RATE
            self._emit(state, {"type": "response.output_audio.delta", "response_id": rid,
                               "item_id": f"item_{rid}", "sample_rate_hz": OUT_RATE,
                               "delta": b64((0.3 * np.sin(2 * np.pi * 440 * t))
                                            .astype(np.float32))})
            response["sent"] += n
        if response["sent"] >= total:
            state.speaking = None
            self._emit(state, {"type": "response.done",
                               "response": {"id": rid, "status": "completed"}})

    def _ack(self, state: DuplexState, event: dict[str, Any]) -> None:
        rid, item = event.get("response_id"), event.get("item_id")
        if item != f"item_{rid}":
            return self._refuse(state, event, "playback_item_mismatch",
                                "playback.ack item_id must match item_<response_id>.")
        response = state.responses.get(str(rid))
        if response is None:
            return self._refuse(state, event, "playback_item_not_found",
                                f"No assistant response item is registered for {rid}.")
        if not response["reserved"] and state.commit_seq > response["commit_seq"]:
            return self._refuse(state, event, "playback_ack_too_late",
                                "playback.ack arrived after a later user input was committed.")
        response["reserved"] = True
        self.acks.append({"session": state.number, **event})
        self._emit(state, {"type": "playback.acknowledged", "event": {
            "type": "playback.acknowledged", "session_id": state.session_id,
            "item_id": item, "played_ms": event.get("played_ms"),
            "committed_ms": event.get("committed_ms"), "history_committed": True}})
        return None

    def _refuse(self, state: DuplexState, event: dict[str, Any], code: str,
                message: str) -> None:
        self.refused.append({"session": state.number, "code": code, **event})
        self._emit(state, {"type": "error", "error": {
            "type": "invalid_request_error", "code": code, "message": message}})

    def _fault(self, state: DuplexState, conn: ServerConnection, kind: str) -> bool:
        """Act out a fault; False when this transport is over."""
        if kind == "disconnect":
            self.sessions.pop(state.session_id, None)
            state.conn = None
            conn.close()
            return False
        if kind == "garbage":
            conn.send("<html>502 Bad Gateway</html>")
            return False
        if kind == "echo":
            header = conn.request.headers.get("Authorization", "") if conn.request else ""
            self._emit(state, {"type": "error", "error": {
                "code": "runtime_open_failed", "message": f"rejected credentials {header!r}"}})
            return False
        state.stalled = True  # stall: keep reading, never answer
        return True
