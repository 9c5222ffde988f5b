"""Echo (self-bleed): the system's own output, delayed and scaled, in what it hears.

Online, frame by frame, as a loudspeaker leaking into the user's microphone: with ``F``
samples per frame and a delay of ``d`` samples (``d >= F``), the system hears at frame ``k``::

    heard[n] = user[n] + g * out[n - d]        for n in [k F, (k + 1) F)

where ``out`` is what it played (its output frames so far; 0 before its first) and
``g = 10**(gain/20)``.  Because ``d >= F`` every sample needed was played in an earlier frame:
the system never hears output it has not produced yet.  A delay under one frame is refused
(:func:`echo_problem`).  The mic-side conditions that come after ``echo`` in the order (gain,
clip) then apply to the heard frame (:meth:`Mic.heard`).

Units: ``delay`` in seconds (rounded to the nearest native sample), ``gain`` in dB.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from duplexeval.conditions._apply import mic_chain
from duplexeval.conditions._spec import Condition

__all__ = ["EchoLine", "Mic", "echo_problem"]


def echo_problem(echo: Condition, rate: int, frame: int) -> str | None:
    """Why ``echo`` cannot act online on a system of ``rate`` Hz and ``frame`` samples
    (``None``: it can): a delay shorter than one frame would need output not yet produced."""
    delay = round(echo.number("delay") * rate)
    if delay < frame:
        return (f"echo delay {echo.number('delay'):g} s is shorter than the system's frame "
                f"({frame / rate:g} s): it would hear output it has not produced yet")
    return None


class EchoLine:
    """What the system played so far (its output frames, end to end), read back delayed; the
    buffer doubles as it grows, so appending a frame is amortised constant time."""

    def __init__(self, played: Iterable[np.ndarray] = ()) -> None:
        self._buffer = np.zeros(1024, dtype=np.float32)
        self._length = 0
        for frame in played:
            self.append(frame)

    def __len__(self) -> int:
        return self._length

    def append(self, frame: np.ndarray) -> None:
        """One more output frame played."""
        x = np.asarray(frame, dtype=np.float32)
        end = self._length + len(x)
        if end > len(self._buffer):
            grown = np.zeros(max(end, 2 * len(self._buffer)), dtype=np.float32)
            grown[:self._length] = self._buffer[:self._length]
            self._buffer = grown
        self._buffer[self._length:end] = x
        self._length = end

    def read(self, start: int, n: int) -> np.ndarray:
        """Played samples ``[start, start + n)`` (zeros outside what was played)."""
        out = np.zeros(n, dtype=np.float32)
        a, b = max(start, 0), min(start + n, self._length)
        if b > a:
            out[a - start:b - start] = self._buffer[a:b]
        return out


@dataclass(frozen=True)
class Mic:
    """The microphone side of a run with echo: the echo, then the conditions after it in the
    order (gain, clip), applied to each frame the system hears."""

    echo: Condition
    after: tuple[Condition, ...]
    rate: int
    """The system's native rate (Hz): the delay in samples is ``round(delay * rate)``."""

    @property
    def delay(self) -> int:
        """The echo delay in native samples."""
        return round(self.echo.number("delay") * self.rate)

    def heard(self, user: np.ndarray, start: int, line: EchoLine) -> np.ndarray:
        """What the system hears of the ``user`` frame beginning at pass sample ``start``,
        given what it played (``line``, from the same pass sample 0)."""
        g = 10 ** (self.echo.number("gain") / 20)
        x = np.asarray(user, dtype=np.float32) + np.float32(g) * line.read(start - self.delay,
                                                                           len(user))
        return mic_chain(x, self.after)
