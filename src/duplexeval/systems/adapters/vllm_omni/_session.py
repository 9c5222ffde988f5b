"""One ``vllm-omni-duplex`` session: vLLM-Omni's ``/v1/realtime?duplex=1`` contract.

Protocol (vllm-omni ``vllm_omni/clients/duplex.py`` and ``entrypoints/duplex``): JSON text
frames both ways.  The client connects with ``duplex=1&model=M&autostart=0`` and sends
``session.update`` (model, the input format of the model's preset, PCM16 out at 24 kHz,
``turn_detection`` null: the model decides when to listen or speak); the server answers
``session.created`` with the session id, a ``resume_token`` and an ``incarnation``.  Every
server event after that carries ``server_event_seq``; the client acknowledges each with
``session.event_ack`` and drops a sequence number it has already seen (a resume replays).

Channel roles: the user channel goes up as ``input_audio_buffer.append`` in the model's input
format (MiniCPM-o and Nemotron: ``pcm16`` at 16 kHz, resampled from the session's 24 kHz;
PersonaPlex: ``pcm_f32le`` at 24 kHz), with ``duration_ms`` and the cumulative
``audio_end_ms``; the system channel comes back as ``response.output_audio.delta`` (or
``response.audio.delta``) of the response in progress (``response.created`` ...
``response.done``; ``response.listen`` / ``response.speak`` are the model's decisions, one a
model unit of about 1 s, the first closing at 1030 ms of input).  The timeline is the shared
:class:`~duplexeval.systems.realtime._driver.RealtimeDriver`'s (20 ms frames on absolute deadlines,
replies placed on arrival; each response is its own jitter stream; a stall is
``stall_timeout`` s without any server message).  With MiniCPM-o's units::

    input sent    |----unit 0: 1030 ms----|----unit 1: 1000 ms----|----unit 2 ...
    decision                              ^listen (user speaking)  ^speak: response.created,
                                                                    about 1 s of reply deltas
    heard                                                          |==reply, placed on arrival==>
    playback.ack                                                   ^first, the same step
                                                                      ^every ack_interval ... ^final

Playback acknowledgements: on the step a response's first audio arrives, then every
``ack_interval`` s (and once more when a finished response has been fully played) the client
sends ``playback.ack`` with the response's id, its item
``item_<response id>`` and ``played_ms`` = the milliseconds of that response before the
playout clock's "now" (what a listener has heard).  The server refuses (``error`` code
``playback_ack_too_late``) the first ack of a response that arrives after a later user input
was committed, so acks go out continuously from the first played sample; a refusal is recorded
in the trace (``acks.refused``), not a failure.

Session resume: when the transport drops, the client reconnects with ``resume=1`` and sends
``session.resume`` (session id, incarnation, resume token, last received sequence number); the
server answers ``session.resumed`` and replays what the client missed.  Up to
``resume_attempts`` tries (a final refusal such as ``invalid_resume_token`` ends them at once);
then the sample fails with the reason.  The frame that could not be sent is sent again after
the resume.  A failed session sends ``session.close`` before closing the transport, so the
server frees its slot at once (it keeps a silently dropped one for a resume grace period).

``session.heartbeat`` goes out every ``heartbeat`` s, as vllm-omni's client sends it (it
resets the server's receive timeout).  Not implemented: client-forced barge-in
(``response.cancel``; the bundled duplex models own overlap handling), video frames and the
native ``/v1/duplex`` endpoint (this client speaks the normative Realtime projection).
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from duplexeval.systems._base import Forced, StepOutput, SystemFailure
from duplexeval.systems.adapters.vllm_omni._wire import (
    AUDIO_EVENTS,
    BENIGN_ERRORS,
    FATAL_RESUME_ERRORS,
    TRANSCRIPT_EVENTS,
    Refused,
    decode_event,
    error_code,
    error_text,
    response_id,
    with_query,
)
from duplexeval.systems.realtime._connection import FinalRefusal, ResumingConnection
from duplexeval.systems.realtime._driven import DrivenSession
from duplexeval.systems.realtime._driver import Clock, RealtimeDriver
from duplexeval.systems.realtime._pcm import ENCODERS, StreamResampler, decode_pcm16
from duplexeval.systems.realtime._websocket import Connection

__all__ = ["FRAME", "RATE", "VllmDuplexSession", "VllmDuplexSettings"]

RATE = 24000
"""Hz: the session's native rate and the output rate asked for."""
FRAME = 480
"""Samples per 20 ms frame at 24 kHz (320 at 16 kHz on the wire)."""
@dataclass(frozen=True)
class VllmDuplexSettings:
    """One session's settings (times in s); ``headers`` are never recorded."""

    url: str
    session: dict[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    input_format: str = "pcm16"
    """The input wire encoding: ``pcm16`` or ``pcm_f32le``."""
    input_rate: int = 16000
    """Hz of the input on the wire."""
    ack_interval: float = 0.1
    heartbeat: float = 30.0
    stall_timeout: float = 10.0
    connect_timeout: float = 10.0
    handshake_timeout: float = 60.0
    resume_attempts: int = 2


@dataclass
class _Response:
    segments: list[tuple[int, int]] = field(default_factory=list)
    """(start sample, samples) of each chunk placed on the playout clock."""
    done: bool = False
    status: str = ""
    acked_ms: int = -1
    final_acked: bool = False


class VllmDuplexSession(DrivenSession):
    """See the module docstring."""

    def __init__(self, settings: VllmDuplexSettings, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self._secrets = tuple(v for _, v in settings.headers)
        self.driver = RealtimeDriver(RATE, FRAME, clock, settings.stall_timeout,
                                     stall_after="message")
        self.text: list[dict[str, Any]] = []
        self._up = StreamResampler(RATE, settings.input_rate)
        self._encode = ENCODERS[settings.input_format]
        self._down: dict[int, StreamResampler] = {}
        self._responses: dict[str, _Response] = {}
        self._last_seq = 0
        self._sent_ms = 0.0
        self._last_ack = 0.0
        self._last_heartbeat: float | None = None
        """Monotonic time of the last heartbeat (the clock starts with the first step)."""
        self.heartbeats = 0
        self.session_id = ""
        self.resume_token: str | None = None
        self.incarnation = 0
        self.server_session: dict[str, Any] = {}
        self.acks = {"sent": 0, "accepted": 0, "refused": 0}
        self.decisions = {"listen": 0, "speak": 0}
        self.resumes = 0
        self.ignored: dict[str, int] = {}
        first = self._connect(resume=False)
        self.link = ResumingConnection(
            first, self._reattach, lambda: bool(self.resume_token and self.session_id),
            self._resumed, settings.resume_attempts, "session resume")
        try:
            self._send({"type": "session.update", "session": settings.session})
            created = self._await(first, ("session.created",))
        except SystemFailure as exc:
            raise self._failed(exc) from None
        self._adopt(created)

    # -- transport -------------------------------------------------------------------------

    def _connect(self, resume: bool) -> Connection:
        params = {"duplex": "1", "autostart": "0"}
        if resume:
            params["resume"] = "1"
        return Connection(with_query(self.settings.url, **params), dict(self.settings.headers),
                          self.settings.connect_timeout)

    def _send(self, event: dict[str, Any]) -> float:
        return self.link.current.send(json.dumps(event))

    def _await(self, conn: Connection, kinds: tuple[str, ...]) -> dict[str, Any]:
        deadline = time.monotonic() + self.settings.handshake_timeout
        while True:
            got = conn.recv(deadline - time.monotonic())
            if got is None:
                raise SystemFailure(f"no {' or '.join(kinds)} from the server within "
                                    f"{self.settings.handshake_timeout:g} s")
            event = decode_event(got[0])
            if event["type"] in kinds:
                return event
            if event["type"] == "error":
                raise Refused(f"the server refused the session: {error_text(event)}",
                              error_code(event))

    def _adopt(self, event: dict[str, Any]) -> None:
        session = event.get("session")
        if isinstance(session, dict) and session:
            self.server_session = session
        sid = (session or {}).get("session_id") if isinstance(session, dict) else None
        sid = sid or event.get("session_id")
        if isinstance(sid, str) and sid:
            self.session_id = sid
        if isinstance(event.get("resume_token"), str):
            self.resume_token = event["resume_token"]
        if isinstance(event.get("incarnation"), int):
            self.incarnation = event["incarnation"]

    def _reattach(self) -> Connection:
        """A new transport reattached to the session (``session.resume`` from the last server
        event seen); a refusal that no retry can change is final."""
        conn = self._connect(resume=True)
        try:
            conn.send(json.dumps({
                "type": "session.resume", "session_id": self.session_id,
                "incarnation": self.incarnation, "resume_token": self.resume_token,
                "last_received_server_event_seq": self._last_seq}))
            resumed = self._await(conn, ("session.resumed", "session.resync_required"))
        except SystemFailure as exc:
            conn.close()
            if isinstance(exc, Refused) and exc.code in FATAL_RESUME_ERRORS:
                raise FinalRefusal(str(exc)) from None
            raise
        if resumed["type"] == "session.resync_required":
            conn.close()
            raise FinalRefusal("the server no longer journals the session (resync required)")
        self._adopt(resumed)
        return conn

    def _resumed(self, attempt: int) -> None:
        self.driver.last_message = now = self.driver.clock()
        self.resumes += 1
        self.driver.log("session.resumed", now, attempt=attempt, incarnation=self.incarnation)

    def _disconnect(self) -> None:
        """Tell the server the session is over (best effort: a silent drop would hold its
        slot for the resume grace period), then close the transport."""
        with contextlib.suppress(SystemFailure):
            self._send({"type": "session.close"})
        self.link.close()

    # -- the wire ----------------------------------------------------------------------------

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        texts = len(self.text)
        pcm, rate = self._up(user), self.settings.input_rate
        event = {"type": "input_audio_buffer.append", "audio": self._encode(pcm),
                 "format": self.settings.input_format, "sample_rate_hz": rate,
                 "duration_ms": round(len(pcm) * 1000 / rate),
                 "audio_end_ms": round(self._sent_ms + len(pcm) * 1000 / rate)}
        message = json.dumps(event)  # encoded before its deadline
        out = self._drive(lambda: self._send_frame(message), self.link.recv, self._handle)
        self._sent_ms += len(pcm) * 1000 / rate
        return StepOutput(out, "".join(str(e["text"]) for e in self.text[texts:]))

    def _send_frame(self, message: str) -> float:
        """Send one input frame, then acknowledge playback; the frame's monotonic send time."""
        sent = self._deliver_text(message)
        self._after_send()
        return sent

    def _deliver(self, event: dict[str, Any]) -> float:
        """Send ``event`` mid-session (see :meth:`_deliver_text`)."""
        return self._deliver_text(json.dumps(event))

    def _deliver_text(self, message: str) -> float:
        """Send a message mid-session: a dropped transport is resumed and the message sent
        again (an event ack is then superseded by the resume's sequence number, which is
        harmless)."""
        return self.link.send(message)

    def _handle(self, message: Any, arrival: float) -> None:
        event = decode_event(message)
        seq = event.get("server_event_seq")
        if isinstance(seq, int):
            if seq <= self._last_seq:
                return  # replayed by a resume: already handled
            self._last_seq = seq
        self._dispatch(event, arrival)
        if isinstance(seq, int):
            self._deliver({"type": "session.event_ack", "server_event_seq": seq})

    def _dispatch(self, event: dict[str, Any], arrival: float) -> None:
        kind = event["type"]
        rid = response_id(event)
        if kind == "response.created" and rid:
            self._responses.setdefault(rid, _Response())
            self.driver.log(kind, arrival, response_id=rid)
        elif kind in AUDIO_EVENTS:
            self._audio(event, rid, arrival)
        elif kind in TRANSCRIPT_EVENTS:
            self.text.append({"sample": self.driver.position(arrival),
                              "text": str(event.get("delta", ""))})
        elif kind in ("response.listen", "response.speak"):
            self.decisions[kind.split(".")[1]] += 1
            if kind == "response.listen" and rid and rid in self._responses:
                self._responses[rid].done = True  # a response's terminal listen: it yielded
        elif kind == "response.done" and rid:
            state = self._responses.setdefault(rid, _Response())
            state.done = True
            response = event.get("response")
            state.status = str(response.get("status", "")) if isinstance(response, dict) else ""
            self.driver.log(kind, arrival, response_id=rid, status=state.status)
        elif kind == "output_audio_buffer.cleared":
            dropped = self.driver.interrupt(arrival, kind)
            self.driver.log(kind, arrival, response_id=rid, dropped=dropped)
        elif kind == "playback.acknowledged":
            self.acks["accepted"] += 1
        elif kind == "error":
            self._error(event, arrival)
        elif kind in ("session.closed", "session.expired"):
            raise SystemFailure(f"the server ended the session ({kind}: "
                                f"{event.get('reason', 'no reason given')})")
        elif kind == "session.resync_required":
            self.resume_token = None
        else:
            self.ignored[kind] = self.ignored.get(kind, 0) + 1

    def _audio(self, event: dict[str, Any], rid: str | None, arrival: float) -> None:
        pcm = decode_pcm16(event.get("delta") or event.get("audio"))
        rate = event.get("sample_rate_hz")
        if isinstance(rate, int) and rate > 0 and rate != RATE:
            pcm = self._down.setdefault(rate, StreamResampler(rate, RATE))(pcm)
        if not len(pcm):
            return
        at = self.driver.place(pcm, arrival, stream=rid or "")
        self._responses.setdefault(rid or "", _Response()).segments.append((at, len(pcm)))

    def _error(self, event: dict[str, Any], arrival: float) -> None:
        code = error_code(event)
        if code in BENIGN_ERRORS:
            self.acks["refused"] += 1
            self.driver.log("playback_ack_refused", arrival, code=code)
            return
        raise SystemFailure(f"the server reported an error: {error_text(event)}")

    def _after_send(self) -> None:
        """Acknowledge played progress: a response's first ack on the step its audio arrived
        (it reserves the response's place in the history before any later commit), then every
        ``ack_interval`` s, and once more when a finished response has been fully played."""
        now = self.driver.clock()
        if self._last_heartbeat is None:
            self._last_heartbeat = self.driver.t0
        if now - self._last_heartbeat >= self.settings.heartbeat:
            self._deliver({"type": "session.heartbeat"})
            self._last_heartbeat, self.heartbeats = now, self.heartbeats + 1
        due = now - self._last_ack >= self.settings.ack_interval
        position = self.driver.position(now)
        for rid, state in self._responses.items():
            if not state.segments or not rid or (state.acked_ms >= 0 and not due):
                continue
            played = sum(min(n, max(0, position - at)) for at, n in state.segments)
            played_ms = played * 1000 // RATE
            whole = sum(n for _, n in state.segments)
            final = state.done and played >= whole and not state.final_acked
            if played_ms <= state.acked_ms and not final:
                continue
            self._deliver({"type": "playback.ack", "response_id": rid, "item_id": f"item_{rid}",
                           "played_ms": played_ms, "committed_ms": played_ms})
            self.acks["sent"] += 1
            state.acked_ms = played_ms
            state.final_acked = state.final_acked or final
        if due:
            self._last_ack = now

    def trace(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sample_rate": RATE, "text": self.text, **self.driver.trace()}
        out["vllm_omni"] = {
            "session_id": self.session_id, "server_session": self.server_session,
            "responses": {rid: {"start": s.segments[0][0] if s.segments else None,
                                "samples": sum(n for _, n in s.segments), "status": s.status}
                          for rid, s in self._responses.items()},
            "decisions": self.decisions, "acks": self.acks, "resumes": self.resumes,
            "heartbeats": self.heartbeats,
            "input_sent_ms": round(self._sent_ms, 3), "ignored_events": self.ignored}
        return out

    def close(self) -> None:
        self.driver.close()
        self._disconnect()
