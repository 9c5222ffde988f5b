"""The distance between the system's and the reference's timing distributions, with bootstrap
intervals over dialogues (the ``realism`` variant's run-level section).

Conventions: each side's distribution of a feature (:mod:`~.timing.realism_features`) pools
its values over every scored timeline (sample) of the run.  Three distances per feature:

* **KS**: the two-sample Kolmogorov-Smirnov statistic ``sup_t |F_sys(t) - F_ref(t)|``
  (``scipy.stats.ks_2samp(...).statistic``), in [0, 1];
* **Wasserstein** (earth mover's distance): ``∫ |F_sys(t) - F_ref(t)| dt``
  (``scipy.stats.wasserstein_distance``), in the feature's unit (seconds, or per minute);
* **JS**: the Jensen-Shannon divergence, base 2, in [0, 1], of the two histograms over the
  feature's fixed bins (:data:`BINS`; a value outside them counts in the nearest end bin):
  ``scipy.spatial.distance.jensenshannon(p, q, base=2) ** 2``.

A distance is ``None`` when either side has no value.  Its 95 % interval is the percentile
bootstrap over **dialogues** (timelines of one dialogue are not independent): each of
:data:`RESAMPLES` resamples draws the run's dialogues with replacement
(:func:`duplexeval.metrics._stats.resample_indices`, seed :data:`~duplexeval.metrics._stats.SEED`),
pools both sides' values of the drawn dialogues (the same draw for both: the comparison is
paired) and computes the distance; resamples where a side is empty are left out and the count
of those used is recorded.  For the reference system (the human against itself) every distance
is 0 up to the analysis of resampled audio.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats as scipy_stats
from scipy.spatial.distance import jensenshannon

from duplexeval.metrics._stats import SEED, percentile_interval, resample_indices
from duplexeval.metrics.timing._realism_features import FEATURES
from duplexeval.results._distributions import Distance, DistributionResults, FeatureComparison

__all__ = ["BINS", "RESAMPLES", "UNITS", "compare_distributions", "js_divergence"]

RESAMPLES = 1000
"""Bootstrap resamples of each distance's interval."""

BINS: dict[str, np.ndarray] = {
    "fto": np.linspace(-3.0, 3.0, 61),
    "pause": np.linspace(0.0, 3.0, 31),
    "overlap": np.linspace(0.0, 3.0, 31),
    "backchannel_rate": np.linspace(0.0, 30.0, 31),
    "turn_length": np.linspace(0.0, 15.0, 31),
}
"""The JS histograms' bin edges per feature (0.1 s bins for offsets, pauses and overlaps, 0.5 s
for turns, 1 per minute for the backchannel rate)."""

UNITS: dict[str, str] = {"fto": "s", "pause": "s", "overlap": "s",
                         "backchannel_rate": "per minute of user speech", "turn_length": "s"}

Sides = Mapping[str, Sequence[Mapping[str, Sequence[float]]]]
"""Per dialogue id, that dialogue's timelines, each a feature -> values mapping."""


def js_divergence(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                  edges: np.ndarray) -> float:
    """The Jensen-Shannon divergence (base 2) of the histograms of ``a`` and ``b`` over
    ``edges``, values clipped into the end bins (see the module docstring)."""
    lo, hi = float(edges[0]), float(edges[-1])
    p, _ = np.histogram(np.clip(np.asarray(a, float), lo, hi), bins=edges)
    q, _ = np.histogram(np.clip(np.asarray(b, float), lo, hi), bins=edges)
    value = float(jensenshannon(p / p.sum(), q / q.sum(), base=2)) ** 2
    return min(1.0, max(0.0, value))


def _distances(a: np.ndarray, b: np.ndarray, edges: np.ndarray) -> tuple[float, float, float]:
    with np.errstate(divide="ignore", invalid="ignore"):  # its p-value of one value; unused
        ks = float(scipy_stats.ks_2samp(a, b, method="asymp").statistic)
    emd = float(scipy_stats.wasserstein_distance(a, b))
    return ks, emd, js_divergence(a, b, edges)


def _pool(per_dialogue: list[list[float]], chosen: Sequence[int] | np.ndarray) -> np.ndarray:
    values = [v for i in chosen for v in per_dialogue[int(i)]]
    return np.asarray(values, dtype=np.float64)


def compare_distributions(system: Sides, reference: Sides, reference_label: str,
                          resamples: int = RESAMPLES, seed: int = SEED) -> DistributionResults:
    """Every feature's distances between ``system`` and ``reference`` (the same dialogue ids on
    both sides) with their dialogue-bootstrap intervals (see the module docstring)."""
    ids = sorted(set(system) | set(reference))
    draws = resample_indices(len(ids), resamples, seed) if ids else np.zeros((0, 0), int)
    features = []
    for feature in FEATURES:
        edges = BINS[feature]
        sys_by = [[v for t in system.get(d, ()) for v in t.get(feature, ())] for d in ids]
        ref_by = [[v for t in reference.get(d, ()) for v in t.get(feature, ())] for d in ids]
        every = list(range(len(ids)))
        a, b = _pool(sys_by, every), _pool(ref_by, every)
        point = _distances(a, b, edges) if len(a) and len(b) else None
        estimates: list[tuple[float, float, float]] = []
        for row in draws:
            ra, rb = _pool(sys_by, row), _pool(ref_by, row)
            if len(ra) and len(rb):
                estimates.append(_distances(ra, rb, edges))
        trio = []
        for k in range(3):
            low = high = None
            if estimates and point is not None:
                low, high = percentile_interval(np.asarray([e[k] for e in estimates]))
            trio.append(Distance(value=None if point is None else point[k], ci95_low=low,
                                 ci95_high=high, resamples=len(estimates)))
        features.append(FeatureComparison(
            feature=feature, unit=UNITS[feature], system=a.tolist(), reference=b.tolist(),
            ks=trio[0], wasserstein=trio[1], js=trio[2], bins=edges.tolist()))
    return DistributionResults(reference=reference_label, dialogues=len(ids),
                               resamples=resamples, seed=seed, features=features)
