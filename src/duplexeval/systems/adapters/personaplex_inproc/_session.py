"""PersonaPlex sessions: a Moshi session (:mod:`..moshi_inproc.session`) that starts after the
prompt phase (:mod:`.prompt`) and returns each frame with PersonaPlex's output delay.

A session restores the prompt state (all prompt frames but the last), steps the last prompt
frame with its own generator (the model's first sampled tokens), then steps the dialogue.
Its Mimi states start fresh, as PersonaPlex resets its Mimi after the prompt.  With
``output_delay`` 1 (PersonaPlex's ``LMGen``), the frame returned with user frame ``t`` is the
model's frame ``t - 1``; the first returned frame is the last prompt frame (silence codes)::

    call           0            1            2          ...
    user frame     u0           u1           u2
    model frame    m0           m1           m2         (m_t: the text and system audio
    returned       m(-1)        m0           m1          sampled at the user's frame t)

Under teacher forcing the returned frame decodes the reference of the frame before.  Snapshots
and batch rows carry the frame being held, so restores and forks stay exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from duplexeval.systems._base import BatchSession, StepOutput
from duplexeval.systems.adapters.moshi_inproc._loading import MoshiModels
from duplexeval.systems.adapters.moshi_inproc._session import (
    MoshiBatch,
    MoshiSession,
    Running,
    _plain_kernels,
)
from duplexeval.systems.adapters.moshi_inproc._stepper import Sampling, StepTokens
from duplexeval.systems.adapters.personaplex_inproc._prompt import PromptState, user_tensor

__all__ = ["PersonaPlexBatch", "PersonaPlexSession"]


class PersonaPlexSession(MoshiSession):
    """One stream through PersonaPlex after its prompt (see the module doc)."""

    def __init__(self, models: MoshiModels, sampling: Sampling, seed: int, prompt: PromptState,
                 output_delay: int = 1, running: Running | None = None,
                 language: str | None = None) -> None:
        running = running or Running()
        super().__init__(models, sampling, seed, running, language)
        self.prompt = prompt
        self.output_delay = output_delay
        self.lm_streams.restore(prompt.lm)
        self.stepper.set_row_state(0, prompt.tokens)
        self.stepper.reseed(0, seed)
        with torch.no_grad(), _plain_kernels(running.compiled):
            self.lm_streams.bind()
            self.stepper.force(list(prompt.last.system), prompt.last.text)
            out = self.stepper.step(user_tensor(prompt.last, models.device))
        self.held = out.tokens[0].clone()
        """The frame the next step returns (``output_delay`` 1)."""

    def _emit(self, out: StepTokens, size: int) -> StepOutput:
        if not self.output_delay:
            return super()._emit(out, size)
        shown, self.held = self.held, out.tokens[0].clone()
        return self.codec.decode(shown, True, size)

    def snapshot(self) -> Any:
        return {**super().snapshot(), "held": self.held.clone()}

    def restore(self, state: Any) -> None:
        super().restore(state)
        self.held = state["held"].clone()

    def fork_batch(self, states: Sequence[Any], seeds: Sequence[int]) -> BatchSession:
        return PersonaPlexBatch(self.models, self.sampling, states, seeds, self.running,
                                self.prompt, self.output_delay)

    def trace(self) -> dict[str, Any]:
        return {**super().trace(), **_prompt_trace(self.prompt, self.output_delay)}


def _prompt_trace(prompt: PromptState, output_delay: int) -> dict[str, Any]:
    return {"prompt_frames": prompt.frames, "voice_prompt": prompt.voice,
            "text_prompt": prompt.text, "output_delay": output_delay}


class PersonaPlexBatch(MoshiBatch):
    """Forks of a :class:`PersonaPlexSession` stepping together (each row holds its frame)."""

    def __init__(self, models: MoshiModels, sampling: Sampling, states: Sequence[Any],
                 seeds: Sequence[int], running: Running, prompt: PromptState,
                 output_delay: int) -> None:
        super().__init__(models, sampling, states, seeds, running)
        self.prompt = prompt
        self.output_delay = output_delay
        self.held = torch.stack([s["held"] for s in states]).to(self.stepper.cache.device)

    def _emit(self, out: StepTokens, users: Sequence[np.ndarray | None],
              size: int) -> list[StepOutput | None]:
        if not self.output_delay:
            return super()._emit(out, users, size)
        shown = StepTokens(self.held, torch.ones_like(out.valid))
        self.held = out.tokens.clone()
        return self.codec.decode(shown, users, size)

    def trace(self, row: int) -> dict[str, Any]:
        return {**super().trace(row), **_prompt_trace(self.prompt, self.output_delay)}
