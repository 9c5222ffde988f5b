"""One ``gemini-live`` session: the Live API's ``BidiGenerateContent`` WebSocket.

Protocol (``ai.google.dev/api/live``): JSON messages, each with exactly one top-level field.
The client's first message is ``setup`` (model, ``generationConfig`` with
``responseModalities: ["AUDIO"]`` and the voice, ``systemInstruction``, ``realtimeInputConfig``
with the automatic activity detection and ``activityHandling``, ``outputAudioTranscription``,
``sessionResumption``); the server answers ``setupComplete``, and the configuration is fixed
for the connection.  The key travels in the ``x-goog-api-key`` request header (never in the
URL, which is recorded).

Channel roles: the user channel goes up as ``realtimeInput.audio`` (base64 PCM16,
``audio/pcm;rate=16000``, resampled from the session's 24 kHz); the system channel comes back
as ``serverContent.modelTurn.parts[].inlineData`` (``audio/pcm;rate=24000``), generated "as
quickly as possible, not in real time".  ``serverContent`` also carries ``interrupted`` (the
server detected the user speaking over the reply and stopped it), ``generationComplete``,
``turnComplete`` (late: the server assumes real-time playback) and transcriptions.

Timeline: the shared :class:`~duplexeval.systems.realtime._driver.RealtimeDriver`'s (20 ms frames on
absolute deadlines, replies placed on arrival behind what is still playing; a stall is
``stall_timeout`` s without a server message while a reply is being generated).  Barge-in::

    system  ====reply (queued, faster than real time)=====|
    user                    |==barge-in==
    server                     ^interrupted
    heard   ====reply=========|                            (queued rest flushed at "now")

There is no truncate message: the server assumes what it sent was played.

Session resumption: the server sends ``sessionResumptionUpdate`` handles; ``goAway`` announces
a disconnect.  When the transport drops and a resumable handle is known, the client reconnects
with ``setup.sessionResumption.handle`` (up to ``resume_attempts`` times) and goes on; without
one, or when the server refuses the handle, the sample fails with the reason.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from duplexeval.systems._base import Forced, StepOutput, SystemFailure
from duplexeval.systems.realtime._connection import ResumingConnection
from duplexeval.systems.realtime._driven import DrivenSession
from duplexeval.systems.realtime._driver import Clock, RealtimeDriver
from duplexeval.systems.realtime._pcm import StreamResampler, decode_pcm16, encode_pcm16, mime_rate
from duplexeval.systems.realtime._websocket import Connection

__all__ = ["FRAME", "IN_RATE", "RATE", "GeminiLiveSession", "GeminiLiveSettings"]

RATE = 24000
"""Hz: the session's native rate and the output rate."""
IN_RATE = 16000
"""Hz: the input wire rate (``audio/pcm;rate=16000``)."""
FRAME = 480
"""Samples per 20 ms frame at 24 kHz."""
_CONTENT_FLAGS = ("interrupted", "generationComplete", "turnComplete", "waitingForInput")


@dataclass(frozen=True)
class GeminiLiveSettings:
    """One session's settings (times in s); ``headers`` are never recorded."""

    url: str
    setup: dict[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    stall_timeout: float = 10.0
    connect_timeout: float = 10.0
    setup_timeout: float = 30.0
    resume_attempts: int = 2


class GeminiLiveSession(DrivenSession):
    """See the module docstring."""

    def __init__(self, settings: GeminiLiveSettings, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self._secrets = tuple(v for _, v in settings.headers)
        self.driver = RealtimeDriver(RATE, FRAME, clock, settings.stall_timeout,
                                     stall_after="message", expecting=lambda: self._generating)
        self.text: list[dict[str, Any]] = []
        self._up = StreamResampler(RATE, IN_RATE)
        self._down: dict[int, StreamResampler] = {}
        self._generating = False
        self.handle: str | None = None
        self.resumes = 0
        self.interruptions = 0
        self.received_samples = 0
        self.ignored: dict[str, int] = {}
        try:
            first = self._open(None)
        except SystemFailure as exc:
            raise self._failed(exc) from None
        self.link = ResumingConnection(first, lambda: self._open(self.handle),
                                       lambda: bool(self.handle), self._resumed,
                                       settings.resume_attempts, "session resumption")

    def _open(self, handle: str | None) -> Connection:
        """A new transport past ``setupComplete`` (resuming ``handle`` when given); closed
        again when the setup fails."""
        conn = Connection(self.settings.url, dict(self.settings.headers),
                          self.settings.connect_timeout)
        try:
            self._setup(conn, handle)
        except SystemFailure:
            conn.close()
            raise
        return conn

    def _setup(self, conn: Connection, handle: str | None) -> None:
        setup = copy.deepcopy(self.settings.setup)
        if "sessionResumption" in setup and handle:
            setup["sessionResumption"]["handle"] = handle
        conn.send(json.dumps({"setup": setup}))
        deadline = time.monotonic() + self.settings.setup_timeout
        while True:
            got = conn.recv(deadline - time.monotonic())
            if got is None:
                raise SystemFailure(f"no setupComplete from the server within "
                                    f"{self.settings.setup_timeout:g} s")
            message = decode_message(got[0])
            if "setupComplete" in message:
                return
            self._dispatch(message, got[1])

    def _resumed(self, attempt: int) -> None:
        self.resumes += 1
        self._generating = False
        self.driver.last_message = now = self.driver.clock()
        self.driver.log("resumed", now, attempt=attempt)

    def _disconnect(self) -> None:
        link = getattr(self, "link", None)  # None while the first setup is failing
        if link is not None:
            link.close()

    # -- the wire ----------------------------------------------------------------------------

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        texts = len(self.text)
        message = json.dumps({"realtimeInput": {"audio": {  # encoded before its deadline
            "data": encode_pcm16(self._up(user)), "mimeType": f"audio/pcm;rate={IN_RATE}"}}})
        out = self._drive(lambda: self.link.send(message), self.link.recv, self._handle)
        return StepOutput(out, "".join(str(e["text"]) for e in self.text[texts:]))

    def _handle(self, message: Any, arrival: float) -> None:
        self._dispatch(decode_message(message), arrival)

    def _dispatch(self, message: dict[str, Any], arrival: float) -> None:
        if "serverContent" in message:
            self._content(message["serverContent"], arrival)
        elif "goAway" in message:
            self.driver.log("goAway", arrival,
                            time_left=str(_dict(message["goAway"]).get("timeLeft", "")))
        elif "sessionResumptionUpdate" in message:
            update = _dict(message["sessionResumptionUpdate"])
            if update.get("resumable") and isinstance(update.get("newHandle"), str):
                self.handle = update["newHandle"]
        elif "error" in message:
            error = _dict(message["error"])
            raise SystemFailure(f"the server reported an error: {error.get('code', '')} "
                                f"{error.get('message', error)}")
        else:
            for key in message:
                self.ignored[key] = self.ignored.get(key, 0) + 1

    def _content(self, content: Any, arrival: float) -> None:
        content = _dict(content)
        turn = _dict(content.get("modelTurn"))
        for part in turn.get("parts") or []:
            data = _dict(_dict(part).get("inlineData"))
            if data:
                self._audio(data, arrival)
        for key in ("outputTranscription", "inputTranscription"):
            text = _dict(content.get(key)).get("text")
            if isinstance(text, str) and text:
                if key == "outputTranscription":
                    self.text.append({"sample": self.driver.position(arrival), "text": text})
                else:
                    self.driver.log("inputTranscription", arrival, text=text)
        if content.get("interrupted"):
            self.interruptions += 1
            self._generating = False
            self.driver.log("interrupted", arrival,
                            dropped=self.driver.interrupt(arrival, "interrupted"))
        for flag in _CONTENT_FLAGS[1:]:
            if content.get(flag):
                self.driver.log(flag, arrival)
                if flag != "waitingForInput":
                    self._generating = False

    def _audio(self, data: dict[str, Any], arrival: float) -> None:
        rate = mime_rate(data.get("mimeType"), RATE)
        pcm = decode_pcm16(data.get("data"))
        if rate != RATE:
            pcm = self._down.setdefault(rate, StreamResampler(rate, RATE))(pcm)
        if len(pcm):
            self._generating = True
            self.received_samples += len(pcm)
            self.driver.place(pcm, arrival)

    def trace(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sample_rate": RATE, "text": self.text, **self.driver.trace()}
        out["gemini_live"] = {"interruptions": self.interruptions, "resumes": self.resumes,
                              "received_samples": self.received_samples,
                              "ignored_messages": self.ignored}
        return out

    def close(self) -> None:
        self.driver.close()
        self._disconnect()


def decode_message(message: Any) -> dict[str, Any]:
    """A server message (the server sends JSON in text or binary frames); anything but a JSON
    object is garbage."""
    try:
        decoded = json.loads(message)
    except (TypeError, ValueError):
        raise SystemFailure("garbage from the server: a message that is not JSON") from None
    if not isinstance(decoded, dict) or not decoded:
        raise SystemFailure("garbage from the server: a JSON message that is not an object "
                            "with a field")
    return decoded


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
