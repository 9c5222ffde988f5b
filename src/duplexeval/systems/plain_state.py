"""Helpers for writing sessions: a session whose whole state is plain data, and speech logging.

Not part of the interface (:mod:`duplexeval.systems.base`); the built-in systems use them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from .base import Session

__all__ = ["PlainStateSession", "log_speech", "rng_state"]


def rng_state(seed: int) -> dict[str, Any]:
    """The plain-data state of a numpy generator seeded with ``seed``."""
    return np.random.default_rng(seed).bit_generator.state


class PlainStateSession(Session):
    """A session whose whole state is the plain-data dict ``self.state`` (numbers, lists,
    dicts, numpy arrays), so :meth:`snapshot` is a deep copy; its random generator lives in
    ``state["rng"]`` (draw with :meth:`rng`) and :meth:`reseed` replaces it."""

    state: dict[str, Any]

    def snapshot(self) -> Any:
        return copy.deepcopy(self.state)

    def restore(self, state: Any) -> None:
        self.state = copy.deepcopy(state)

    def reseed(self, seed: int) -> None:
        self.state["rng"] = rng_state(seed)

    @contextmanager
    def rng(self) -> Iterator[np.random.Generator]:
        """The session's generator; what is drawn inside the block advances ``state["rng"]``."""
        gen = np.random.default_rng()
        gen.bit_generator.state = self.state["rng"]
        yield gen
        self.state["rng"] = gen.bit_generator.state


def log_speech(log: list[list[int]], speech: Iterable[Sequence[int]], pos: int, take: int,
               at: int) -> None:
    """Append to ``log`` (session samples ``[start, end)``, merged when contiguous) the parts of
    an utterance's ``speech`` intervals (its own samples) inside ``[pos, pos + take)``, which
    the session plays from session sample ``at``."""
    for a, b in speech:
        a, b = max(a, pos), min(b, pos + take)
        if a >= b:
            continue
        start, end = at + a - pos, at + b - pos
        if log and log[-1][1] == start:
            log[-1][1] = end
        else:
            log.append([start, end])
