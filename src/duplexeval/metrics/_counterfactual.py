"""The effect of the user's act: each event against its counterfactual twin, paired.

A plan made with ``counterfactual`` (:mod:`duplexeval.plan._samples`) follows every BC and
BARGE_IN sample with its twin, whose user channel is muted from the act's onset; the twin's
metadata names its original (``counterfactual_of``).  Both are scored by the same variant; the
twins stay out of every other output (events, aggregates, ``per_event.jsonl``).

For each (event type, dimension, metric) with a number on both sides of at least one pair,
``d_i = with_i - without_i`` (the original's value minus its twin's), and the effect is the mean
of ``d`` with its 95 % paired-bootstrap interval and sign-flip p-value
(:func:`duplexeval.metrics._paired.paired_difference`, seed 0).  With ``turnbench`` on a barge-in
(the system speaking at the onset in both, since they share the prefix)::

    user (original)   ....|uuuuuuuu|             the act
    user (twin)       ....|                      muted from the onset
    system, original  SSSSSSS|                   stops 0.2 s in:  missed_stop 0
    system, twin      SSSSSSSSSSSSSSSSSS         talks on:        missed_stop 1
                                                 effect -1: the act makes it stop

A system that stops anyway (its turn ends where it would without the user) has an effect of 0
on every pair; one that stops for the act has a negative effect on ``missed_stop`` (and a
positive one on ``false_stop`` for a backchannel it yields to).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from duplexeval.metrics._base import EventScore
from duplexeval.metrics._paired import paired_difference
from duplexeval.results._counterfactual import PairedEffect

__all__ = ["TWIN_KEY", "is_twin", "paired_effects"]

TWIN_KEY = "counterfactual_of"
"""The metadata field of a twin: its original's event id."""


def is_twin(score: EventScore) -> bool:
    """Whether ``score`` is of a counterfactual twin."""
    return isinstance(score.event.metadata.get(TWIN_KEY), str)


def _numbers(score: EventScore) -> dict[tuple[str, str], float]:
    out = {}
    for dim in score.dimensions:
        for metric, value in {**dim.values, **dim.extras}.items():
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, (int, float)):
                out[(dim.dimension, metric)] = float(value)
    return out


def paired_effects(originals: Sequence[EventScore],
                   twins: Sequence[EventScore]) -> list[PairedEffect]:
    """The effect of the act per (event type, dimension, metric), sorted by that key (see the
    module docstring); twins whose original was not scored are left out."""
    by_id = {s.event.event_id: s for s in originals}
    pairs: dict[tuple[str, str, str], tuple[list[float], list[float]]] = defaultdict(
        lambda: ([], []))
    for twin in twins:
        original = by_id.get(str(twin.event.metadata.get(TWIN_KEY)))
        if original is None:
            continue
        acted, silent = _numbers(original), _numbers(twin)
        for key in sorted(set(acted) & set(silent)):
            a, b = pairs[(original.event.event_type, *key)]
            a.append(silent[key])
            b.append(acted[key])
    out = []
    for (event_type, dimension, metric), (without, with_act) in sorted(pairs.items()):
        d = paired_difference(without, with_act)
        out.append(PairedEffect(event_type=event_type, dimension=dimension, metric=metric,
                                n=d.n, mean_with_act=d.mean_b, mean_without_act=d.mean_a,
                                effect=d.diff, ci95_low=d.ci_low, ci95_high=d.ci_high,
                                p_value=d.p_value))
    return out
