"""The round of a TURN_SHIFT event in its dialogue, for round-by-round curves (MTR-style).

Rounds are, in this order of precedence: the rounds of a ``duplexeval segment`` output file;
the rounds a multi-round suite annotates (the record's ``mtr`` field,
:mod:`duplexeval.data._mtr_record`: each round's ``user_span``); the user rounds of
:mod:`duplexeval.rounds`'s deterministic fallback (the user channel's TURNs joined across the
user's own holds).  A TURN_SHIFT event starts where its user turn ends, so its round is the one
whose user span contains the event start (ends inclusive, 1e-6 s tolerance); rounds are numbered
from 1 in time order::

    user     |== round 1 ==|          |== round 2 ==|
    system                 ^SHIFT -> 1 ~~~~~~~      ^SHIFT -> 2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from duplexeval.data._dialogue import Dialogue
from duplexeval.rounds._consensus import Round
from duplexeval.rounds._fallback import fallback_rounds
from duplexeval.timeline import TOL, Span

__all__ = ["RoundFinder", "annotated_rounds", "dialogue_label"]


class RoundFinder:
    """Round numbers of events, from given rounds per (dialogue id, user channel) or the
    fallback segmentation of the dialogues (computed once each)."""

    def __init__(self, given: Mapping[tuple[str, int], Sequence[Round]] | None = None) -> None:
        self._rounds: dict[tuple[str, int], list[Round]] = {
            k: sorted(v, key=lambda r: r.start) for k, v in (given or {}).items()}

    def rounds(self, dialogue: Dialogue, user_channel: int) -> list[Round]:
        key = (dialogue.id, user_channel)
        if key not in self._rounds and annotated_rounds(dialogue, user_channel):
            self._rounds[key] = [Round(float(r["user_span"][0]), float(r["user_span"][1]))
                                 for r in annotated_rounds(dialogue, user_channel)]
        if key not in self._rounds:
            words_end = max((w.end for w in dialogue.words or ()), default=0.0)
            end = max([words_end, *(e.end for e in dialogue.events), *(e.start for e in
                                                                      dialogue.events)])
            self._rounds[key] = fallback_rounds(dialogue, user_channel, Span(0.0, end))
        return self._rounds[key]

    def round_of(self, dialogue: Dialogue | None, user_channel: int,
                 event_start: float) -> int | None:
        """The 1-based round whose user span contains ``event_start`` (``None``: none does)."""
        if dialogue is None:
            return None
        for k, r in enumerate(self.rounds(dialogue, user_channel), start=1):
            if r.start - TOL <= event_start <= r.end + TOL:
                return k
        return None


def annotated_rounds(dialogue: Dialogue, user_channel: int) -> list[dict[str, Any]]:
    """The rounds a suite annotates for ``user_channel`` (the ``mtr`` record field), in round
    order; empty when there are none."""
    record = dialogue.extra.get("mtr")
    if not isinstance(record, Mapping) or record.get("user_channel", 0) != user_channel:
        return []
    rounds = record.get("rounds")
    if not isinstance(rounds, list):
        return []
    return sorted((dict(r) for r in rounds if isinstance(r, Mapping) and "user_span" in r),
                  key=lambda r: int(r.get("round", 0)))


def dialogue_label(dialogue: Dialogue) -> str | None:
    """What a suite says its dialogue exercises (the ``mtr`` record's ``label``: one feature,
    ``smooth``, ``interruption``, ``pause``, ``background`` or ``backchannel``; a combination,
    ``S``, ``S+I``, ``S+I+P`` or ``S+I+P+B``; ``if`` or ``safety``), or ``None``."""
    record = dialogue.extra.get("mtr")
    label = record.get("label") if isinstance(record, Mapping) else None
    return label if isinstance(label, str) and label else None
