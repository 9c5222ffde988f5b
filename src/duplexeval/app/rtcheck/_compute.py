"""Compute time per frame of an in-process system against the frame's duration.

Measurement origin: wall time of each :meth:`Session.step` call alone (``time.perf_counter``
just before and just after it, in this process, on this hardware; input slicing, resampling
and bookkeeping excluded), over every frame of the stream, after :data:`WARMUP` frames that
are stepped but not counted (first-call allocations, lazy imports).  Batched: the same for
each :meth:`BatchSession.step` of ``rows`` rows forked from one snapshot (one step advances
every row by one frame), so the time is that of serving ``rows`` live streams at once.
A system that declares oracle transcripts or QA references (the cascade's answer content) is
given them empty: what it says changes, its per-frame work does not.

The ratio ``step time / frame duration`` is the real-time factor (RTF) of a frame.  Verdict:
**live** when the p99 RTF is at most 1 (at most one frame in a hundred would come late, and
a one-frame output buffer absorbs it), else **not live**; p50, p95 and p99 are numpy's linear
interpolation over the frames::

    frame duration F    |--------|--------|--------|
    step times           ###      #####    ##########     the third frame: RTF > 1, late
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from duplexeval.errors import DuplexevalError
from duplexeval.systems._base import ClockKind, DialogueInfo, Oracle, SessionSpec, System

__all__ = ["ORIGIN", "WARMUP", "ComputeCheck", "FrameTimes", "check_compute"]

WARMUP = 5
"""Frames stepped before timing starts."""
ORIGIN = ("wall time of each Session.step (BatchSession.step for a batch) alone, "
          "time.perf_counter in this process on this hardware, after "
          f"{WARMUP} warm-up frames; the frame duration is frame_size / sample_rate")


@dataclass(frozen=True)
class FrameTimes:
    """Per-frame step times of one mode (``unbatched`` or ``batch of N``)."""

    mode: str
    rows: int
    frames: int
    frame_seconds: float
    p50: float
    p95: float
    p99: float
    mean: float

    @property
    def live(self) -> bool:
        """p99 step time within the frame duration (the module's verdict)."""
        return self.p99 <= self.frame_seconds

    def rtf(self, value: float) -> float:
        """A step time as a real-time factor."""
        return value / self.frame_seconds

    def to_json(self) -> dict[str, object]:
        """Plain data, seconds and RTFs."""
        return {"mode": self.mode, "rows": self.rows, "frames": self.frames,
                "frame_seconds": self.frame_seconds,
                "step_seconds": {"p50": self.p50, "p95": self.p95, "p99": self.p99,
                                 "mean": self.mean},
                "rtf": {"p50": self.rtf(self.p50), "p95": self.rtf(self.p95),
                        "p99": self.rtf(self.p99)},
                "live": self.live}


@dataclass(frozen=True)
class ComputeCheck:
    """The in-process check: one :class:`FrameTimes` per mode."""

    system: str
    stream_seconds: float
    modes: tuple[FrameTimes, ...]

    @property
    def live(self) -> bool:
        """The unbatched mode keeps up (one live conversation on this hardware)."""
        return self.modes[0].live

    def to_json(self) -> dict[str, object]:
        """The strict-JSON record ``rtcheck --json`` writes."""
        return {"kind": "in-process", "system": self.system,
                "stream_seconds": self.stream_seconds, "measurement_origin": ORIGIN,
                "verdict_rule": "live when the p99 step time is at most the frame duration",
                "live": self.live, "modes": [m.to_json() for m in self.modes]}


def _times(mode: str, rows: int, values: list[float], frame_seconds: float) -> FrameTimes:
    if not values:
        raise DuplexevalError(f"rtcheck: the stream is too short to time ({WARMUP} warm-up "
                              "frames and none left)")
    p50, p95, p99 = (float(v) for v in np.percentile(values, [50, 95, 99]))
    return FrameTimes(mode, rows, len(values), frame_seconds, p50, p95, p99,
                      float(np.mean(values)))


def check_compute(system: System, user: np.ndarray, rows: int = 8,
                  language: str = "en") -> ComputeCheck:
    """Time ``system`` over ``user`` (mono, at the system's rate): unbatched, then with
    ``rows`` batch rows when the system has ``batch`` and ``snapshot`` (and ``rows > 1``)."""
    caps = system.capabilities
    if caps.clock is ClockKind.WALL:
        raise DuplexevalError(f"system {system.name!r} is a wall-clock server: rtcheck drives "
                              "it through the real-time driver (concurrent sessions)")
    if Oracle.REFERENCE_AUDIO in caps.oracle:
        raise DuplexevalError(f"system {system.name!r} replays the reference audio (oracle "
                              "reference_audio): there is nothing to time")
    f = caps.frame_size
    frames = [np.ascontiguousarray(user[i:i + f], dtype=np.float32)
              for i in range(0, len(user) - f + 1, f)]
    frame_seconds = f / caps.sample_rate
    spec = SessionSpec(sample_rate=caps.sample_rate, seed=0,
                       dialogue=DialogueInfo(id="rtcheck", language=language),
                       oracle={kind: () for kind in caps.oracle})
    session = system.open(spec)
    if caps.clock is ClockKind.FILE:
        session.load_input(np.concatenate(frames) if frames else np.zeros(0, np.float32))
    timed: list[float] = []
    for k, x in enumerate(frames):
        start = time.perf_counter()
        session.step(x)
        if k >= WARMUP:
            timed.append(time.perf_counter() - start)
    modes = [_times("unbatched", 1, timed, frame_seconds)]
    if rows > 1 and caps.batch and caps.snapshot and caps.clock is ClockKind.FRAME:
        fresh = system.open(spec)
        batch = fresh.fork_batch([fresh.snapshot()] * rows, list(range(rows)))
        batched: list[float] = []
        try:
            for k, x in enumerate(frames):
                start = time.perf_counter()
                batch.step([x] * rows)
                if k >= WARMUP:
                    batched.append(time.perf_counter() - start)
        finally:
            batch.close()
            fresh.close()
        modes.append(_times(f"batch of {rows}", rows, batched, frame_seconds))
    session.close()
    return ComputeCheck(system.name, len(frames) * frame_seconds, tuple(modes))
