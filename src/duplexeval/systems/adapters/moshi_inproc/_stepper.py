"""Moshi's generation loop over moshi's ``LMModel``, with teacher forcing and per-row generators.

This plays the role of moshi's ``LMGen`` (same token cache, delays, initial tokens, sampling
and defaults; a test checks it produces LMGen's tokens) but keeps what a benchmark needs in
its own hands: the reference tokens are written into the token cache at their delayed
positions, every batch row draws from its own ``torch.Generator`` (so a row of a batch samples
exactly what a single session would), and every row has its own offset (forks taken at
different frames step together).

Token cache: ``[B, K, CT]`` with ``K = 1 + n_q`` streams (text, ``dep_q`` system audio
codebooks, ``n_q - dep_q`` user codebooks) and ``CT = max_delay + 2`` ring positions.  Frame
``f`` of stream ``k`` (delay ``d_k``) lives at position ``f + d_k``; step ``t`` reads position
``t`` and writes what it samples at ``t + 1``.  For Moshi (text and semantic codebooks delay 0,
acoustic codebooks delay 1, ``max_delay = D = 1``)::

    position:                  t-1        t          t+1
    text, system semantic      .      [read at t]  <- sampled at t (frame t+1)
    system acoustic            .      [read at t]  <- sampled at t (frame t)
    user frame t, semantic     .      <- written, read at t
    user frame t, acoustic     .         .        <- written (read at t+1)

    step t returns frame t+1-D of the text and system audio (positions t+1-D+d_k),
    nothing while t+1 <= D: for Moshi, frame t at step t from step 1 on.

Teacher forcing of frame ``t`` (batch of one row): the reference system codes of frame ``t``
go to positions ``t + d_k``, the reference text token to position ``t``.  Delay-0 entries are
written before the read of step ``t``; the others wait in ``pending`` until the step that
would otherwise overwrite them has written its sample (after step ``t + d_k - 1``), so the
model reads, and the returned frame decodes, the reference.  The model's own samples for
positions that are not forced (the semantic codes of frame ``t + 1``, sampled at the last
forced step) stay: they are its continuation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from moshi.utils.sampling import multinomial

__all__ = ["LMStepper", "Sampling", "StepTokens"]


@dataclass(frozen=True)
class Sampling:
    """moshi's sampling settings (``LMGen`` defaults)."""

    use_sampling: bool = True
    temp: float = 0.8
    temp_text: float = 0.7
    top_k: int = 250
    top_k_text: int = 25


@dataclass(frozen=True)
class StepTokens:
    """One step's output: ``tokens [B, 1 + dep_q]`` (text, system audio) of the output frame
    and ``valid [B]`` (false while a row has not produced its first frame)."""

    tokens: torch.Tensor
    valid: torch.Tensor


def sample_row(logits: torch.Tensor, use_sampling: bool, temp: float, top_k: int,
               generator: torch.Generator) -> torch.Tensor:
    """One row's token from logits ``[..., V]`` as moshi's ``sample_token`` draws it, from
    ``generator`` instead of the global one."""
    logits = logits.float()
    if not use_sampling or temp <= 0.0:
        return torch.argmax(logits, dim=-1, keepdim=True)[..., 0]
    probs = torch.softmax(logits / temp, dim=-1)
    if top_k > 0:
        probs, indices = torch.topk(probs, min(top_k, probs.shape[-1]), dim=-1)
        choice = multinomial(probs, num_samples=1, generator=generator)
        return indices.gather(-1, choice)[..., 0]
    return multinomial(probs, num_samples=1, generator=generator)[..., 0]


class LMStepper:
    """The token state of ``batch`` rows and the step that advances them (see module doc).

    The LM's own streaming states (KV caches) are not held here: the caller binds them.
    ``own`` is the number of system audio codebooks the loop samples (default ``lm.dep_q``);
    a depformer that also predicts the user's codebooks (PersonaPlex, ``dep_q = n_q``) is run
    for the first ``own`` only: the user's are always given, and the depformer's later
    codebooks cannot change its earlier ones."""

    def __init__(self, lm: Any, sampling: Sampling, batch: int, own: int | None = None) -> None:
        self.lm = lm
        self.sampling = sampling
        self.batch = batch
        device = lm.device
        self.delays = torch.tensor(lm.delays, dtype=torch.long, device=device)
        self.max_delay = int(max(lm.delays))
        if lm.delays[0] != 0:
            raise ValueError(f"text delay {lm.delays[0]} is not supported (Moshi's is 0)")
        self.dep_q = int(lm.dep_q if own is None else own)
        if not 0 < self.dep_q <= lm.dep_q:
            raise ValueError(f"{self.dep_q} system codebooks: the depformer predicts {lm.dep_q}")
        self.ct = self.max_delay + 2
        k = int(lm.num_codebooks)
        self.cache = torch.full((batch, k, self.ct), lm.ungenerated_token_id,
                                dtype=torch.long, device=device)
        self.offsets = torch.zeros(batch, dtype=torch.long, device=device)
        initial = torch.full((1, k, 1), lm.initial_token_id, dtype=torch.long, device=device)
        initial[:, 0] = lm.text_initial_token_id
        self.initial = initial
        self.pending: list[list[tuple[int, int, int]]] = [[] for _ in range(batch)]
        """Per row: (position, stream, token) forced writes not yet due."""
        self.generators = [torch.Generator(device=device) for _ in range(batch)]

    # -- state ------------------------------------------------------------------------------
    def row_state(self, row: int) -> dict[str, Any]:
        """Plain-data copy of one row: cache, offset, pending writes, generator state."""
        return {"cache": self.cache[row].clone(), "offset": int(self.offsets[row]),
                "pending": list(self.pending[row]),
                "generator": self.generators[row].get_state()}

    def set_row_state(self, row: int, state: dict[str, Any]) -> None:
        self.cache[row].copy_(state["cache"])
        self.offsets[row] = state["offset"]
        self.pending[row] = list(state["pending"])
        self.generators[row].set_state(state["generator"])

    def reseed(self, row: int, seed: int) -> None:
        self.generators[row].manual_seed(seed & 0xFFFF_FFFF_FFFF_FFFF)

    # -- stepping ---------------------------------------------------------------------------
    def _write(self, row: int, position: int, stream: int, token: int) -> None:
        self.cache[row, stream, position % self.ct] = token

    def _apply_due(self) -> None:
        for row, entries in enumerate(self.pending):
            if not entries:
                continue
            offset = int(self.offsets[row])
            keep = []
            for position, stream, token in entries:
                if position == offset:
                    self._write(row, position, stream, token)
                elif position > offset:
                    keep.append((position, stream, token))
            self.pending[row] = keep

    def force(self, audio: list[int] | None, text: int | None) -> None:
        """Teacher-force the frame of the coming step (one row): the reference system codes
        ``audio`` (``dep_q`` of them) and text token ``text``."""
        if self.batch != 1:
            raise ValueError("teacher forcing is for a single row")
        t = int(self.offsets[0])
        if text is not None:
            self._write(0, t, 0, text)
        for q, code in enumerate(audio or []):
            stream = 1 + q
            delay = int(self.delays[stream])
            if delay == 0:
                self._write(0, t, stream, code)
            else:
                self.pending[0].append((t + delay, stream, code))

    def _input(self, user_codes: torch.Tensor) -> torch.Tensor:
        n_user = self.lm.num_codebooks - 1 - self.dep_q
        user = user_codes[:, :n_user].to(self.cache.device)
        delays = self.delays[1 + self.dep_q:]
        where = ((self.offsets[:, None] + delays[None, :]) % self.ct)[:, :, None]
        self.cache[:, 1 + self.dep_q:].scatter_(2, where, user)
        self._apply_due()
        positions = (self.offsets % self.ct).view(-1, 1, 1).expand(-1, self.cache.shape[1], 1)
        read = self.cache.gather(2, positions)
        is_init = self.offsets.view(-1, 1, 1) <= self.delays.view(1, -1, 1)
        return torch.where(is_init, self.initial, read)

    def _sample_rows(self, logits: torch.Tensor, temp: float, top_k: int) -> torch.Tensor:
        s = self.sampling
        return torch.cat([sample_row(logits[i:i + 1], s.use_sampling, temp, top_k,
                                     self.generators[i]) for i in range(self.batch)])

    def _depformer(self, text: torch.Tensor, transformer_out: torch.Tensor) -> torch.Tensor:
        lm, s = self.lm, self.sampling
        tokens = []
        previous = text
        with lm.depformer.streaming(self.batch):
            for q in range(self.dep_q):
                logits = lm.forward_depformer(q, previous[:, None, None], transformer_out)
                previous = self._sample_rows(logits, s.temp, s.top_k).reshape(self.batch)
                tokens.append(previous)
        return torch.stack(tokens, dim=1)

    def place(self, position: int, stream: int, token: int) -> None:
        """Write one token at a position of the cache (one row): for prompts that give whole
        positions rather than frames."""
        if self.batch != 1:
            raise ValueError("placing tokens is for a single row")
        self._write(0, position, stream, token)

    @torch.no_grad()
    def prefill(self, user_codes: torch.Tensor | None = None,
                embeddings: torch.Tensor | None = None) -> None:
        """Advance every row one step without sampling, for a frame whose every stream is
        given (a prompt frame: ``force`` it, then ``prefill`` with its user codes): the LM's
        streaming state takes the position, nothing is drawn, and the positions that a step
        would sample are left to the next frame's forced writes.  ``embeddings [B, 1, dim]``
        replace the embedded tokens of the position (a cached voice prompt)."""
        if embeddings is None:
            if user_codes is None:
                raise ValueError("prefill needs the user codes or the embeddings of the position")
            self.lm.forward_text(self._input(user_codes))
        else:
            self.lm.transformer(embeddings.to(self.cache.device))
        self.offsets += 1
        self._apply_due()

    @torch.no_grad()
    def step(self, user_codes: torch.Tensor) -> StepTokens:
        """One step of every row: ``user_codes [B, n_user, 1]`` (Mimi codes of the user frame;
        extra codebooks are ignored)."""
        model_input = self._input(user_codes)
        transformer_out, text_logits = self.lm.forward_text(model_input)
        text = self._sample_rows(text_logits, self.sampling.temp_text,
                                 self.sampling.top_k_text).reshape(self.batch)
        audio = self._depformer(text, transformer_out)
        self.offsets += 1
        where = (self.offsets % self.ct).view(-1, 1, 1)
        self.cache[:, :1].scatter_(2, where, text.view(-1, 1, 1))
        self.cache[:, 1:1 + self.dep_q].scatter_(
            2, where.expand(-1, self.dep_q, 1), audio[:, :, None])
        self._apply_due()
        gen_delays = self.delays[:1 + self.dep_q]
        index = ((self.offsets[:, None] - self.max_delay + gen_delays[None, :]) % self.ct)
        tokens = self.cache[:, :1 + self.dep_q].gather(2, index[:, :, None])[:, :, 0]
        return StepTokens(tokens, self.offsets > self.max_delay)
