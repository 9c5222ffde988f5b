"""Concurrent sessions of a wall-clock system through the real-time driver, with gates.

Each session streams the reactive stimulus of :mod:`~duplexeval.app.rtcheck._stimulus` (a turn;
once the system is heard, a 60 ms transient and then a barge-in) in its own thread; a level
of ``N`` runs ``N`` sessions at once.  Per session, every figure with its measurement origin:

* **time to first audio** (TTFA): from the user's turn end (the stimulus, on the session clock
  ``t0 + n / rate`` of :mod:`duplexeval.systems.realtime._driver`) to the monotonic arrival of
  the first audio message at the client (the driver's ``audio_arrivals``);
* **stalls**: reply audio that ran dry: consecutive audio chunks of one reply (the adapter's
  stream) where the later one starts on the playout clock after the earlier one ended, by
  more than :data:`STALL_SLACK` and less than :data:`REPLY_GAP`, not across a playout flush;
  their count and total seconds (played-out channel, driver's playout);
* **send drift**: ``max`` and ``p95`` of ``|send time - deadline|`` of the user frames (ms,
  the driver's ``send_drift_ms``);
* **cancel latency**: from the barge-in's onset (the VAD edge: the stimulus placed it, session
  clock) to the start of the first :data:`SILENT_SPAN` of silence in the played-out system
  channel (frames of RMS below :data:`SILENCE_RMS`): when a listener stops hearing the reply.

Gates (vLLM-Omni #6101's real-service regression gates, on the played-out channel)::

    system  |====== reply =============================|           silent from the cancel
    user         |t|                |==== barge-in ====|
                 ^ no silence here  ^ edge   <= 250 ms ^cancel, no reply audio after it
                   (60 ms transient)                     until the barge-in ends

* ``cancel``: the system was speaking at the edge, its reply stopped within
  :data:`CANCEL_WITHIN` (250 ms) of it, and no reply audio was played after the cancel while
  the barge-in lasted (no stale audio);
* ``transient``: the system was speaking at the transient and did not fall silent between it
  and the barge-in;
* ``realtime``: no stall in any reply and no failure (a server slower than real time stalls).

A level passes when every session passes every gate.  The played-out channel cannot tell a
reply that ended from one that was cancelled, so the gates need a reply longer than
``BARGE_AFTER + SILENT_SPAN`` (1.1 s): a shorter one fails both, with the problem named.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from duplexeval.app.rtcheck._stimulus import (
    BARGE_AFTER,
    BARGE_SECONDS,
    TRANSIENT_AFTER,
    TURN_SECONDS,
    TURN_START,
    speech,
    transient,
)
from duplexeval.errors import DuplexevalError
from duplexeval.systems._base import ClockKind, DialogueInfo, SessionSpec, System

__all__ = ["CANCEL_WITHIN", "LEVELS", "ORIGINS", "ConcurrencyLevel", "SessionCheck",
           "analyse_session", "check_sessions"]

LEVELS = (1, 2, 4, 8)
CANCEL_WITHIN = 0.25
"""Seconds from the VAD edge within which the reply must stop (#6101)."""
SILENT_SPAN = 0.1
"""Seconds of played-out silence that count as the reply having stopped."""
SILENCE_RMS = 0.005
"""Frame RMS below which the played-out channel is silent (about -46 dBFS)."""
STALL_SLACK = 0.005
"""Seconds of playout gap below which two chunks still count as continuous."""
REPLY_GAP = 1.0
"""Seconds of playout gap from which two chunks belong to two replies."""
MAX_WAIT = 10.0
"""Seconds after the user's turn end that a session waits for the system to speak."""
TAIL = 1.0
"""Seconds streamed after the barge-in ends."""

ORIGINS: dict[str, str] = {
    "ttfa": "from the user's turn end (stimulus, session clock t0 + n/rate) to the monotonic "
            "arrival of the first audio message at the client (real-time driver)",
    "stalls": "gaps in reply audio on the driver's playout clock (a chunk starting after the "
              f"previous ended, by {STALL_SLACK * 1000:g} ms to {REPLY_GAP:g} s, not across "
              "a flush)",
    "drift": "|send time - deadline| of each user frame (time.monotonic, real-time driver)",
    "cancel": "from the barge-in onset (the VAD edge the stimulus placed, session clock) to "
              f"the first {SILENT_SPAN * 1000:g} ms of silence in the played-out system "
              "channel",
}


@dataclass
class SessionCheck:
    """One session's figures and gates (seconds; ``None``: not measured)."""

    ttfa: float | None = None
    heard_at: float | None = None
    """Session second of the first played-out system speech after the turn."""
    stalls: int = 0
    stall_seconds: float = 0.0
    drift_max_ms: float | None = None
    drift_p95_ms: float | None = None
    cancel_latency: float | None = None
    gates: dict[str, bool] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every gate passed."""
        return bool(self.gates) and all(self.gates.values())

    def to_json(self) -> dict[str, Any]:
        """Plain data (seconds, ms where named)."""
        return {"ttfa_s": self.ttfa, "heard_at_s": self.heard_at, "stalls": self.stalls,
                "stall_s": self.stall_seconds, "drift_max_ms": self.drift_max_ms,
                "drift_p95_ms": self.drift_p95_ms, "cancel_latency_s": self.cancel_latency,
                "gates": self.gates, "problems": self.problems, "passed": self.passed}


@dataclass(frozen=True)
class ConcurrencyLevel:
    """``sessions`` concurrent sessions: their checks and the level's summary."""

    sessions: int
    checks: tuple[SessionCheck, ...]

    @property
    def passed(self) -> bool:
        """Every session passed every gate."""
        return all(c.passed for c in self.checks)

    def _values(self, name: str) -> list[float]:
        return [v for c in self.checks if (v := getattr(c, name)) is not None]

    def summary(self) -> dict[str, Any]:
        """TTFA p50 and max, stalls, worst drift and cancel latency, gates passed (of N)."""
        ttfa = self._values("ttfa")
        cancel = self._values("cancel_latency")
        drift = self._values("drift_max_ms")
        gates = sorted({g for c in self.checks for g in c.gates})
        return {
            "sessions": self.sessions,
            "ttfa_p50_s": float(np.percentile(ttfa, 50)) if ttfa else None,
            "ttfa_max_s": max(ttfa) if ttfa else None,
            "stalls": sum(c.stalls for c in self.checks),
            "stall_s": sum(c.stall_seconds for c in self.checks),
            "drift_max_ms": max(drift) if drift else None,
            "cancel_max_s": max(cancel) if cancel else None,
            "gates": {g: sum(c.gates.get(g, False) for c in self.checks) for g in gates},
            "passed": self.passed,
        }


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0


class _Script:
    """The reactive stimulus of one session, frame by frame."""

    def __init__(self, rate: int, frame: int) -> None:
        self.rate, self.frame = rate, frame
        self.turn = speech(TURN_SECONDS, rate, 0)
        self.blip = transient(rate)
        self.barge = speech(BARGE_SECONDS, rate, 1)
        self.turn_start = round(TURN_START * rate)
        self.turn_end_s = TURN_START + TURN_SECONDS
        self.heard: int | None = None
        """Sample at which the system was first heard after the turn."""

    @property
    def transient_at(self) -> int | None:
        return None if self.heard is None else self.heard + round(TRANSIENT_AFTER * self.rate)

    @property
    def barge_at(self) -> int | None:
        return None if self.heard is None else self.heard + round(BARGE_AFTER * self.rate)

    def end(self) -> int:
        """The sample after which the session stops (moves once the system is heard)."""
        if self.barge_at is None:
            return round((self.turn_end_s + MAX_WAIT) * self.rate)
        return self.barge_at + round((BARGE_SECONDS + TAIL) * self.rate)

    def user(self, k: int) -> np.ndarray:
        """User frame ``k``."""
        a = k * self.frame
        out = np.zeros(self.frame, np.float32)
        for start, x in ((self.turn_start, self.turn), (self.transient_at, self.blip),
                         (self.barge_at, self.barge)):
            if start is None:
                continue
            lo, hi = max(a, start), min(a + self.frame, start + len(x))
            if hi > lo:
                out[lo - a:hi - a] += x[lo - start:hi - start]
        return out

    def heard_frame(self, k: int, played: np.ndarray) -> None:
        """Note the first played-out speech after the user's turn end."""
        if self.heard is None and k * self.frame >= self.turn_end_s * self.rate \
                and _rms(played) > SILENCE_RMS:
            self.heard = k * self.frame


def _silent_from(played: np.ndarray, start: int, stop: int, rate: int,
                 frame: int) -> int | None:
    """The first sample in ``[start, stop)`` (frame-aligned scan) from which the played-out
    channel is silent for :data:`SILENT_SPAN`, or ``None``."""
    span = max(1, math.ceil(SILENT_SPAN * rate / frame))
    k0 = start // frame
    run = 0
    for k in range(k0, min(stop, len(played)) // frame + span):
        x = played[k * frame:(k + 1) * frame]
        if len(x) == 0:
            break
        run = run + 1 if _rms(x) <= SILENCE_RMS else 0
        if run >= span:
            first = (k - span + 1) * frame
            return first if first < stop else None
    return None


def _stalls(trace: dict[str, Any], rate: int) -> tuple[int, float]:
    """Count and seconds of the gaps inside replies (module docstring): consecutive chunks
    (in arrival order) of one stream (the adapter's name for a reply; '' for adapters that
    name none, where :data:`REPLY_GAP` separates replies), not across a playout flush."""
    chunks = trace.get("audio_arrivals") or []
    flushes = [f["sample"] for f in trace.get("playout_flushes") or []]
    count, seconds = 0, 0.0
    for a, b in itertools.pairwise(chunks):
        if a.get("stream", "") != b.get("stream", ""):
            continue
        end = a["sample"] + a["samples"]
        gap = (b["sample"] - end) / rate
        if any(a["sample"] <= f <= b["sample"] for f in flushes):
            continue
        if STALL_SLACK < gap < REPLY_GAP:
            count += 1
            seconds += gap
    return count, seconds


def analyse_session(played: np.ndarray, trace: dict[str, Any], script: _Script,
                    failure: str | None = None) -> SessionCheck:
    """The figures and gates of one finished session (module docstring)."""
    rate, frame = script.rate, script.frame
    check = SessionCheck()
    if failure is not None:
        check.problems.append(failure)
    arrivals = trace.get("audio_arrivals") or []
    if arrivals:
        check.ttfa = arrivals[0]["arrival_ms"] / 1000 - script.turn_end_s
    drift = (trace.get("realtime") or {}).get("send_drift_ms") or {}
    check.drift_max_ms, check.drift_p95_ms = drift.get("max"), drift.get("p95")
    check.stalls, check.stall_seconds = _stalls(trace, rate)
    check.gates["realtime"] = failure is None and check.stalls == 0
    if script.heard is None:
        check.problems.append(f"the system was not heard within {MAX_WAIT:g} s of the turn end")
        check.gates["cancel"] = check.gates["transient"] = False
        return check
    check.heard_at = script.heard / rate
    t_at, b_at = script.transient_at, script.barge_at
    assert t_at is not None and b_at is not None
    lead = round(0.05 * rate)
    speaking_at_t = _rms(played[t_at - lead:t_at]) > SILENCE_RMS
    stopped = _silent_from(played, t_at, b_at, rate, frame)
    check.gates["transient"] = speaking_at_t and stopped is None
    if not speaking_at_t:
        check.problems.append("the reply had ended before the transient")
    elif stopped is not None:
        check.problems.append(f"the reply stopped {(stopped - t_at) / rate:.3f} s after the "
                              "60 ms transient")
    speaking_at_b = _rms(played[b_at - lead:b_at]) > SILENCE_RMS
    barge_end = b_at + round(BARGE_SECONDS * rate)
    cancel = _silent_from(played, b_at, barge_end, rate, frame)
    if cancel is not None:
        check.cancel_latency = (cancel - b_at) / rate
    stale = cancel is not None and _rms_any(played, cancel + round(SILENT_SPAN * rate),
                                            barge_end, frame)
    ok = speaking_at_b and check.cancel_latency is not None \
        and check.cancel_latency <= CANCEL_WITHIN + 1e-9 and not stale
    check.gates["cancel"] = ok
    if not speaking_at_b:
        check.problems.append("the reply had ended before the barge-in")
    elif check.cancel_latency is None:
        check.problems.append("the reply did not stop during the barge-in")
    elif stale:
        check.problems.append("reply audio was played after the cancel, during the barge-in")
    elif not ok:
        check.problems.append(f"the reply stopped {check.cancel_latency:.3f} s after the edge "
                              f"(gate {CANCEL_WITHIN:g} s)")
    return check


def _rms_any(played: np.ndarray, start: int, stop: int, frame: int) -> bool:
    """Any frame of ``played[start:stop]`` above the silence level."""
    return any(_rms(played[a:a + frame]) > SILENCE_RMS for a in range(start, stop, frame))


def _one(system: System, index: int, out: list[SessionCheck | None]) -> None:
    caps = system.capabilities
    script = _Script(caps.sample_rate, caps.frame_size)
    played: list[np.ndarray] = []
    failure = None
    trace: dict[str, Any] = {}
    try:
        session = system.open(SessionSpec(sample_rate=caps.sample_rate, seed=index,
                                          dialogue=DialogueInfo(id=f"rtcheck-{index}",
                                                                language="en")))
        try:
            k = 0
            while k * script.frame < script.end():
                y = np.asarray(session.step(script.user(k)).audio, dtype=np.float32)
                played.append(y)
                script.heard_frame(k, y)
                k += 1
            trace = session.trace()
        finally:
            session.close()
    except Exception as exc:  # a failed session is a failed gate, reported, not raised
        failure = f"{type(exc).__name__}: {exc}"
    audio = np.concatenate(played) if played else np.zeros(0, np.float32)
    out[index] = analyse_session(audio, trace, script, failure)


def check_sessions(system: System, levels: Sequence[int] = LEVELS) -> list[ConcurrencyLevel]:
    """Run each level's sessions concurrently (one thread each) and check them."""
    if system.capabilities.clock is not ClockKind.WALL:
        raise DuplexevalError(f"system {system.name!r} is not a wall-clock server (clock "
                              f"{system.capabilities.clock.value}): rtcheck times its compute")
    results = []
    for n in levels:
        out: list[SessionCheck | None] = [None] * n
        threads = [threading.Thread(target=_one, args=(system, i, out), daemon=True)
                   for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results.append(ConcurrencyLevel(n, tuple(c for c in out if c is not None)))
    return results
