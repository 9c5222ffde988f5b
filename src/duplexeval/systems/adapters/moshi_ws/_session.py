"""``moshi-ws`` sessions: one WebSocket connection per session, lockstep or real time.

Channel roles: the session sends the *user* channel (the dialogue channel the system hears) and
returns the *system* channel (what the server's model says).  Audio is float32 mono at 24 kHz
in 1920-sample (80 ms) frames both ways.

Lockstep (clock ``input``, the default)
---------------------------------------
The Moshi server is input-clocked: it steps its model once per 1920 samples it receives and
never drops a frame; its first input frame only initialises the model, so its output frame
``j`` is produced when input frame ``j + init_frames`` arrives (``init_frames`` = 1 for moshi
0.2.13).  ``step(k)`` sends input frame ``k`` and waits (at most ``stall_timeout`` s) until
the server has sent the audio produced on it; the session timeline is::

    input frame   0      1      2      3     ...  k
    output        init   out 0  out 1  out 2 ...  out k-1      (init_frames = 1)

so a reply lands on the frame whose input the server was consuming when it produced it (within
one frame, plus the Opus look-ahead of 6.5 ms each way; see :mod:`.wire`).  The init frames are
silence.  Nothing is paced: a run goes as fast as the server computes, and the timeline does
not depend on the network, so it is deterministic for a deterministic server.  Output is
trimmed to the input length because the runner only asks for as many frames as it sends (the
server's answer to the last input frame is the last one used); text pieces are reported on the
step during which they arrived.  The server sends a frame's text after its audio, so the text
of the last frame would still be in flight when its audio is returned: :meth:`trace` (which
the runner calls once the last frame is stepped) sends one more frame of silence, the *flush
frame*, and reads up to its audio, so every piece of the session's frames has arrived (the
socket keeps the order); the flush frame's own output and text are not the session's.  The
stream ends there: a step after ``trace`` is refused.

Real time (clock ``wall``)
--------------------------
Frame ``k`` is sent at the absolute deadline ``t0 + (k + 1) * 80 ms`` (``t0`` = the first
``step``; a frame is sent once it has been "recorded"), never by sleeping a fixed time, and
every send and receive is timestamped with :func:`time.monotonic`.  Received audio goes through
the playout buffer: a chunk starts at the later of its arrival time (session samples since
``t0``) and the end of the previous chunk.  ``step(k)`` returns the buffer over frame ``k``
once its deadline has passed, so the output includes the network, Opus and compute latency a
listener would hear.  All of this is the shared
:class:`~duplexeval.systems.realtime._driver.RealtimeDriver`; its trace (send drift per frame,
arrival jitter, initial silence, every arrival, the ignored server messages as ``server_events``) is
the session's.  The Python server has no interrupt message, so nothing is ever flushed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from duplexeval.systems._base import Forced, Session, StepOutput, SystemFailure
from duplexeval.systems.adapters.moshi_ws._wire import (
    AUDIO,
    ERROR,
    HANDSHAKE,
    SAMPLE_RATE,
    TEXT,
    OpusCodec,
    audio_message,
    parse,
)
from duplexeval.systems.realtime._credentials import redact
from duplexeval.systems.realtime._driver import Clock, RealtimeDriver
from duplexeval.systems.realtime._websocket import Connection

__all__ = ["LockstepSession", "MoshiWsSettings", "RealtimeSession"]

FRAME = 1920
"""Samples per 80 ms frame at 24 kHz."""


@dataclass(frozen=True)
class MoshiWsSettings:
    """A ``moshi-ws`` system's connection settings (times in seconds)."""

    url: str
    init_frames: int = 1
    """Input frames the server consumes before its first output frame."""
    stall_timeout: float = 30.0
    """Longest wait for the audio of one frame (lockstep) or between audio messages once the
    server has started answering (real time)."""
    handshake_timeout: float = 120.0
    """Longest wait for the 0x00 handshake (PersonaPlex runs its prompts before it)."""
    connect_timeout: float = 10.0
    headers: tuple[tuple[str, str], ...] = ()
    """Request headers (an ``Authorization`` from ``api_key_env``); never recorded."""


class _MoshiSession(Session):
    """What both modes share: the connection, the handshake, the codec, message handling."""

    def __init__(self, settings: MoshiWsSettings) -> None:
        self.settings = settings
        self.frames = 0
        self.text: list[dict[str, Any]] = []
        self.ignored: dict[str, int] = {}
        self.received_samples = 0
        self._codec = OpusCodec()
        self._conn = Connection(settings.url, dict(settings.headers), settings.connect_timeout)
        try:
            self._await_handshake()
        except BaseException:
            self._conn.close()
            raise

    def _await_handshake(self) -> None:
        got = self._conn.recv(self.settings.handshake_timeout)
        if got is None:
            raise SystemFailure(f"no handshake from the server within "
                                f"{self.settings.handshake_timeout:g} s")
        message = parse(got[0])
        if message.kind != HANDSHAKE:
            raise SystemFailure(f"the server sent {message.name} before the 0x00 handshake")

    def _handle(self, raw: Any) -> np.ndarray | None:
        """Decoded PCM of an audio message, ``None`` for anything else (text is logged on the
        current frame; error messages fail; other known kinds are counted)."""
        message = parse(raw)
        if message.kind == AUDIO:
            assert isinstance(message.payload, bytes)
            pcm = self._codec.decode(message.payload)
            self.received_samples += len(pcm)
            return pcm
        if message.kind == TEXT:
            self.text.append({"sample": self._text_sample(), "text": message.payload})
        elif message.kind == ERROR:
            payload = message.payload
            text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
            raise SystemFailure(f"the server reported an error: {text}")
        elif message.kind == HANDSHAKE:
            raise SystemFailure("garbage from the server: a second handshake mid-stream")
        else:
            self.ignored[message.name] = self.ignored.get(message.name, 0) + 1
        return None

    def _text_sample(self) -> int:
        """Session sample a text piece arriving now is logged at."""
        return self.frames * FRAME

    def _send(self, user: np.ndarray) -> float:
        return self._conn.send(audio_message(self._codec.encode(user)))

    def _fail_closed(self, exc: SystemFailure) -> SystemFailure:
        """Close the connection (a failed sample's session is never closed by the runner, and
        the server serves one connection at a time) and name the frame."""
        self._conn.close()
        secrets = tuple(value for _, value in self.settings.headers)
        return SystemFailure(redact(f"frame {self.frames}: {exc}", secrets))

    def _text_since(self, count: int) -> str:
        return "".join(str(e["text"]) for e in self.text[count:])

    def trace(self) -> dict[str, Any]:
        return {"sample_rate": SAMPLE_RATE, "text": self.text,
                "moshi_ws": {"frames_sent": self.frames, "init_frames": self.settings.init_frames,
                             "received_samples": self.received_samples,
                             "ignored_messages": self.ignored}}

    def close(self) -> None:
        self._conn.close()


class LockstepSession(_MoshiSession):
    """Input-clocked, as fast as the server computes (see the module docstring)."""

    def __init__(self, settings: MoshiWsSettings) -> None:
        super().__init__(settings)
        self._pcm = np.zeros(0, dtype=np.float32)
        """Received output not yet returned, starting at the next frame's output."""
        self._last_audio_sample = settings.init_frames * FRAME
        self._flushed = False

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        if self._flushed:
            raise RuntimeError("moshi-ws lockstep: the stream ended at trace(); no step after it")
        texts = len(self.text)
        try:
            self._send(user)
            self.frames += 1
            produced = self.frames - self.settings.init_frames
            if produced <= 0:
                return StepOutput(np.zeros(FRAME, dtype=np.float32), self._text_since(texts))
            self._await_samples(FRAME)
        except SystemFailure as exc:
            raise self._fail_closed(exc) from None
        out, self._pcm = self._pcm[:FRAME], self._pcm[FRAME:]
        return StepOutput(out, self._text_since(texts))

    def _await_samples(self, need: int) -> None:
        deadline = time.monotonic() + self.settings.stall_timeout
        while len(self._pcm) < need:
            got = self._conn.recv(deadline - time.monotonic())
            if got is None:
                raise SystemFailure(f"stall: the server sent no audio for this frame within "
                                    f"{self.settings.stall_timeout:g} s")
            before = self.received_samples
            pcm = self._handle(got[0])
            if pcm is not None and len(pcm):
                self._pcm = np.concatenate([self._pcm, pcm])
                self._last_audio_sample = before + self.settings.init_frames * FRAME

    def _text_sample(self) -> int:
        """Lockstep: the start of the last audio received (the server sends a step's text
        after its audio), so text lands on the frame it was produced with."""
        return self._last_audio_sample

    def _flush(self) -> None:
        """Send the flush frame and read up to its audio: the last frame's text, which the
        server sends after that frame's audio, arrives before it (see the module docstring).
        Nothing to do before the first output frame (no text can be in flight)."""
        if self._flushed:
            return
        self._flushed = True
        if self.frames <= self.settings.init_frames:
            return
        try:
            self._send(np.zeros(FRAME, dtype=np.float32))
            self._await_samples(len(self._pcm) + FRAME)
        except SystemFailure as exc:
            raise self._fail_closed(exc) from None

    def trace(self) -> dict[str, Any]:
        self._flush()
        out = super().trace()
        out["moshi_ws"]["mode"] = "lockstep"
        out["moshi_ws"]["flush_frames"] = int(self.frames > self.settings.init_frames)
        return out


class RealtimeSession(_MoshiSession):
    """Wall-clock: the shared :class:`~duplexeval.systems.realtime._driver.RealtimeDriver` paces the
    sends and plays the answers out (see the module docstring)."""

    def __init__(self, settings: MoshiWsSettings, clock: Clock = time.monotonic) -> None:
        super().__init__(settings)
        self.driver = RealtimeDriver(SAMPLE_RATE, FRAME, clock, settings.stall_timeout)
        self._arrival = 0.0

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        texts = len(self.text)
        message = audio_message(self._codec.encode(user))  # encoded before its deadline
        try:
            out = self.driver.step(lambda: self._conn.send(message), self._conn.recv,
                                   self._arrived)
        except SystemFailure as exc:
            self.driver.close()
            raise self._fail_closed(exc) from None
        self.frames = self.driver.frames_sent
        return StepOutput(out, self._text_since(texts))

    def _arrived(self, raw: Any, arrival: float) -> None:
        self._arrival = arrival
        kinds = dict(self.ignored)
        pcm = self._handle(raw)
        if pcm is not None:
            self.driver.place(pcm, arrival)
        for name, count in self.ignored.items():
            if count != kinds.get(name, 0):
                self.driver.log(name, arrival)

    def _text_sample(self) -> int:
        """Real time: where the text arrived on the playout clock."""
        return self.driver.position(self._arrival)

    def trace(self) -> dict[str, Any]:
        out = super().trace()
        timing = self.driver.trace()
        out["moshi_ws"].update(mode="realtime", send_drift_ms={
            k: v for k, v in timing["realtime"]["send_drift_ms"].items() if k != "series"})
        return {**out, **timing}

    def close(self) -> None:
        self.driver.close()
        super().close()
