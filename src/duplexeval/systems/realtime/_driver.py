"""The real-time driver: one pacing, timestamping and playout engine for every wall-clock system
(clock ``wall``: ``moshi-ws`` in ``mode=realtime``, ``openai-realtime``, ``freeze-omni``,
``duplexcascade``, ``vllm-omni-duplex``, ``gemini-live``).

An adapter owns its wire format; the driver owns time.  Per session it keeps one monotonic clock
(:func:`time.monotonic`, seconds), and ``t0`` = the clock at the session's first ``step``: session
sample ``n`` (at ``rate`` Hz) is the instant ``t0 + n / rate`` on both channels.

Sending (user channel)
----------------------
Frame ``k`` covers session samples ``[k F, (k + 1) F)``; like a microphone it can only be sent
once recorded, so its deadline is the *absolute* time ``t0 + (k + 1) F / rate``, computed from
``t0`` for every frame (never "previous send + sleep", whose errors add up)::

    session time   0        F        2F       3F
    user frames    |  k=0   |  k=1   |  k=2   |
    deadlines               d0       d1       d2        d_k = t0 + (k+1) F / rate
    sends                   s0       s1  s2             drift_k = s_k - d_k  (s2 late: d2 is
                                                         still d2, so the lag is caught up)

While waiting for a deadline the driver receives (the adapter's ``recv(timeout)``), so a wait
is never a blind sleep.  Before each wait (and once per frame even when the deadline has
passed) it checks liveness: the stall rule (``stall_timeout`` s without audio, or without any
message when ``stall_after="message"``, while ``expecting()`` holds) and the adapter's own
``check(now)`` (e.g. unacknowledged messages), either raising
:class:`~duplexeval.systems._base.SystemFailure`.  ``drift_k`` (ms) is recorded for every
frame; adapters encode a frame before handing its ``send`` to :meth:`RealtimeDriver.step`,
so the drift is the wake-up and the send alone.

Network impairment (the ``network`` condition)
----------------------------------------------
With a :class:`~duplexeval.conditions._network.NetworkLink` (:attr:`RealtimeDriver.network`,
set before the first ``step``), frame ``k`` is, as the link says, lost or sent late: a lost
frame is never sent (``send`` is not called; the server never receives it) and a late one is
sent at ``max(d_k + delay_k, previous send time)`` (no reordering; the receiving goes on while
it waits).  ``drift_k`` is then measured from that later time, so it stays the wake-up error;
the series holds the frames sent.  ``frames_sent`` counts every frame, lost or not (frame
``k`` is session samples ``[k F, (k + 1) F)`` either way).

Receiving (system channel)
--------------------------
Every message is stamped with the monotonic time it was handed over.  Audio goes into a
:class:`~duplexeval.systems.realtime._playout.Playout`: a chunk starts at the later of its arrival
and the end of the audio before it, and an interrupt flushes what was queued beyond "now"::

    arrivals        a1          a2 a3               (a2, a3: faster than real time)
    played out      [--c1--][--c2--][--c3--]        c2 starts at end(c1), not at a2
    interrupt at i                 ^i               everything after i is dropped, never heard
    played out      [--c1--][--c2-]

``step(k)`` returns the played-out samples ``[k F, (k + 1) F)``, so the system channel is what
a listener would have heard: network, codec, compute and queueing delays included.

Garbage collection: a full collection of the interpreter's objects takes 10-16 ms here (about
30 000 objects after the imports, measured), longer than the drift a frame may have.  From
the first ``step`` to :meth:`RealtimeDriver.close` the objects that existed before the session
are frozen (:func:`gc.freeze`), so a collection during the stream scans only what the session
made; ``close`` unfreezes them (the adapters call it when the session closes or fails).

Thread switches: ``websockets`` reads the socket in a background thread, and CPython hands the
GIL to a waiting thread only after the switch interval (5 ms by default), so a sender woken at
its deadline could wait that long behind the reader.  For the same span the interval is
:data:`SWITCH_INTERVAL` (0.5 ms; :func:`sys.setswitchinterval`, restored by ``close``): on a
3-minute loopback stream the frames sent over 2 ms late fell from 10 to 2, max 3.9 -> 3.5 ms.

Trace (:meth:`RealtimeDriver.trace`)
------------------------------------
* ``realtime.send_drift_ms``: ``max``, ``mean`` and ``p95`` of ``|drift_k|`` and the signed
  per-frame ``series`` (ms, rounded to 1 µs).
* ``realtime.arrival_jitter_ms``: over consecutive audio chunks ``i -> j`` of one stream (the
  adapter names it: Moshi's one continuous stream, a Realtime API response item) the transit
  difference ``D = (a_j - a_i) - duration_i`` (RFC 3550's, with the stream's audio as the
  sender's media clock): ``mean_abs``, ``p95_abs``, ``max_abs`` and RFC 3550's running
  estimate ``rfc3550`` (``J += (|D| - J) / 16``).  For a stream sent in real time (Moshi) it is
  network and compute jitter; for a service that sends faster than real time it is mostly that
  speed-up (``D`` < 0 within a burst), and the silence between two replies never counts.
* ``realtime.network`` (only with a link): ``loss``, ``burst``, ``jitter_ms`` and ``seed`` as
  asked, the ``lost_frames`` (frame indices), the realised ``loss_rate`` and ``mean_burst``
  (frames; ``null`` without a loss) and ``send_delay_ms`` (``mean`` and ``max`` of the delays
  drawn for the frames sent).
* ``realtime.t0_monotonic``: ``t0`` (s on :func:`time.monotonic`, ``null`` before the first
  ``step``), so a loopback server's send times can be put on the session clock.
* ``realtime.initial_silence_ms``: the silence the played-out channel starts with (the first
  chunk's start on the playout clock), ``null`` when nothing was received.
* ``audio_arrivals``: one entry per chunk (playout ``sample``, ``arrival_ms`` since ``t0``,
  ``samples``, the adapter's ``stream`` name, '' when it names none); ``server_events``:
  what the adapter logged (``type``, ``arrival_ms``, its fields) at the playout ``sample``
  of its arrival; ``playout_flushes``: interrupts
  (``sample``, ``dropped`` samples, ``reason``).  The runner adds each entry's dialogue
  ``time`` and writes the whole trace beside the sample (``{event_id}.trace.json``,
  :mod:`duplexeval.runs._directory`).
"""

from __future__ import annotations

import gc
import itertools
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from duplexeval.conditions._network import NetworkLink, burst_lengths
from duplexeval.systems._base import SystemFailure
from duplexeval.systems.realtime._credentials import redact
from duplexeval.systems.realtime._playout import Playout

__all__ = ["Check", "Clock", "Handler", "RealtimeDriver", "Receiver", "Sender", "drift_stats",
           "jitter_stats"]

SWITCH_INTERVAL = 0.0005
"""The GIL switch interval (s) while a session streams (see the module docstring)."""
Clock = Callable[[], float]
"""A monotonic clock in seconds (:func:`time.monotonic`; tests inject a fake one)."""
Receiver = Callable[[float], "tuple[Any, float] | None"]
"""``recv(timeout)``: the next message and its monotonic arrival time, or ``None`` after
``timeout`` seconds without one (it is also how the driver waits)."""
Sender = Callable[[], float]
"""``send()``: put the (already encoded) frame on the wire; its monotonic send time."""
Handler = Callable[[Any, float], None]
"""``handle(message, arrival)``: the adapter's reaction to one message (it calls
:meth:`RealtimeDriver.place`, :meth:`RealtimeDriver.log`, :meth:`RealtimeDriver.interrupt`)."""
Check = Callable[[float], None]
"""``check(now)``: an adapter's liveness test at monotonic ``now``; raises
:class:`~duplexeval.systems._base.SystemFailure` when the server is found dead."""


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def drift_stats(series_ms: list[float]) -> dict[str, Any]:
    """``max``, ``mean`` and ``p95`` of the absolute send drift, and the ``series`` (ms)."""
    drift = np.abs(np.asarray(series_ms or [0.0], dtype=float))
    return {"max": round(float(drift.max()), 3), "mean": round(float(drift.mean()), 3),
            "p95": round(float(np.percentile(drift, 95)), 3), "series": list(series_ms)}


def jitter_stats(arrivals: list[tuple[float, int, str]], rate: int) -> dict[str, float | None]:
    """Arrival jitter of ``(arrival s, samples, stream)`` audio chunks over consecutive chunks
    of the same stream (see the module docstring); every value ``None`` without such a pair."""
    diffs = np.array([(b[0] - a[0]) - a[1] / rate for a, b in itertools.pairwise(arrivals)
                      if a[2] == b[2]])
    if len(diffs) == 0:
        return {"mean_abs": None, "p95_abs": None, "max_abs": None, "rfc3550": None}
    running = 0.0
    for d in np.abs(diffs):
        running += (d - running) / 16
    absolute = np.abs(diffs) * 1000
    return {"mean_abs": round(float(absolute.mean()), 3),
            "p95_abs": round(float(np.percentile(absolute, 95)), 3),
            "max_abs": round(float(absolute.max()), 3), "rfc3550": _ms(running)}


class RealtimeDriver:
    """Deadline pacing, receive timestamps, playout and the trace of one wall-clock session
    (see the module docstring).  ``rate`` (Hz) and ``frame`` (samples) are the session's;
    ``stall_timeout`` (s), when set, fails the session once audio has started and none has
    arrived for that long (``stall_after="audio"``), or, with ``stall_after="message"``, when
    no message at all has arrived for that long since ``t0`` (the stall clock restarts when an
    adapter sets :attr:`last_message`, e.g. after a resume); either only while ``expecting()``
    holds (always when not given).  ``check`` is the adapter's own liveness test."""

    def __init__(self, rate: int, frame: int, clock: Clock = time.monotonic,
                 stall_timeout: float | None = None, *, stall_after: str = "audio",
                 expecting: Callable[[], bool] | None = None,
                 check: Check | None = None) -> None:
        if stall_after not in ("audio", "message"):
            raise ValueError(f"stall_after must be audio or message, not {stall_after!r}")
        self.rate, self.frame, self.clock = rate, frame, clock
        self.stall_timeout, self.stall_after = stall_timeout, stall_after
        self.expecting, self.check = expecting, check
        self.last_message: float | None = None
        """Monotonic arrival of the latest message (``t0`` before the first one)."""
        self.frames_sent = 0
        self.playout: Playout | None = None
        self.drift_ms: list[float] = []
        self.arrivals: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.flushes: list[dict[str, Any]] = []
        self._chunks: list[tuple[float, int, str]] = []
        self._last_audio: float | None = None
        self._frozen = False
        self._switch_interval: float | None = None
        self.network: NetworkLink | None = None
        """Loss and jitter on the frames sent (the module docstring), ``None``: none."""
        self.lost_frames: list[int] = []
        self.send_delays: list[float] = []
        self._send_floor = -float("inf")

    @property
    def t0(self) -> float:
        """Monotonic time of session sample 0 (the first ``step``)."""
        return self._playout().t0

    def _playout(self) -> Playout:
        if self.playout is None:
            gc.freeze()  # see the module docstring
            self._frozen = True
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL))
            self.playout = Playout(self.rate, self.clock())
            if self.last_message is None:
                self.last_message = self.playout.t0  # the stall clock starts with the session
        return self.playout

    def close(self) -> None:
        """End of the session: unfreeze what :func:`gc.freeze` held and restore the switch
        interval (idempotent)."""
        if self._frozen:
            self._frozen = False
            gc.unfreeze()
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None

    def failed(self, exc: SystemFailure, secrets: tuple[str, ...] = ()) -> SystemFailure:
        """End a failed session (:meth:`close`) and name the frame it failed at, redacted of
        ``secrets`` (the adapter closes its transport: the runner never closes a failed
        sample's session)."""
        self.close()
        return SystemFailure(redact(f"frame {self.frames_sent}: {exc}", secrets))

    def deadline(self, k: int) -> float:
        """When frame ``k`` may be sent: ``t0 + (k + 1) * frame / rate``."""
        return self.t0 + (k + 1) * self.frame / self.rate

    def position(self, t: float) -> int:
        """The session sample at monotonic time ``t`` (0 before the first step)."""
        return 0 if self.playout is None else self.playout.position(t)

    def step(self, send: Sender, recv: Receiver, handle: Handler) -> np.ndarray:
        """Frame ``frames_sent``: receive until its deadline, ``send()`` it (which returns the
        monotonic time it went out), record the drift; returns the played-out frame."""
        k = self.frames_sent
        deadline = self.deadline(k)
        lost, late = (False, 0.0) if self.network is None else self.network.next()
        if self.network is not None and not lost:
            deadline = max(deadline + late, self._send_floor)
        self.pump_until(deadline, recv, handle)
        if lost:
            self.lost_frames.append(k)
        else:
            sent = send()
            self._send_floor = sent
            self.drift_ms.append(_ms(sent - deadline))
            if self.network is not None:
                self.send_delays.append(late)
        self.frames_sent += 1
        playout = self._playout()
        out = playout.frame(k * self.frame, self.frame)
        playout.release((k + 1) * self.frame)  # played: never read or flushed again
        return out

    def pump_until(self, deadline: float, recv: Receiver, handle: Handler) -> None:
        """Hand every message that arrives before ``deadline`` to ``handle``, checking
        liveness before each wait (at least once)."""
        while True:
            now = self.clock()
            self._alive(now)
            if now >= deadline:
                return
            got = recv(deadline - now)
            if got is None:
                continue
            self.last_message = got[1]
            handle(got[0], got[1])

    def _alive(self, now: float) -> None:
        """The stall rule and the adapter's check (see the class docstring)."""
        last = self._last_audio if self.stall_after == "audio" else self.last_message
        if self.stall_timeout is not None and last is not None and \
                now - last > self.stall_timeout and (self.expecting is None or self.expecting()):
            raise SystemFailure(f"stall: no {self.stall_after} from the server for "
                                f"{self.stall_timeout:g} s")
        if self.check is not None:
            self.check(now)

    def place(self, pcm: np.ndarray, arrival: float, stream: str = "") -> int:
        """Queue received audio on the playout clock; returns its start sample.  ``stream``
        names the sender's continuous stream (jitter is measured within one)."""
        if len(pcm) == 0:
            return self._playout().end
        at = self._playout().place(pcm, arrival)
        self._last_audio = arrival
        self._chunks.append((arrival, len(pcm), stream))
        self.arrivals.append({"sample": at, "arrival_ms": _ms(arrival - self.t0),
                              "samples": len(pcm), "stream": stream})
        return at

    def interrupt(self, arrival: float, why: str) -> int:
        """Flush what is queued beyond the playout position of ``arrival`` (never heard);
        returns the samples dropped (logged in ``playout_flushes`` when any)."""
        at = self.position(arrival)
        dropped = self._playout().flush_from(at)
        if dropped:
            self.flushes.append({"sample": at, "dropped": dropped, "reason": why})
        return dropped

    def log(self, kind: str, arrival: float, **fields: Any) -> dict[str, Any]:
        """Record a server event at the playout position of its arrival."""
        entry = {"sample": self.position(arrival), "type": kind,
                 "arrival_ms": _ms(arrival - self.t0) if self.playout else 0.0, **fields}
        self.events.append(entry)
        return entry

    def network_trace(self) -> dict[str, Any] | None:
        """``realtime.network`` of the trace (module docstring); ``None`` without a link."""
        if self.network is None:
            return None
        spec = self.network.spec
        lost = np.zeros(self.frames_sent, dtype=bool)
        lost[self.lost_frames] = True
        bursts = burst_lengths(lost)
        delays = np.asarray(self.send_delays or [0.0]) * 1000
        return {"loss": spec.loss, "burst": spec.burst, "jitter_ms": spec.jitter_ms,
                "seed": spec.seed, "lost_frames": list(self.lost_frames),
                "loss_rate": round(float(lost.mean()), 6) if self.frames_sent else 0.0,
                "mean_burst": round(float(bursts.mean()), 6) if len(bursts) else None,
                "send_delay_ms": {"mean": round(float(delays.mean()), 3),
                                  "max": round(float(delays.max()), 3)}}

    def trace(self) -> dict[str, Any]:
        """The session's timing record (see the module docstring)."""
        first = self.arrivals[0]["sample"] if self.arrivals else None
        network = self.network_trace()
        return {
            "realtime": {
                "clock": "time.monotonic", "rate": self.rate, "frame": self.frame,
                "frames_sent": self.frames_sent,
                "t0_monotonic": None if self.playout is None else self.playout.t0,
                "send_drift_ms": drift_stats(self.drift_ms),
                "arrival_jitter_ms": jitter_stats(self._chunks, self.rate),
                "initial_silence_ms": None if first is None else _ms(first / self.rate),
                "received_samples": sum(c[1] for c in self._chunks),
                **({} if network is None else {"network": network}),
            },
            "audio_arrivals": self.arrivals,
            "server_events": self.events,
            "playout_flushes": self.flushes,
        }
