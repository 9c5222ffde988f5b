"""A playout buffer: received output audio placed on a session's sample clock as a listener
would hear it.

A chunk that arrives at monotonic time ``a`` starts at session sample
``max(round((a - t0) * rate), end of the previous chunk)``, where ``t0`` is the monotonic time
of the session's sample 0: audio generated faster than real time queues behind what is still
playing, and a gap in arrivals is silence.  :meth:`flush_from` drops everything scheduled at or
after a position (an interruption: what was not yet played is never heard).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Playout"]


class Playout:
    """Mono float32 audio at ``rate`` Hz on a session clock starting at monotonic ``t0`` (s)."""

    def __init__(self, rate: int, t0: float) -> None:
        self.rate, self.t0 = rate, t0
        self.end = 0
        """Session sample where the queued audio ends."""
        self._audio = np.zeros(0, dtype=np.float32)

    def position(self, t: float) -> int:
        """The session sample at monotonic time ``t``."""
        return max(0, round((t - self.t0) * self.rate))

    def place(self, pcm: np.ndarray, arrival: float) -> int:
        """Queue ``pcm`` that arrived at monotonic ``arrival``; returns its start sample."""
        at = max(self.position(arrival), self.end)
        stop = at + len(pcm)
        if stop > len(self._audio):
            grown = np.zeros(max(stop, 2 * len(self._audio)), dtype=np.float32)
            grown[:len(self._audio)] = self._audio
            self._audio = grown
        self._audio[at:stop] = pcm
        self.end = stop
        return at

    def flush_from(self, position: int) -> int:
        """Drop the audio scheduled at or after ``position``; returns how many samples went."""
        dropped = max(0, self.end - position)
        if dropped:
            self._audio[position:self.end] = 0.0
            self.end = position
        return dropped

    def frame(self, start: int, size: int) -> np.ndarray:
        """Samples ``[start, start + size)`` (zeros where nothing plays)."""
        out = self._audio[start:start + size]
        if len(out) < size:
            out = np.concatenate([out, np.zeros(size - len(out), dtype=np.float32)])
        return out.copy()
