"""One ``duplexcascade`` session: a WebSocket connection in real time (clock ``wall``).

Channel roles: the user channel goes up as float32 frames, the system channel comes back as
float32 chunks (:mod:`.wire`), both at 24 kHz.

Setup: connect, then wait ``startup_delay`` s (the server opens its STT/TTS links after the
handshake; the M3 client waits 1 s); anything the server sends meanwhile is counted and not
played.  Then the timeline of the shared
:class:`~duplexeval.systems.realtime._driver.RealtimeDriver`: frame ``k`` (80 ms) is sent at
``t0 + (k + 1) * 80 ms``, once it has been "recorded" (the M3 client sends frame ``k`` at
``t0 + k * 80 ms``, ahead of a live microphone, so its replies come one frame earlier), and
received chunks play from the later of their arrival and the end of the audio queued before.

Barge-in: ``{"type": "audio_control", "action": "stop"}`` drops everything queued beyond its
arrival, as the web client stops its player (the M3 client trims its segments at that sample
too); it is a ``server_events`` entry, and a ``playout_flushes`` one when it dropped anything.
Other JSON events are counted by type and logged in ``server_events``; non-JSON text is
ignored (as in the M3 client).  The trace is the driver's plus the ``duplexcascade`` counts.

Stall: the client pings the server every ``stall_timeout / 4`` s (at least 0.25 s) and fails
the sample when no pong comes within ``stall_timeout`` s (a stuck asyncio server answers no
ping).  A closed connection, audio that is not float32, or a server error fails the sample with
its reason.  At the end ``Done`` is sent and the connection closed.
"""

from __future__ import annotations

import contextlib
import ssl
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from duplexeval.systems._base import Forced, StepOutput, SystemFailure
from duplexeval.systems.adapters.duplexcascade._wire import (
    DONE,
    FRAME,
    SAMPLE_RATE,
    encode_frame,
    parse,
)
from duplexeval.systems.realtime._driven import DrivenSession
from duplexeval.systems.realtime._driver import Clock, RealtimeDriver
from duplexeval.systems.realtime._websocket import Connection

__all__ = ["DuplexCascadeSession", "DuplexCascadeSettings"]


@dataclass(frozen=True)
class DuplexCascadeSettings:
    """Connection settings (times in seconds); ``headers`` are never recorded."""

    url: str
    verify: bool = True
    """Check the server's TLS certificate (``wss://``); ``False`` accepts a self-signed one."""
    startup_delay: float = 1.0
    stall_timeout: float = 30.0
    connect_timeout: float = 10.0
    headers: tuple[tuple[str, str], ...] = ()


def tls_context(url: str, verify: bool) -> ssl.SSLContext | None:
    """The TLS context for ``url`` (``None`` for ``ws://``); ``verify=False`` accepts any
    certificate, as the M3 client does by default for the server's self-signed one."""
    if not url.startswith("wss://"):
        return None
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


class DuplexCascadeSession(DrivenSession):
    """See the module docstring."""

    def __init__(self, settings: DuplexCascadeSettings, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self._secrets = tuple(v for _, v in settings.headers)
        self.driver = RealtimeDriver(SAMPLE_RATE, FRAME, clock)
        self.events: dict[str, int] = {}
        self.ignored_text = 0
        self.before_start = 0
        interval = max(0.25, settings.stall_timeout / 4)
        self._conn = Connection(settings.url, dict(settings.headers), settings.connect_timeout,
                                ssl=tls_context(settings.url, settings.verify),
                                ping_interval=interval, ping_timeout=settings.stall_timeout)
        try:
            self._wait_for_startup()
        except SystemFailure as exc:
            raise self._failed(exc) from None

    def _disconnect(self) -> None:
        self._conn.close()

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        message = encode_frame(np.asarray(user, dtype=np.float32))  # encoded before its deadline
        return StepOutput(self._drive(lambda: self._conn.send(message), self._conn.recv,
                                      self._handle))

    def _wait_for_startup(self) -> None:
        end = time.monotonic() + self.settings.startup_delay
        while (left := end - time.monotonic()) > 0:
            got = self._conn.recv(left)
            if got is not None:
                parse(got[0])  # garbage fails even now
                self.before_start += 1

    def _handle(self, message: Any, arrival: float) -> None:
        parsed = parse(message)
        if parsed.kind == "audio":
            assert parsed.pcm is not None
            self.driver.place(parsed.pcm, arrival)
        elif parsed.kind == "stop":
            self.driver.log("audio_control stop", arrival)
            self.driver.interrupt(arrival, "audio_control stop")
        elif parsed.kind == "event":
            assert parsed.event is not None
            kind = str(parsed.event.get("type", "untyped"))
            self.events[kind] = self.events.get(kind, 0) + 1
            self.driver.log(kind, arrival)
        else:
            self.ignored_text += 1

    def trace(self) -> dict[str, Any]:
        facts = {"events": self.events, "ignored_text": self.ignored_text,
                 "messages_before_start": self.before_start,
                 "startup_delay_s": self.settings.startup_delay}
        return {"sample_rate": SAMPLE_RATE, "duplexcascade": facts, **self.driver.trace()}

    def close(self) -> None:
        self.driver.close()
        with contextlib.suppress(SystemFailure):  # the server may be gone already
            self._conn.send(DONE)
        self._conn.close()
