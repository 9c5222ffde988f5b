"""Built-in reference points: ``silence`` (never speaks) and ``reference`` (replays the
dialogue's reference system channel: the human row of every table)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from duplexeval.systems._base import (
    Capabilities,
    Forced,
    Oracle,
    Session,
    SessionSpec,
    StepOutput,
    System,
)

__all__ = ["ReferenceSystem", "SilenceSystem"]


class _SilenceSession(Session):
    def __init__(self, frame_size: int) -> None:
        self._frame = np.zeros(frame_size, dtype=np.float32)
        self.frames = 0

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        self.frames += 1
        return StepOutput(self._frame)

    def snapshot(self) -> Any:
        return {"frames": self.frames}

    def restore(self, state: Any) -> None:
        self.frames = int(state["frames"])

    def trace(self) -> dict[str, Any]:
        return {"frames": self.frames, "speech_samples": []}


class _ReplaySystem(System):
    """Shared setup: ``sample_rate`` (default 24000 Hz) and ``frame_size`` (default 20 ms)
    arguments; teacher forcing of audio and text and snapshots are supported."""

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        rate = self.rate_arg("sample_rate", 24000)
        frame = self.int_arg("frame_size", rate // 50, 1)
        self.capabilities = Capabilities(sample_rate=rate, frame_size=frame,
                                         teacher_forcing_audio=True, teacher_forcing_text=True,
                                         snapshot=True)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ("sample_rate", "frame_size")


class SilenceSystem(_ReplaySystem):
    """Never speaks: every timing metric's floor (TOR 0 on every shift)."""

    name = "silence"
    version = "1"
    description = "never speaks"

    def open(self, spec: SessionSpec) -> Session:
        return _SilenceSession(self.capabilities.frame_size)


class _ReferenceSession(Session):
    def __init__(self, reference: np.ndarray, frame_size: int) -> None:
        self._ref = reference
        self._size = frame_size
        self.frames = 0

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        start = self.frames * self._size
        chunk = self._ref[start:start + self._size]
        if len(chunk) < self._size:
            chunk = np.concatenate([chunk, np.zeros(self._size - len(chunk), dtype=np.float32)])
        self.frames += 1
        return StepOutput(chunk.astype(np.float32, copy=False))

    def snapshot(self) -> Any:
        return {"frames": self.frames}

    def restore(self, state: Any) -> None:
        self.frames = int(state["frames"])

    def trace(self) -> dict[str, Any]:
        return {"frames": self.frames}


class ReferenceSystem(_ReplaySystem):
    """Replays the reference system channel of the dialogue, ignoring what it hears.

    Its smooth turn-taking latency equals the human latency by construction: a check on the
    whole chain (plan, run, analysis, metrics).  Reads the oracle reference audio.
    """

    name = "reference"
    version = "1"
    description = "replays the dialogue's reference system channel (the human row)"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.capabilities = replace(self.capabilities,
                                    oracle=frozenset({Oracle.REFERENCE_AUDIO}))

    def open(self, spec: SessionSpec) -> Session:
        reference = spec.oracle.get(Oracle.REFERENCE_AUDIO)
        if reference is None:
            raise ValueError("the reference system needs the dialogue audio (none was given)")
        return _ReferenceSession(np.asarray(reference, dtype=np.float32),
                                 self.capabilities.frame_size)
