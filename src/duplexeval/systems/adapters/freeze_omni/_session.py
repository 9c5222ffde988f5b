"""One ``freeze-omni`` session: a Socket.IO connection in real time (clock ``wall``).

Channel roles: the user channel goes up as ``audio`` events (int16 at 16 kHz, 256-sample
frames), the system channel comes back as ``audio`` events (int16 at 24 kHz); the session's
native rate is the server's input rate, 16 kHz, and each received chunk is resampled to it on
its own (soxr), so chunk ``i`` of ``n`` samples at 24 kHz plays as ``round(n * 2 / 3)``
samples at 16 kHz.

Setup: connect (TLS, ``verify=0`` for the self-signed certificate); when a ``prompt`` is
given, send ``prompt_text`` and wait for ``prompt_success``; send ``recording-started`` and wait
for its acknowledgement (the server resets and emits ``stop_tts`` twice first; these are
counted, not played).  A ``too_many_users`` at any time fails the sample.

Timeline (the shared :class:`~duplexeval.systems.realtime._driver.RealtimeDriver`)::

    session (16 kHz)  0       256      512      768
                      |-- 0 --|-- 1 ---|-- 2 ---|...
    "audio" sent          t0+16ms  t0+32ms  t0+48ms     (absolute deadlines: no drift)
    reply chunk j     --------------->[ plays from max(arrival, end of chunk j-1) ]

The M3 client sleeps 16 ms after each send instead, so its input runs late by the send time
of every chunk, while its output is stamped by the wall clock: the drift becomes latency.
Here the send drift is measured per frame and recorded.  The server emits a queued chunk only
in answer to an incoming ``audio`` message, one per message; the session sends a message
every frame, silence included (the runner keeps stepping through the muted window), so replies
keep flowing.

Stops: ``stop_tts`` drops everything queued beyond its arrival, as the web client empties its
player (``on_stop=flush``, the default: an entry in the driver's ``playout_flushes`` when it
dropped anything); the M3 client only logs it (``on_stop=ignore``).  Either way it is a
``server_events`` entry.  The server emits it when it is interrupted, e.g. when the user
speaks over a reply.

The trace is the driver's (``realtime``, ``audio_arrivals``, ``server_events``,
``playout_flushes``); ``freeze_omni`` adds the adapter's counts and the round trip of the
acknowledgements (``ack_round_trip_ms``): a reply emitted in answer to frame ``k`` is heard
at most that round trip plus the send drift after frame ``k``'s deadline.

Failures: a disconnect, ``out_time``, garbage in an ``audio`` event, or ``stall_timeout`` s
without the server acknowledging an ``audio`` message (the driver's ``check``) fail the sample
with the reason.  At the end the session sends ``recording-stopped`` (the server interrupts
and resets) and disconnects.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import soxr

from duplexeval.systems._base import Forced, StepOutput, SystemFailure
from duplexeval.systems.adapters.freeze_omni._link import SocketIOLink
from duplexeval.systems.adapters.freeze_omni._wire import (
    CHUNK,
    IN_RATE,
    OUT_RATE,
    audio_payload,
    parse_audio,
)
from duplexeval.systems.realtime._driven import DrivenSession
from duplexeval.systems.realtime._driver import Clock, RealtimeDriver

__all__ = ["FreezeOmniSession", "FreezeOmniSettings"]

STOP_MODES = ("flush", "ignore")


@dataclass(frozen=True)
class FreezeOmniSettings:
    """Connection settings (times in seconds); ``headers`` are never recorded."""

    url: str
    verify: bool = True
    prompt: str | None = None
    on_stop: str = "flush"
    stall_timeout: float = 30.0
    connect_timeout: float = 10.0
    headers: tuple[tuple[str, str], ...] = ()


class FreezeOmniSession(DrivenSession):
    """See the module docstring."""

    def __init__(self, settings: FreezeOmniSettings, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self._secrets = tuple(v for _, v in settings.headers)
        self.driver = RealtimeDriver(IN_RATE, CHUNK, clock, check=self._check)
        self.received_samples = 0
        self.stop_events = 0
        self.before_start: dict[str, int] = {}
        self._link = SocketIOLink(settings.url, settings.verify, settings.connect_timeout,
                                  dict(settings.headers))
        try:
            self._setup()
        except SystemFailure as exc:
            raise self._failed(exc) from None

    def _disconnect(self) -> None:
        self._link.close()

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        payload = audio_payload(np.asarray(user, dtype=np.float32))  # encoded before its deadline
        return StepOutput(self._drive(lambda: self._link.emit("audio", payload),
                                      self._link.receive, self._handle))

    def _setup(self) -> None:
        if self.settings.prompt is not None:
            self._link.emit("prompt_text", self.settings.prompt)
            self._await(lambda event: event == "prompt_success", "prompt_success")
        self._link.emit("recording-started")
        # the reset's stop_tts events precede its acknowledgement on the wire
        self._await(lambda _: self._link.oldest_unacknowledged() is None,
                    "acknowledgement of recording-started")
        while (got := self._link.receive(0.0)) is not None:
            self._count_early(got[0])

    def _await(self, done: Callable[[str], bool], what: str) -> None:
        """Read events until ``done(event)`` holds (within ``stall_timeout``); events before
        the first frame are counted, never played."""
        end = time.monotonic() + self.settings.stall_timeout
        while (left := end - time.monotonic()) > 0:
            got = self._link.receive(min(left, 0.01))
            event = None if got is None else self._count_early(got[0])
            if done(event or ""):
                return
        raise SystemFailure(f"no {what} from the server within "
                            f"{self.settings.stall_timeout:g} s")

    def _count_early(self, message: tuple[str, tuple[Any, ...]]) -> str:
        event, args = message
        self._fatal(event, args)
        self.before_start[event] = self.before_start.get(event, 0) + 1
        return event

    @staticmethod
    def _fatal(event: str, args: tuple[Any, ...]) -> None:
        if event == "too_many_users":
            raise SystemFailure("the server is full (too_many_users; see its --max_users)")
        if event == "out_time":
            raise SystemFailure("the server ended the session (out_time: its --timeout)")
        if event == "disconnect":
            reason = f" ({args[0]})" if args else ""
            raise SystemFailure(f"the server closed the connection{reason}")

    def _check(self, now: float) -> None:
        oldest = self._link.oldest_unacknowledged()
        if oldest is not None and now - oldest > self.settings.stall_timeout:
            raise SystemFailure(f"stall: the server acknowledged no message for "
                                f"{self.settings.stall_timeout:g} s")

    def _handle(self, message: Any, arrival: float) -> None:
        event, args = message
        self._fatal(event, args)
        if event == "audio":
            pcm = parse_audio(args[0] if args else None)
            self.received_samples += len(pcm)
            self.driver.place(soxr.resample(pcm, OUT_RATE, IN_RATE).astype(np.float32), arrival)
        elif event == "stop_tts":
            self.stop_events += 1
            self.driver.log("stop_tts", arrival, on_stop=self.settings.on_stop)
            if self.settings.on_stop == "flush":
                self.driver.interrupt(arrival, "stop_tts")

    def trace(self) -> dict[str, Any]:
        trips = np.asarray(self._link.round_trips or [0.0]) * 1000
        facts = {"ack_round_trip_ms": {"p50": round(float(np.median(trips)), 3),
                                       "max": round(float(trips.max()), 3)},
                 "received_samples_24k": self.received_samples, "stop_tts": self.stop_events,
                 "on_stop": self.settings.on_stop, "events_before_start": self.before_start,
                 "other_events": self._link.other_events}
        return {"sample_rate": IN_RATE, "freeze_omni": facts, **self.driver.trace()}

    def close(self) -> None:
        self.driver.close()
        with contextlib.suppress(SystemFailure):  # the server may be gone already
            self._link.emit("recording-stopped")
        self._link.close()
