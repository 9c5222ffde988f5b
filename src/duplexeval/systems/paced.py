"""A real-time (clock ``wall``) session skeleton for clients of streaming servers: deadline
pacing, a playout buffer, stop events and the trace they share.

Timeline (``F`` = ``frame`` samples at ``rate`` Hz; ``t0`` = the monotonic time of the first
``step``)::

    session samples  0        F        2F       3F
                     |--- 0 --|--- 1 --|--- 2 --|...     input frames (what the user says)
    sent at               t0+F/r   t0+2F/r  t0+3F/r      frame k once it has been "recorded"
    returned by step k    playout[kF, (k+1)F)             what a listener hears meanwhile

Frame ``k`` is sent at the absolute deadline ``t0 + (k + 1) * F / rate`` (never after a fixed
sleep, so pacing does not drift); until then the session reads what the server sends.  A
received chunk is placed by :class:`~duplexeval.systems.playout.Playout` at the later of its
arrival (session samples since ``t0``) and the end of the audio queued before it, so output
that the server generates faster than real time queues as it would in a player, and a gap in
arrivals is silence.  A stop (barge-in) drops what was queued beyond the moment it arrived.
``step(k)`` returns the buffer over frame ``k``: the runner asks for as many frames as it sends,
so the output is exactly as long as the input, and what would play after the last input sample
is never heard (the offline scripts trim their output to the input length as well).

The trace records the send drift (actual send time - deadline, ms), every arrival (its session
sample, length and arrival time) and every stop with the samples it dropped.
"""

from __future__ import annotations

import abc
import time
from typing import Any

import numpy as np

from .base import Forced, Session, StepOutput, SystemFailure
from .credentials import redact
from .playout import Playout

__all__ = ["PacedSession"]


class PacedSession(Session):
    """Deadline-paced sends and a playout buffer; subclasses speak the wire protocol.

    A subclass implements :meth:`_send` (one frame out, returns its monotonic send time),
    :meth:`_receive` (the next server message within a timeout) and :meth:`_handle` (act on
    one message with :meth:`_play` and :meth:`_stop`), and may override :meth:`_check` (a
    liveness test run before every read) and :meth:`_disconnect`.
    """

    def __init__(self, rate: int, frame: int, secrets: tuple[str, ...] = ()) -> None:
        self.rate, self.frame = rate, frame
        self.frames = 0
        self.drift_ms: list[float] = []
        self.arrivals: list[dict[str, Any]] = []
        self.stops: list[dict[str, Any]] = []
        self._playout: Playout | None = None
        self._secrets = secrets

    @property
    def playout(self) -> Playout:
        if self._playout is None:
            raise SystemFailure("the session has not started")
        return self._playout

    @property
    def started(self) -> bool:
        return self._playout is not None

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        if self._playout is None:
            self._playout = Playout(self.rate, time.monotonic())
        deadline = self._playout.t0 + (self.frames + 1) * self.frame / self.rate
        try:
            self._pump_until(deadline)
            sent = self._send(np.asarray(user, dtype=np.float32))
        except SystemFailure as exc:
            raise self._failed(exc) from None
        self.drift_ms.append(round((sent - deadline) * 1000, 3))
        out = self._playout.frame(self.frames * self.frame, self.frame)
        self.frames += 1
        return StepOutput(out)

    def _pump_until(self, deadline: float) -> None:
        while True:
            now = time.monotonic()
            self._check(now)
            if now >= deadline:
                return
            got = self._receive(deadline - now)
            if got is not None:
                self._handle(*got)

    def _play(self, pcm: np.ndarray, arrival: float) -> None:
        """Queue received audio (at the session rate) that arrived at monotonic ``arrival``."""
        if not len(pcm):
            return
        at = self.playout.place(pcm, arrival)
        self.arrivals.append({"sample": at, "samples": len(pcm), "arrival_ms": round(
            (arrival - self.playout.t0) * 1000, 3)})

    def _stop(self, arrival: float, what: str) -> None:
        """Drop the audio queued beyond monotonic ``arrival`` (a stop or interrupt event)."""
        at = self.playout.position(arrival)
        dropped = self.playout.flush_from(at)
        self.stops.append({"event": what, "sample": at, "dropped_samples": dropped})

    def _failed(self, exc: SystemFailure) -> SystemFailure:
        """Disconnect (the runner never closes a failed sample's session) and name the frame."""
        self._disconnect()
        return SystemFailure(redact(f"frame {self.frames}: {exc}", self._secrets))

    def _check(self, now: float) -> None:
        """Raise :class:`SystemFailure` when the server is found dead at monotonic ``now``."""

    @abc.abstractmethod
    def _send(self, frame: np.ndarray) -> float:
        """Send one input frame; its monotonic send time (s)."""

    @abc.abstractmethod
    def _receive(self, timeout: float) -> tuple[Any, float] | None:
        """The next server message and its monotonic arrival time, or ``None`` after
        ``timeout`` seconds."""

    @abc.abstractmethod
    def _handle(self, message: Any, arrival: float) -> None:
        """Act on one server message."""

    def _disconnect(self) -> None:
        """Close the connection (idempotent)."""

    def paced_trace(self) -> dict[str, Any]:
        """What every paced session records: drift, arrivals, stops."""
        drift = np.abs(np.asarray(self.drift_ms or [0.0]))
        return {"frames_sent": self.frames, "send_drift_ms": {
            "max": float(drift.max()), "mean": round(float(drift.mean()), 3)},
            "audio_arrivals": self.arrivals, "stops": self.stops}

    def close(self) -> None:
        self._disconnect()
