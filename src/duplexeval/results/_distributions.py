"""The distributional-realism section of a results file (``realism`` variant): per timing
feature, the system's and the reference's values, and three distances between them with their
bootstrap intervals (:mod:`duplexeval.metrics._distributions` computes them)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Distance", "DistributionResults", "FeatureComparison"]


class Distance(BaseModel):
    """One distance between the two distributions, with its 95 % percentile-bootstrap interval
    over dialogues (``None`` where a side has no values)."""

    model_config = ConfigDict(extra="forbid")
    value: float | None
    ci95_low: float | None
    ci95_high: float | None
    resamples: int
    """Resamples whose both sides had values (those the interval is made of)."""


class FeatureComparison(BaseModel):
    """One feature (``fto``, ``pause``, ``overlap``, ``backchannel_rate``, ``turn_length``):
    the pooled values of each side and the distances."""

    model_config = ConfigDict(extra="forbid")
    feature: str
    unit: str
    system: list[float]
    reference: list[float]
    ks: Distance
    """The two-sample Kolmogorov-Smirnov statistic (``scipy.stats.ks_2samp``), in [0, 1]."""
    wasserstein: Distance
    """The first Wasserstein (earth mover's) distance (``scipy.stats.wasserstein_distance``),
    in the feature's unit."""
    js: Distance
    """The Jensen-Shannon divergence (base 2, in [0, 1]) of the two histograms over the
    feature's fixed bins (``bins``; values outside them fall in the end bins)."""
    bins: list[float] = Field(default_factory=list)
    """The bin edges of the JS histograms (also the plot's)."""


class DistributionResults(BaseModel):
    """Every feature's comparison, with how it was made."""

    model_config = ConfigDict(extra="forbid")
    reference: str
    """What the reference side is (the dialogue's reference system channel, analysed as the
    system channel)."""
    dialogues: int
    """Dialogues resampled by the bootstrap."""
    resamples: int
    seed: int
    features: list[FeatureComparison]
