"""The ``realism`` timing variant: the system's timing distributions against the human's.

Source: DuplexTutorBench's comparison of gap and overlap distributions with human ones (KS and
JS distance), extended to five features and the Wasserstein distance; a definition of this
project's (``paper``: there is no released code to match).

Every sample is one timeline (its wav, ``input_start`` = 0, seconds): the user channel as fed
(channel 0 segments of the analysis), the system channel (channel 1) and the **reference**: the
dataset's reference system channel over the same window, analysed with the same settings as the
system channel (:mod:`duplexeval.metrics._realism_reference`; the ``reference_segments`` of the
event metadata)::

    user as fed   uuuuuuuuu|            (muted from mute_start, as the system heard it)
    system                   |sssssss|         features of (user, system)
    reference                   |rrrrrrrrrr|   features of (user, reference)

The features (floor-transfer offsets, pauses, overlaps, backchannel rate, turn lengths) are
defined with their timelines in :mod:`duplexeval.metrics.timing._realism_features`, the
distances (KS, Wasserstein, JS, with bootstrap intervals over dialogues) in
:mod:`duplexeval.metrics._distributions`; they form the results' ``distributions``.

Per event (dimension ``realism``, every event type): ``fto_mean`` and ``reference_fto_mean``,
the mean floor-transfer offset of the system and of the reference on that timeline (``None``
without a transfer); ``info`` holds both sides' feature values.  The reference system (which
replays the reference channel) has every distance near 0: the check on the whole chain.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from duplexeval.metrics._base import (
    INPUT_CHANNEL,
    SYSTEM_CHANNEL,
    Definition,
    DimensionScore,
    EventScore,
    EventView,
    MeasurementOrigin,
    TimingVariant,
)
from duplexeval.metrics._distributions import RESAMPLES, compare_distributions
from duplexeval.metrics.timing._realism_features import measure
from duplexeval.results._distributions import DistributionResults
from duplexeval.timeline import Span

__all__ = ["REFERENCE_LABEL", "RealismTiming"]

REFERENCE_LABEL = ("the dataset's reference system channel over each sample's window, analysed "
                   "with the run's analysis settings (voice activity) like the system channel")

_FTO = MeasurementOrigin(f"the end of the user segment yielding the floor {INPUT_CHANNEL}",
                         f"the onset of the system segment taking it {SYSTEM_CHANNEL}")


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class RealismTiming(TimingVariant):
    """Distributional realism (see the module docstring)."""

    name: ClassVar[str] = "realism"
    version: ClassVar[str] = "1"
    source: ClassVar[str] = ("DuplexTutorBench (gap and overlap distributions against human "
                             "ones, KS and JS); features and Wasserstein distance of duplexeval")
    measurement_origins: ClassVar[Mapping[str, MeasurementOrigin]] = {
        "realism/fto_mean": _FTO,
        "realism/reference_fto_mean": MeasurementOrigin(
            _FTO.start, "the onset of the reference system channel's segment taking it (the "
                        "dataset audio, analysed as the system channel)")}
    reference_channel: ClassVar[bool] = True

    def __init__(self, resamples: int = RESAMPLES) -> None:
        self.resamples = resamples
        """Bootstrap resamples of each distance's interval."""

    def settings(self) -> dict[str, Any]:
        return {"resamples": self.resamples, "reference": REFERENCE_LABEL}

    def definition(self) -> Definition:
        """``paper``: a described comparison, no released code reproduced."""
        return "paper"

    def dimensions(self, event_type: str) -> tuple[str, ...]:
        return ("realism",)

    def score(self, event: EventView) -> EventScore:
        user = [s.span for s in event.segments if s.channel == 0]
        system = [s.span for s in event.segments if s.channel == 1]
        mine = measure(user, system).to_json()
        raw = event.metadata.get("reference_segments")
        reference = None
        if isinstance(raw, list):
            ref_spans = [Span(float(a), float(b)) for a, b in raw]
            reference = measure(user, ref_spans).to_json()
        values = {"fto_mean": _mean(mine["fto"]),
                  "reference_fto_mean": _mean(reference["fto"]) if reference else None}
        dim = DimensionScore("realism", values, {"system": mine, "reference": reference})
        return EventScore(event, self.name, self.version, (dim,))

    def distributions(self, scores: Sequence[EventScore]) -> DistributionResults | None:
        """Both sides' features per dialogue, compared (timelines without a reference are
        left out of both sides)."""
        system: dict[str, list[dict[str, list[float]]]] = defaultdict(list)
        reference: dict[str, list[dict[str, list[float]]]] = defaultdict(list)
        for score in scores:
            for dim in score.dimensions:
                if dim.dimension != "realism" or dim.info.get("reference") is None:
                    continue
                system[score.event.sample_id].append(dim.info["system"])
                reference[score.event.sample_id].append(dim.info["reference"])
        return compare_distributions(system, reference, REFERENCE_LABEL, self.resamples)
