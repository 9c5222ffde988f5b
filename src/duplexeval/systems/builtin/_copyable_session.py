"""Helpers for writing sessions: a session whose whole state is plain data, and speech logging.

Not part of the interface (:mod:`duplexeval.systems._base`); the built-in systems use them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from duplexeval.systems._base import BatchRowFailure, BatchSession, Session, StepOutput

__all__ = ["PlainStateBatch", "PlainStateSession", "log_speech", "rng_state"]


def rng_state(seed: int) -> dict[str, Any]:
    """The plain-data state of a numpy generator seeded with ``seed``."""
    return dict(np.random.default_rng(seed).bit_generator.state)


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


class PlainStateBatch(BatchSession):
    """Batched forks of a :class:`PlainStateSession`: one fresh session per row (``new()``),
    restored to its state and reseeded, each stepped with its own frame.  Not vectorised, but
    equal to single forks by construction, which is what the batch capability promises; a row
    whose step raises is reported with :class:`~duplexeval.systems._base.BatchRowFailure` after
    the other rows of the frame were stepped."""

    def __init__(self, new: Callable[[], PlainStateSession], states: Sequence[Any],
                 seeds: Sequence[int]) -> None:
        if len(states) != len(seeds):
            raise ValueError(f"{len(states)} states but {len(seeds)} seeds")
        self.rows: list[PlainStateSession] = []
        for state, seed in zip(states, seeds, strict=True):
            row = new()
            row.restore(state)
            row.reseed(seed)
            self.rows.append(row)

    @property
    def size(self) -> int:
        return len(self.rows)

    def step(self, users: Sequence[np.ndarray | None]) -> list[StepOutput | None]:
        if len(users) != len(self.rows):
            raise ValueError(f"{len(users)} frames for {len(self.rows)} rows")
        outputs: list[StepOutput | None] = []
        failed: dict[int, str] = {}
        for i, (row, user) in enumerate(zip(self.rows, users, strict=True)):
            try:
                outputs.append(None if user is None else row.step(user))
            except Exception as exc:  # this row fails; the others go on
                failed[i] = f"{type(exc).__name__}: {exc}"
                outputs.append(None)
        if failed:
            raise BatchRowFailure(failed, outputs)
        return outputs

    def trace(self, row: int) -> dict[str, Any]:
        return self.rows[row].trace()

    def close(self) -> None:
        for row in self.rows:
            row.close()


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
