"""The counterfactual section of a results file: the paired effect of the user's act on each
metric of the events that have a counterfactual twin (:mod:`duplexeval.metrics._counterfactual`
computes it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["PairedEffect"]


class PairedEffect(BaseModel):
    """One metric of one event kind over its ``n`` (event, twin) pairs: the means with and
    without the act, their mean paired difference (with minus without: the effect of the act),
    its 95 % paired-bootstrap interval and the sign-flip permutation p-value."""

    model_config = ConfigDict(extra="forbid")
    event_type: str
    dimension: str
    metric: str
    n: int
    mean_with_act: float
    mean_without_act: float
    effect: float
    ci95_low: float
    ci95_high: float
    p_value: float
