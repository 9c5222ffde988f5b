"""A playout buffer: received output audio placed on a session's sample clock as a listener
would hear it.

A chunk that arrives at monotonic time ``a`` starts at session sample
``max(round((a - t0) * rate), end of the previous chunk)``, where ``t0`` is the monotonic time
of the session's sample 0: audio generated faster than real time queues behind what is still
playing, and a gap in arrivals is silence.  :meth:`flush_from` drops everything scheduled at or
after a position (an interruption: what was not yet played is never heard).

Only what has not been played yet is kept: :meth:`release` forgets the samples before a
position (the real-time driver releases each frame once it has returned it), so a long stream
holds seconds of audio, never the whole stream, and growing the buffer never copies minutes
of it (a copy that would stall a send).  Samples scheduled before the released position are
dropped (they could no longer be heard).
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
        self.base = 0
        """Session sample of ``_audio[0]`` (everything before it was released)."""
        self._audio = np.zeros(0, dtype=np.float32)

    def position(self, t: float) -> int:
        """The session sample at monotonic time ``t``."""
        return max(0, round((t - self.t0) * self.rate))

    def place(self, pcm: np.ndarray, arrival: float) -> int:
        """Queue ``pcm`` that arrived at monotonic ``arrival``; returns its start sample."""
        at = max(self.position(arrival), self.end)
        stop = at + len(pcm)
        self.end = stop
        skip = max(0, self.base - at)  # scheduled before what was released: never heard
        if skip >= len(pcm):
            return at
        a, b = at + skip - self.base, stop - self.base
        if b > len(self._audio):
            grown = np.zeros(max(b, 2 * len(self._audio)), dtype=np.float32)
            grown[:len(self._audio)] = self._audio
            self._audio = grown
        self._audio[a:b] = pcm[skip:]
        return at

    def flush_from(self, position: int) -> int:
        """Drop the audio scheduled at or after ``position``; returns how many samples went."""
        dropped = max(0, self.end - position)
        if dropped:
            lo = max(0, position - self.base)
            self._audio[lo:max(lo, self.end - self.base)] = 0.0
            self.end = position
        return dropped

    def frame(self, start: int, size: int) -> np.ndarray:
        """Samples ``[start, start + size)`` (zeros where nothing plays or was released)."""
        out = np.zeros(size, dtype=np.float32)
        a, b = max(start, self.base), min(start + size, self.base + len(self._audio))
        if b > a:
            out[a - start:b - start] = self._audio[a - self.base:b - self.base]
        return out

    def release(self, before: int) -> None:
        """Forget the samples before session sample ``before`` (already played)."""
        drop = min(max(0, before - self.base), len(self._audio))
        if drop:
            self._audio = self._audio[drop:].copy() if drop > len(self._audio) // 2 \
                else self._audio[drop:]
            self.base += drop
        if before > self.base:  # nothing was kept that far
            self.base = before
