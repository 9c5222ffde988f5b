"""Rounds without a judge: the user channel's TURNs from the annotator, deterministic.

The events are the dialogue's own (a dataset's ``{split}.jsonl``), or, when it has no TURN
on either channel but has words, the annotator's events derived from its words
(:func:`duplexeval.events.annotate_spans`, the rules of ``duplexeval annotate``).

A round is a user TURN, extended over the user TURNs that follow it while the user keeps the
floor, i.e. joined by a TURN_HOLD on the user channel (a pause with no TURN of the other
speaker in between).  A user BC is never a round, and the other speaker's BCs inside a user
turn do not split it; a TURN of the other speaker does::

    user (ch 0)  |==TURN==| |==TURN==|      |BC|    |==TURN==|
    other (ch 1)      |BC|          |====TURN====|
                          ^ TURN_HOLD            ^ TURN_SHIFT
    rounds       |=====round 0======|               |=round 1=|

No vote is taken: the rounds' ``votes`` are ``None``.
"""

from __future__ import annotations

from duplexeval.data._dialogue import Dialogue
from duplexeval.events import AnnotationRules, Event, EventKind, annotate_spans
from duplexeval.rounds._consensus import Round, resolve_overlaps
from duplexeval.timeline import Span, approx_eq

__all__ = ["annotator_events", "fallback_rounds"]


def annotator_events(dialogue: Dialogue,
                     rules: AnnotationRules = AnnotationRules()) -> tuple[Event, ...]:
    """The dialogue's events, or its words' events when it has no TURN or BC."""
    has_ipus = any(e.kind in (EventKind.TURN, EventKind.BC) for e in dialogue.events)
    if has_ipus or not dialogue.words:
        return dialogue.events
    spans: dict[int, list[Span]] = {0: [], 1: []}
    for word in dialogue.words:
        if word.end >= word.start:
            spans.setdefault(word.channel, []).append(word.span)
    return tuple(annotate_spans(spans, rules))


def fallback_rounds(dialogue: Dialogue, user_channel: int, span: Span,
                    rules: AnnotationRules = AnnotationRules()) -> list[Round]:
    """The user rounds from the annotator (see the module docstring), inside ``span``."""
    events = annotator_events(dialogue, rules)
    turns = sorted(Span(e.start, e.end) for e in events
                    if e.kind == EventKind.TURN and e.channel == user_channel
                    and e.start <= e.end)
    holds = [e.end for e in events
             if e.kind == EventKind.TURN_HOLD and e.channel == user_channel]
    rounds: list[Round] = []
    for turn in turns:
        held = any(approx_eq(t, turn.start) for t in holds)
        if rounds and held:
            last = rounds[-1]
            rounds[-1] = Round(last.start, max(last.end, turn.end))
        else:
            rounds.append(Round(turn.start, turn.end))
    return resolve_overlaps(rounds, span)
