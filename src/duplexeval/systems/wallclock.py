"""The real-time half of a wall-clock session: deadline pacing, receive pumping, playout.

A subclass supplies the wire (:meth:`WallClockSession._send_audio`,
:meth:`WallClockSession._receive`, :meth:`WallClockSession._handle`); this class owns the
timeline, the same one ``openai-realtime`` and ``moshi-ws`` (real time) use::

    session sample  0        F        2F       3F    (F = frame size at the native rate)
    step            |--k=0---|--k=1---|--k=2---|
    send of frame k          ^t0+F    ^t0+2F   ^t0+3F   (absolute deadlines, never a sleep)
    output of step k = the playout buffer over [kF, (k+1)F), read once its deadline passed

``t0`` is the monotonic time of the first ``step`` (the user's first sample).  Server audio
arriving at monotonic ``a`` is placed at ``max(round((a - t0) * rate), end of queued audio)``
(:class:`~duplexeval.systems.playout.Playout`), so a reply generated faster than real time
queues behind itself and a listener hears it where it would have been played.  Every
send is timestamped (drift = actual - deadline, ms, in the trace) and every audio chunk's
arrival is logged with the sample it was placed at.  Output is as long as the input by
construction: the runner steps exactly the input's frames and each step returns one frame;
audio still queued after the last frame is dropped (trimmed), a reply that had not started
is silence (padded).

A stall is ``stall_timeout`` seconds without a server message while :meth:`_expecting` says
one is due; it fails the sample, like any transport failure, with the frame it happened at
(errors are redacted of the session's secrets and of every secret-looking environment value).
"""

from __future__ import annotations

import abc
import time
from typing import Any

import numpy as np

from .base import Forced, Session, StepOutput, SystemFailure
from .credentials import redact
from .playout import Playout

__all__ = ["WallClockSession"]


class WallClockSession(Session):
    """Deadline-paced steps over a playout buffer at ``rate`` Hz, ``frame`` samples a step."""

    def __init__(self, rate: int, frame: int, stall_timeout: float,
                 secrets: tuple[str, ...] = ()) -> None:
        self.rate, self.frame = rate, frame
        self.stall_timeout = stall_timeout
        self.frames = 0
        self.text: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.arrivals: list[dict[str, Any]] = []
        self.drift_ms: list[float] = []
        self._secrets = secrets
        self._playout: Playout | None = None
        self._last_message = time.monotonic()

    # -- the wire (subclasses) -------------------------------------------------------------

    @abc.abstractmethod
    def _send_audio(self, user: np.ndarray) -> float:
        """Send one frame of user audio (native rate); the monotonic send time."""

    @abc.abstractmethod
    def _receive(self, timeout: float) -> tuple[Any, float] | None:
        """The next server message and its arrival time, or ``None`` after ``timeout`` s."""

    @abc.abstractmethod
    def _handle(self, message: Any, arrival: float) -> None:
        """Act on one server message."""

    def _expecting(self) -> bool:
        """Whether a server message is due (a silence this long is a stall)."""
        return True

    def _after_send(self) -> None:
        """Called after each frame is sent (playback acknowledgements, ...)."""

    @abc.abstractmethod
    def _close_transport(self) -> None:
        """Close the connection (never raises)."""

    # -- the timeline ----------------------------------------------------------------------

    @property
    def playout(self) -> Playout:
        if self._playout is None:
            self._playout = Playout(self.rate, time.monotonic())
            self._last_message = self._playout.t0  # the stall clock starts with the session
        return self._playout

    def now(self) -> int:
        """The session sample being played now."""
        return self.playout.position(time.monotonic())

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        playout = self.playout
        texts = len(self.text)
        deadline = playout.t0 + (self.frames + 1) * self.frame / self.rate
        try:
            self._pump_until(deadline)
            sent = self._send_audio(user)
            self._after_send()
        except SystemFailure as exc:
            raise self.failed(exc) from None
        self.drift_ms.append(round((sent - deadline) * 1000, 3))
        out = playout.frame(self.frames * self.frame, self.frame)
        self.frames += 1
        return StepOutput(out, "".join(str(e["text"]) for e in self.text[texts:]))

    def _pump_until(self, deadline: float) -> None:
        while (now := time.monotonic()) < deadline:
            if self._expecting() and now - self._last_message > self.stall_timeout:
                raise SystemFailure(f"stall: no message from the server for "
                                    f"{self.stall_timeout:g} s")
            got = self._receive(deadline - now)
            if got is None:
                continue
            self._last_message = got[1]
            self._handle(got[0], got[1])

    def place(self, pcm: np.ndarray, arrival: float, **labels: Any) -> int:
        """Queue received audio (native rate) on the playout clock; returns its start sample."""
        at = self.playout.place(pcm, arrival)
        self.arrivals.append({"sample": at, "samples": len(pcm), "arrival_ms": round(
            (arrival - self.playout.t0) * 1000, 3), **labels})
        return at

    def log(self, kind: str, **fields: Any) -> None:
        """Record a protocol event at the session sample being played now."""
        self.events.append({"sample": self.now(), "type": kind, **fields})

    def failed(self, exc: SystemFailure) -> SystemFailure:
        """Close the transport and name the frame (a failed session is never closed by the
        runner)."""
        self._close_transport()
        return SystemFailure(redact(f"frame {self.frames}: {exc}", self._secrets))

    def timeline_trace(self) -> dict[str, Any]:
        """What every wall-clock trace holds: text, events, arrivals and pacing."""
        drift = np.abs(np.asarray(self.drift_ms or [0.0]))
        t0 = None if self._playout is None else self._playout.t0
        return {"sample_rate": self.rate, "text": self.text, "events": self.events,
                "audio_arrivals": self.arrivals, "t0_monotonic": t0,
                "frames_sent": self.frames,
                "send_drift_ms": {"max": float(drift.max()), "mean": round(float(drift.mean()), 3)}}

    def close(self) -> None:
        self._close_transport()
