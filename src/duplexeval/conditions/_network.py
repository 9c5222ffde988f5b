"""Packet loss and jitter on the user frames a wall-clock system is sent.

Loss follows the Gilbert model (a two-state Gilbert-Elliott chain whose bad state loses every
frame and whose good state none): from good the chain goes bad with probability ``q``, from bad
back to good with ``r``.  Its stationary loss rate is ``q / (q + r)`` and a loss burst lasts
``1 / r`` frames on average (geometric), so for a loss rate ``p`` and a mean burst ``b``::

    r = 1 / b,    q = p r / (1 - p)          (q <= 1 for p <= 0.5 and b >= 1)

The chain starts in its stationary distribution.  Jitter delays each frame's send by a draw
uniform in ``[0, jitter]`` ms after its deadline, never before the previous frame's send (no
reordering).  Both come from one ``numpy.random.default_rng(seed)``: the same seed gives the
same lost frames and delays.  The real-time driver asks :meth:`NetworkLink.next` once per
frame (:mod:`duplexeval.systems.realtime._driver`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duplexeval.conditions._spec import Condition

__all__ = ["NetworkLink", "NetworkSpec", "burst_lengths", "gilbert_losses"]


@dataclass(frozen=True)
class NetworkSpec:
    """A ``network`` condition with its seed: ``loss`` (rate), ``burst`` (mean frames),
    ``jitter`` (ms)."""

    loss: float
    burst: float
    jitter_ms: float
    seed: int

    @classmethod
    def of(cls, condition: Condition, seed: int) -> NetworkSpec:
        """The spec of a parsed ``network`` condition."""
        return cls(condition.number("loss"), condition.number("burst"),
                   condition.number("jitter"), seed)

    def transitions(self) -> tuple[float, float]:
        """``(q, r)``: the probabilities good -> bad and bad -> good per frame."""
        r = 1.0 / self.burst
        q = self.loss * r / (1.0 - self.loss)
        return q, r

    def link(self) -> NetworkLink:
        """A fresh link (the chain at frame 0)."""
        return NetworkLink(self)


class NetworkLink:
    """The chain of one session: :meth:`next` says, frame by frame, whether the frame is
    lost and how late (s) it is sent."""

    def __init__(self, spec: NetworkSpec) -> None:
        self.spec = spec
        self._rng = np.random.default_rng(spec.seed)
        self._bad = bool(self._rng.random() < spec.loss)  # the stationary start

    def next(self) -> tuple[bool, float]:
        """``(lost, delay_s)`` of the next frame."""
        lost = self._bad
        q, r = self.spec.transitions()
        self._bad = bool(self._rng.random() < (1.0 - r if self._bad else q))
        delay = float(self._rng.uniform(0.0, self.spec.jitter_ms)) / 1000.0
        return lost, delay


def gilbert_losses(spec: NetworkSpec, frames: int) -> np.ndarray:
    """The lost flags of ``frames`` consecutive frames of a fresh link (bool)."""
    link = spec.link()
    return np.array([link.next()[0] for _ in range(frames)], dtype=bool)


def burst_lengths(lost: np.ndarray) -> np.ndarray:
    """The lengths of the runs of consecutive lost frames (frames)."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], lost.astype(np.int8), [0]])))
    return edges[1::2] - edges[::2]
