"""The ``mtr`` part of a dialogue spec: an MTR-DuplexBench multi-round dialogue.

A spec with ``mtr`` is laid out in rounds: an optional opening turn by the system, then per
round one user turn and one reference system reply (the user is the speaker on channel 0)::

    turns   [opener]  user 1  reply 1  user 2  reply 2  ...  user 10  reply 10
    round              |---- 1 ----|   |---- 2 ----|          |---- 10 ----|

Each round declares its features, and the turns must carry exactly those:

* ``interruption``: the turn before the user's (the previous reply, or the opener in round
  1) has ``interrupted_after_word``: the user barges in on the system's reply;
* ``pause``: the user turn has a pause (the user stops mid-turn);
* ``backchannel``: the reply has backchannels (the user's, while the system replies);
* ``background``: a ``background`` entry on the user's channel is placed against the reply
  (``at_turn`` = the reply's index): another voice, quiet, while the system replies;
* ``smooth``: none of these (a plain turn; listed alone).

``item`` and ``category`` name the instruction-following question or the safety request of
the round (the reference answer is the user turn's ``answer``).  Where the synthesizer puts it
all is recorded in the dataset record (:mod:`duplexeval.data._mtr_record`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Feature", "MtrRound", "MtrSpec"]

Feature = Literal["smooth", "interruption", "pause", "background", "backchannel"]


class MtrRound(BaseModel):
    """One round: its features and, for the item sets, the item's id and category."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    features: tuple[Feature, ...] = Field(min_length=1)
    item: str | None = None
    """Instruction following / safety: the question's or request's id."""
    category: str | None = None
    """Safety: the harm category."""


class MtrSpec(BaseModel):
    """The dialogue's MTR group, its label and its rounds (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: Literal["feature", "combination", "instruction_following", "safety"]
    label: str = Field(min_length=1)
    rounds: tuple[MtrRound, ...] = Field(min_length=1)
