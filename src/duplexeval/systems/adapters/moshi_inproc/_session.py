"""In-process Moshi sessions: one stream (:class:`MoshiSession`) and batched forks
(:class:`MoshiBatch`).

A step (80 ms, 1920 samples at 24 kHz)::

    user frame t ──► Mimi encoder (user state) ──► user codes ─┐
    [forced] reference frame t ──► Mimi encoder (reference state) ──► reference codes ─┤
    [forced] reference words starting in frame t ──► text token (TextForcing) ──┤
                                                    LMStepper step t (token cache, LM)
    system frame t ◄── Mimi decoder (system state) ◄── text + system codes of frame t

Frame ``t``'s output is the model's frame ``t`` (for Moshi's ``max_delay`` of 1); step 0
returns silence, as moshi's ``LMGen`` returns nothing at its first step.  Under teacher
forcing the returned audio decodes the reference codes (the model "has said" them).

State: each session owns its streaming states (:mod:`.streams`) and binds them to the shared
modules before using them.  A snapshot is the LM's states (KV caches, offsets), both Mimis'
states (user encoder and system decoder, reference encoder), the token cache with its pending
forced writes, the text queue and the session's ``torch.Generator`` state; moshi's own global
RNG is never drawn from.

Batched forks: row ``i`` has its own LM batch row, its own generator and its own Mimi states
(single-row: the Mimi decoder's batched convolutions do not round exactly as a single row's,
while the LM's did on CPU in every check, up to a 512-wide 4-layer LM); its output equals,
bit for bit on CPU, that of a single session restored to ``states[i]`` and reseeded with
``seeds[i]``.  ``batch_codec=1`` runs the rows' Mimi as one batch instead: the same tokens,
audio within rounding (for GPU throughput).  On CUDA, kernels may choose different reduction
orders for different batch sizes, so rows may drift from single sessions by rounding;
sampling stays per row.  A row whose user frame is ``None`` has ended: the LM still computes
it (on silence) but its output is dropped and its codec is not stepped (with
``batch_codec=1`` it is, on silence).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from moshi.utils.compile import no_compile, no_cuda_graph

from duplexeval.systems._base import BatchSession, Forced, Session, StepOutput
from duplexeval.systems.adapters.moshi_inproc._loading import MoshiModels
from duplexeval.systems.adapters.moshi_inproc._stepper import LMStepper, Sampling, StepTokens
from duplexeval.systems.adapters.moshi_inproc._streams import StreamSet
from duplexeval.systems.adapters.moshi_inproc._text import TextForcing, piece_text

__all__ = ["MoshiBatch", "MoshiSession", "Running"]


@dataclass(frozen=True)
class Running:
    """How sessions run: ``compiled`` lets moshi ``torch.compile`` its kernels; ``batch_codec``
    runs the Mimi of batch rows as one batch (faster on a GPU, not bit-identical)."""

    compiled: bool = False
    batch_codec: bool = False


def _plain_kernels(compiled: bool) -> ExitStack:
    """moshi's lazily compiled pieces run uncompiled unless ``compiled`` (compiling costs tens
    of seconds per shape, and batches of forks change shapes); CUDA graphs are always off
    (sessions swap streaming states, which graphs would capture by address)."""
    stack = ExitStack()
    stack.enter_context(no_cuda_graph())
    if not compiled:
        stack.enter_context(no_compile())
    return stack


class _Codec:
    """One row's Mimi states: user encoder and system decoder."""

    def __init__(self, models: MoshiModels) -> None:
        self.models = models
        self.streams = StreamSet(models.mimi, 1)

    def encode(self, frame: np.ndarray) -> torch.Tensor:
        self.streams.bind()
        x = torch.as_tensor(np.ascontiguousarray(frame, dtype=np.float32))
        return self.models.mimi.encode(x.to(self.models.device).view(1, 1, -1))

    def decode(self, tokens: torch.Tensor, valid: bool, size: int) -> StepOutput:
        if not valid:
            return StepOutput(np.zeros(size, dtype=np.float32))
        self.streams.bind()
        pcm = self.models.mimi.decode(tokens[None, 1:, None])
        audio = pcm.reshape(-1).float().clamp(-1.0, 1.0).cpu().numpy()
        text = piece_text(self.models.tokenizer, int(tokens[0]), self.models.silent_tokens)
        return StepOutput(audio.astype(np.float32, copy=False), text)


class MoshiSession(Session):
    """One stream through a loaded Moshi checkpoint (see the module doc)."""

    def __init__(self, models: MoshiModels, sampling: Sampling, seed: int,
                 running: Running = Running(), language: str | None = None) -> None:
        self.models = models
        self.sampling = sampling
        self.running = running
        self.lm_streams = StreamSet(models.lm, 1)
        self.codec = _Codec(models)
        self.ref_streams = StreamSet(models.mimi_ref, 1)
        self.stepper = LMStepper(models.lm, sampling, 1, models.dep_q)
        self.stepper.reseed(0, seed)
        self.text = TextForcing(models.tokenizer, int(models.lm.text_padding_token_id),
                                language)
        self.frames = 0
        self.forced_frames = 0

    def _force(self, force: Forced) -> None:
        self.ref_streams.bind()
        x = torch.as_tensor(np.ascontiguousarray(force.audio, dtype=np.float32))
        codes = self.models.mimi_ref.encode(x.to(self.models.device).view(1, 1, -1))
        audio = [int(c) for c in codes[0, :self.models.dep_q, 0]]
        self.stepper.force(audio, self.text.next(force.text))
        self.forced_frames += 1

    @torch.no_grad()
    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        with _plain_kernels(self.running.compiled):
            user_codes = self.codec.encode(user)
            if force is not None:
                self._force(force)
            else:
                self.text.clear()
            self.lm_streams.bind()
            out: StepTokens = self.stepper.step(user_codes)
            self.frames += 1
            return self._emit(out, len(user))

    def _emit(self, out: StepTokens, size: int) -> StepOutput:
        """The output of a step: the frame just produced, decoded."""
        return self.codec.decode(out.tokens[0], bool(out.valid[0]), size)

    def snapshot(self) -> Any:
        return {"lm": self.lm_streams.capture(), "codec": self.codec.streams.capture(),
                "reference_codec": self.ref_streams.capture(),
                "tokens": self.stepper.row_state(0), "text_queue": list(self.text.queue),
                "frames": self.frames, "forced_frames": self.forced_frames}

    def restore(self, state: Any) -> None:
        self.lm_streams.restore(state["lm"])
        self.codec.streams.restore(state["codec"])
        self.ref_streams.restore(state["reference_codec"])
        self.stepper.set_row_state(0, state["tokens"])
        self.text.queue = list(state["text_queue"])
        self.frames = int(state["frames"])
        self.forced_frames = int(state["forced_frames"])

    def reseed(self, seed: int) -> None:
        self.stepper.reseed(0, seed)

    def fork_batch(self, states: Sequence[Any], seeds: Sequence[int]) -> BatchSession:
        return MoshiBatch(self.models, self.sampling, states, seeds, self.running)

    def trace(self) -> dict[str, Any]:
        return {"frames": self.frames, "forced_frames": self.forced_frames}


class _RowCodecs:
    """Batch rows' Mimi states, one single-row set per row (bit-identical to single sessions)."""

    def __init__(self, models: MoshiModels, states: Sequence[Any]) -> None:
        self.codecs = [_Codec(models) for _ in states]
        for codec, state in zip(self.codecs, states, strict=True):
            codec.streams.restore(state["codec"])

    def encode(self, users: Sequence[np.ndarray | None]) -> torch.Tensor:
        codes = {row: self.codecs[row].encode(user)
                 for row, user in enumerate(users) if user is not None}
        template = next(iter(codes.values()))
        return torch.cat([codes.get(row, torch.zeros_like(template))
                          for row in range(len(users))])

    def decode(self, out: StepTokens, users: Sequence[np.ndarray | None],
               size: int) -> list[StepOutput | None]:
        return [None if user is None else
                self.codecs[row].decode(out.tokens[row], bool(out.valid[row]), size)
                for row, user in enumerate(users)]


class _SharedCodec:
    """Batch rows' Mimi states as rows of one batch (``batch_codec=1``): one encoder and one
    decoder call per step; the decoder's batched convolutions round differently from a single
    row's (about 1e-7), the codes, hence the tokens, are the same.  Ended rows are fed silence
    and their outputs dropped; rows not yet past the LM's first step decode code 0."""

    def __init__(self, models: MoshiModels, states: Sequence[Any]) -> None:
        self.models = models
        self.streams = StreamSet(models.mimi, len(states))
        for row, state in enumerate(states):
            self.streams.copy_into_row(state["codec"], row)

    def encode(self, users: Sequence[np.ndarray | None]) -> torch.Tensor:
        size = next(len(u) for u in users if u is not None)
        x = np.stack([np.zeros(size, np.float32) if u is None else u for u in users])
        self.streams.bind()
        batch = torch.as_tensor(np.ascontiguousarray(x, dtype=np.float32))
        return self.models.mimi.encode(batch.to(self.models.device)[:, None])

    def decode(self, out: StepTokens, users: Sequence[np.ndarray | None],
               size: int) -> list[StepOutput | None]:
        codes = torch.where(out.valid[:, None], out.tokens[:, 1:], 0)
        self.streams.bind()
        pcm = self.models.mimi.decode(codes[:, :, None]).float().clamp(-1.0, 1.0).cpu().numpy()
        outputs: list[StepOutput | None] = []
        for row, user in enumerate(users):
            if user is None:
                outputs.append(None)
            elif not bool(out.valid[row]):
                outputs.append(StepOutput(np.zeros(size, dtype=np.float32)))
            else:
                text = piece_text(self.models.tokenizer, int(out.tokens[row, 0]),
                                  self.models.silent_tokens)
                outputs.append(StepOutput(pcm[row].reshape(-1).astype(np.float32), text))
        return outputs


class MoshiBatch(BatchSession):
    """Forks of a :class:`MoshiSession` stepping together, one LM batch row each."""

    def __init__(self, models: MoshiModels, sampling: Sampling, states: Sequence[Any],
                 seeds: Sequence[int], running: Running = Running()) -> None:
        if len(states) != len(seeds) or not states:
            raise ValueError("fork_batch needs one seed per state, and at least one state")
        self.models = models
        self.running = running
        rows = len(states)
        self.lm_streams = StreamSet(models.lm, rows)
        self.stepper = LMStepper(models.lm, sampling, rows, models.dep_q)
        codec = _SharedCodec if running.batch_codec else _RowCodecs
        self.codec: _RowCodecs | _SharedCodec = codec(models, states)
        self.frames = [int(s["frames"]) for s in states]
        self.forced_frames = [int(s["forced_frames"]) for s in states]
        for row, (state, seed) in enumerate(zip(states, seeds, strict=True)):
            self.lm_streams.copy_into_row(state["lm"], row)
            self.stepper.set_row_state(row, state["tokens"])
            self.stepper.reseed(row, seed)

    @property
    def size(self) -> int:
        return len(self.frames)

    @torch.no_grad()
    def step(self, users: Sequence[np.ndarray | None]) -> list[StepOutput | None]:
        if len(users) != self.size:
            raise ValueError(f"a batch of {self.size} rows was stepped with {len(users)} frames")
        size = next((len(u) for u in users if u is not None), 0)
        if not size:
            return [None] * self.size
        with _plain_kernels(self.running.compiled):
            batch = self.codec.encode(users)
            self.lm_streams.bind()
            out = self.stepper.step(batch)
            for row, user in enumerate(users):
                self.frames[row] += user is not None
            return self._emit(out, users, size)

    def _emit(self, out: StepTokens, users: Sequence[np.ndarray | None],
              size: int) -> list[StepOutput | None]:
        """The rows' outputs of a step: the frames just produced, decoded."""
        return self.codec.decode(out, users, size)

    def trace(self, row: int) -> dict[str, Any]:
        return {"frames": self.frames[row], "forced_frames": self.forced_frames[row]}
