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
all is recorded in the dataset record (:mod:`duplexeval.data.mtr_record`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from duplexeval.synth.spec import DialogueSpec, Turn

__all__ = ["MtrRound", "MtrSpec", "mtr_layout", "mtr_problem"]

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


def mtr_layout(spec: DialogueSpec) -> list[tuple[int | None, int, int]]:
    """Per round, the indices of (the turn before the user's or ``None``, the user turn, the
    reply), from the layout in the module docstring (its shape is checked by
    :func:`mtr_problem`)."""
    user = next(s.id for s in spec.speakers if s.channel == 0)
    first = 0 if spec.turns[0].speaker == user else 1
    assert spec.mtr is not None
    return [(first + 2 * k - 1 if first + 2 * k > 0 else None, first + 2 * k, first + 2 * k + 1)
            for k in range(len(spec.mtr.rounds))]


def _present(spec: DialogueSpec, prev: Turn | None, user: Turn, reply_index: int) -> set[str]:
    reply = spec.turns[reply_index]
    found = set()
    if prev is not None and prev.interruption() is not None:
        found.add("interruption")
    if user.all_pauses():
        found.add("pause")
    if reply.backchannels:
        found.add("backchannel")
    if any(b.at_turn == reply_index and b.channel == 0 for b in spec.background):
        found.add("background")
    return found


def mtr_problem(spec: DialogueSpec) -> str | None:
    """What is wrong with the layout of an MTR dialogue (``None``: nothing)."""
    mtr = spec.mtr
    assert mtr is not None
    user = next(s.id for s in spec.speakers if s.channel == 0)
    first = 0 if spec.turns[0].speaker == user else 1
    if len(spec.turns) != first + 2 * len(mtr.rounds):
        return (f"mtr: {len(mtr.rounds)} rounds need {first + 2 * len(mtr.rounds)} turns "
                f"(optional opener, then user and reply per round), got {len(spec.turns)}")
    placed = {i for _, _, i in mtr_layout(spec)}
    if any(b.channel != 0 or b.at_turn not in placed for b in spec.background):
        return "mtr: background speech goes on the user channel, against a reply"
    for k, ((p, u, r), declared) in enumerate(zip(mtr_layout(spec), mtr.rounds, strict=True),
                                              start=1):
        user_turn, reply = spec.turns[u], spec.turns[r]
        if user_turn.speaker != user or reply.speaker == user:
            return f"mtr round {k}: turns {u} and {r} must be by the user and the system"
        if user_turn.backchannels or user_turn.interruption() is not None:
            return f"mtr round {k}: the user turn is neither backchannelled nor interrupted"
        present = _present(spec, spec.turns[p] if p is not None else None, user_turn, r)
        want = set(declared.features) - {"smooth"}
        if want != present or ("smooth" in declared.features) != (not present):
            return (f"mtr round {k}: declares {sorted(declared.features)} but the turns have "
                    f"{sorted(present) or ['smooth']}")
        if mtr.group == "instruction_following" and not (declared.item and user_turn.answer):
            return f"mtr round {k}: an instruction-following round needs an item and an answer"
        if mtr.group == "safety" and not (declared.item and declared.category):
            return f"mtr round {k}: a safety round needs an item and a category"
    return None
