"""How close the analysis of a run comes to the truth a system logged (``analysis-truth``).

Two comparisons, both over the events of one run (truth = the speech intervals ``scripted``
logs, trace key ``system_speech``; analysis = VAD segments of the output wav):

* **Boundaries** (:func:`boundary_matches`) - per event, the onsets of the truth segments on
  the model channel are matched one to one to the onsets of the analysed segments, and the
  offsets to the offsets, when they differ by at most ``tolerance`` seconds (inclusive;
  default 50 ms).  *Recall* = matched / truth boundaries, *precision* = matched / analysed
  boundaries: a boundary the analysis missed lowers recall, a spurious one lowers precision.
  The matching is a maximum one-to-one matching (two pointers over the sorted times, which is
  optimal for a tolerance window on a line), so one analysed boundary never serves two truths.
  Under multi-ref the saved model channel is the reference system's audio up to the event
  start, which the system never logs: ``reference_before_event`` leaves segments there out on
  both sides.
* **Metrics** (:func:`compare_scores`) - the timing variant's per-event values from the
  analysed and from the truth segments.  Verdicts (``tor ↑``, ``tor ↓``, ``is_speaking``) are
  compared per (event type, metric).  Latencies (every value named ``latency*`` or
  ``stop_latency*``) are compared only where *both* sides have a real latency: a value that is
  ``None`` on either side is not a latency, and neither is one the variant flags as a fallback
  (``info["latency_fallback"]``, e.g. the M3 pause-handling window length given to a system
  that never spoke).  The counts of events with a latency on one side only or on neither are
  reported beside the errors, never counted as agreement.

Times are seconds in output-wav time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from duplexeval.analysis._segments import SpeechSegment
from duplexeval.metrics._base import DimensionScore, EventScore, EventView, get_variant
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._scoring import score_events
from duplexeval.runs._directory import RunDir

if TYPE_CHECKING:
    from duplexeval.analysis._pipeline import AnalysisOptions

__all__ = [
    "ACCURACY_PROTOCOLS",
    "TOLERANCE",
    "Agreement",
    "BoundaryMatch",
    "LatencyAgreement",
    "VerdictAgreement",
    "boundary_matches",
    "compare_scores",
    "describe",
    "match_times",
    "report_lines",
    "run_accuracy",
]

TOLERANCE = 0.05
"""Seconds (inclusive) within which an analysed boundary or latency agrees with the truth."""

_EPS = 1e-9

VERDICTS = ("tor ↑", "tor ↓", "is_speaking")

ACCURACY_PROTOCOLS: tuple[tuple[str, dict[str, str]], ...] = (
    ("multi-gen", {"jitter": "0.15"}),
    ("single", {"jitter": "0.15", "delay": "0.5"}),
    ("multi-ref", {"ignore_shorter": "0.6", "stop_delay": "0.4"}),
)
"""The accuracy experiment: (protocol, ``scripted`` arguments) per run.  Shared by
``perf/analysis_accuracy.py`` (which prints the README figures) and
``tests/test_analysis.py`` (which checks them), so both measure the same runs."""


# -- boundaries -----------------------------------------------------------------------------------

def match_times(truth: Sequence[float], found: Sequence[float],
                tolerance: float = TOLERANCE) -> list[tuple[float, float]]:
    """A maximum one-to-one matching of ``found`` times to ``truth`` times with
    ``|found - truth| <= tolerance``; returns the matched (truth, found) pairs."""
    t = sorted(truth)
    f = sorted(found)
    pairs: list[tuple[float, float]] = []
    i = j = 0
    while i < len(t) and j < len(f):
        if f[j] < t[i] - tolerance - _EPS:
            j += 1  # spurious: too early for this and every later truth
        elif f[j] > t[i] + tolerance + _EPS:
            i += 1  # missed: no remaining analysed time is close enough
        else:
            pairs.append((t[i], f[j]))
            i += 1
            j += 1
    return pairs


@dataclass(frozen=True)
class BoundaryMatch:
    """One-to-one matching of analysed to truth boundaries of one kind (onset or offset)."""

    truth: int
    """Truth boundaries."""
    found: int
    """Analysed boundaries."""
    errors: tuple[float, ...] = ()
    """``|analysed - truth|`` in seconds of every matched pair (each <= the tolerance)."""
    nearest: tuple[float, ...] = ()
    """Per truth boundary, ``analysed - truth`` to the nearest analysed boundary (any
    distance; absent when the event has none): shows a bias that the matching hides."""

    @property
    def matched(self) -> int:
        return len(self.errors)

    @property
    def precision(self) -> float | None:
        """Matched / analysed boundaries (None when the analysis found none)."""
        return self.matched / self.found if self.found else None

    @property
    def recall(self) -> float | None:
        """Matched / truth boundaries (None when the truth has none)."""
        return self.matched / self.truth if self.truth else None

    def __add__(self, other: BoundaryMatch) -> BoundaryMatch:
        return BoundaryMatch(self.truth + other.truth, self.found + other.found,
                             self.errors + other.errors, self.nearest + other.nearest)


def boundary_matches(truth: Iterable[EventView], analysed: Iterable[EventView],
                     channel: int = 1, tolerance: float = TOLERANCE,
                     reference_before_event: bool = False) -> dict[str, BoundaryMatch]:
    """``{"onset": ..., "offset": ...}`` over every truth event; an event the analysis lacks
    counts all its truth boundaries as missed.

    ``reference_before_event``: for multi-ref runs, whose saved model channel is the
    *reference* system's audio up to the event start (teacher forcing) - speech the system
    neither produced nor logged.  Segments that end at or before the event start are then left
    out on both sides; the rest are compared as usual."""
    found = {e.event_id: e for e in analysed}
    out = {"onset": BoundaryMatch(0, 0), "offset": BoundaryMatch(0, 0)}
    for t in truth:
        a = found.get(t.event_id)
        since = t.event_start - t.input_start if reference_before_event else -math.inf
        ours = ([s for s in a.segments if s.channel == channel and s.end > since + _EPS]
                if a is not None else [])
        theirs = [s for s in t.segments if s.channel == channel and s.end > since + _EPS]
        picks: tuple[tuple[str, Callable[[SpeechSegment], float]], ...] = (
            ("onset", lambda s: s.start), ("offset", lambda s: s.end))
        for kind, pick in picks:
            truth_times = [pick(s) for s in theirs]
            our_times = [pick(s) for s in ours]
            pairs = match_times(truth_times, our_times, tolerance)
            nearest = tuple(min((o - x for o in our_times), key=abs)
                            for x in truth_times if our_times)
            out[kind] = out[kind] + BoundaryMatch(
                len(truth_times), len(our_times), tuple(abs(b - a) for a, b in pairs), nearest)
    return out


# -- metric values --------------------------------------------------------------------------------

@dataclass(frozen=True)
class VerdictAgreement:
    """Equal verdicts out of those compared (events where both sides have one)."""

    n: int = 0
    equal: int = 0
    one_sided: int = 0
    """Verdicts defined on one side only (counted in ``n``, never equal)."""

    @property
    def rate(self) -> float | None:
        return self.equal / self.n if self.n else None

    def __add__(self, other: VerdictAgreement) -> VerdictAgreement:
        return VerdictAgreement(self.n + other.n, self.equal + other.equal,
                                self.one_sided + other.one_sided)


@dataclass(frozen=True)
class LatencyAgreement:
    """A latency metric over the events scored on both sides."""

    events: int = 0
    """Events compared (with the metric on at least the truth side's dimension)."""
    errors: tuple[float, ...] = ()
    """``|analysed - truth|`` in seconds where both sides have a real latency."""
    truth_only: int = 0
    analysed_only: int = 0
    neither: int = 0

    @property
    def both(self) -> int:
        return len(self.errors)

    def rate(self, tolerance: float = TOLERANCE) -> float | None:
        """Share of the both-sided latencies within ``tolerance`` s (None when there are
        none)."""
        if not self.errors:
            return None
        return sum(e <= tolerance + _EPS for e in self.errors) / len(self.errors)

    def __add__(self, other: LatencyAgreement) -> LatencyAgreement:
        return LatencyAgreement(self.events + other.events, self.errors + other.errors,
                                self.truth_only + other.truth_only,
                                self.analysed_only + other.analysed_only,
                                self.neither + other.neither)


Key = tuple[str, str]
"""(event type, metric name)."""


@dataclass(frozen=True)
class Agreement:
    """Per-event agreement between analysed and truth metric values, per (event type,
    metric)."""

    verdicts: Mapping[Key, VerdictAgreement] = field(default_factory=dict)
    latencies: Mapping[Key, LatencyAgreement] = field(default_factory=dict)

    def __add__(self, other: Agreement) -> Agreement:
        verdicts = dict(self.verdicts)
        for k, v in other.verdicts.items():
            verdicts[k] = verdicts.get(k, VerdictAgreement()) + v
        latencies = dict(self.latencies)
        for key, latency in other.latencies.items():
            latencies[key] = latencies.get(key, LatencyAgreement()) + latency
        return Agreement(verdicts, latencies)

    def verdict_total(self) -> VerdictAgreement:
        return sum(self.verdicts.values(), VerdictAgreement())

    def latency_total(self) -> LatencyAgreement:
        """Over the headline latencies (names with a direction arrow: one per event), so
        that e.g. ``latency_wo_long_overlap``, a copy of ``latency ↑``, is not counted
        twice."""
        return sum((v for (_, metric), v in self.latencies.items()
                    if "↑" in metric or "↓" in metric), LatencyAgreement())


def _is_latency(metric: str) -> bool:
    return metric.startswith(("latency", "stop_latency"))


def _real_latency(dim: DimensionScore, metric: str) -> float | None:
    value = dim.values.get(metric)
    if value is None or dim.info.get("latency_fallback") is True:
        return None
    return float(value)


def compare_scores(truth: Iterable[EventScore], analysed: Iterable[EventScore]) -> Agreement:
    """Compare two scorings of the same events (matched by event id and dimension); events
    the analysed side lacks are left out."""
    found = {(s.event.event_id, d.dimension): d for s in analysed for d in s.dimensions}
    verdicts: dict[Key, VerdictAgreement] = {}
    latencies: dict[Key, LatencyAgreement] = {}
    for s in truth:
        for d in s.dimensions:
            a = found.get((s.event.event_id, d.dimension))
            if a is None:
                continue
            for metric, value in d.values.items():
                key = (s.event.event_type, metric)
                if metric in VERDICTS:
                    other = a.values.get(metric)
                    if value is None and other is None:
                        continue
                    one_sided = (value is None) != (other is None)
                    verdicts[key] = verdicts.get(key, VerdictAgreement()) + VerdictAgreement(
                        1, int(not one_sided and value == other), int(one_sided))
                elif _is_latency(metric):
                    x, y = _real_latency(d, metric), _real_latency(a, metric)
                    latencies[key] = latencies.get(key, LatencyAgreement()) + LatencyAgreement(
                        1, (abs(x - y),) if x is not None and y is not None else (),
                        int(x is not None and y is None), int(x is None and y is not None),
                        int(x is None and y is None))
    return Agreement(verdicts, latencies)


# -- text -----------------------------------------------------------------------------------------

def describe(errors: Sequence[float], tolerance: float = TOLERANCE) -> str:
    """``n, median, p95, max (ms) and the share within tolerance`` on one line."""
    if not errors:
        return "n=0"
    x = np.asarray(errors, dtype=float)
    finite = x[np.isfinite(x)]
    within = float(np.mean(x <= tolerance + _EPS))
    if finite.size == 0:
        return f"n={x.size}, none found"
    return (f"n={x.size}, median {np.median(finite) * 1000:.1f} ms, p95 "
            f"{np.percentile(finite, 95) * 1000:.1f} ms, max {finite.max() * 1000:.1f} ms, "
            f"within {tolerance * 1000:.0f} ms {within * 100:.1f} %")


def _pct(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x * 100:.1f} %"


def report_lines(boundaries: Mapping[str, BoundaryMatch], agreement: Agreement,
                 tolerance: float = TOLERANCE) -> list[str]:
    """The accuracy figures as text (the README quotes these lines)."""
    ms = f"{tolerance * 1000:.0f} ms"
    lines = []
    for kind in ("onset", "offset"):
        b = boundaries[kind]
        bias = (f"; median signed error to the nearest {np.median(b.nearest) * 1000 + 0.0:+.1f} ms"
                if b.nearest else "")
        lines.append(f"{kind}s at {ms}: precision {_pct(b.precision)} ({b.matched}/{b.found}), "
                     f"recall {_pct(b.recall)} ({b.matched}/{b.truth}); matched error "
                     f"{describe(b.errors, tolerance)}{bias}")
    for (event_type, metric), v in sorted(agreement.verdicts.items()):
        lines.append(f"{event_type} {metric}: {v.equal}/{v.n} equal ({_pct(v.rate)})"
                     + (f", {v.one_sided} one-sided" if v.one_sided else ""))
    for (event_type, metric), lat in sorted(agreement.latencies.items()):
        lines.append(f"{event_type} {metric}: real on both sides in {lat.both} of "
                     f"{lat.events} events, within {ms} {_pct(lat.rate(tolerance))}; "
                     f"truth only {lat.truth_only}, analysis only {lat.analysed_only}, "
                     f"neither {lat.neither}")
    v = agreement.verdict_total()
    lat = agreement.latency_total()
    lines.append(f"all verdicts: {v.equal}/{v.n} equal ({_pct(v.rate)}); headline latencies: "
                 f"{lat.both} of {lat.events} events real on both sides, within {ms} "
                 f"{_pct(lat.rate(tolerance))}")
    return lines


def run_accuracy(run_dir: Path, options: AnalysisOptions | None = None, variant: str = "m3",
                 tolerance: float = TOLERANCE) -> tuple[dict[str, BoundaryMatch], Agreement]:
    """How the analysis of ``run_dir`` (with ``options``; ASR off by default: only boundaries
    matter here) compares with the truth its system logged (``duplexeval accuracy``): boundary
    matches on the system channel, and the agreement of ``variant``'s per-event values.  A run
    whose system logs no speech intervals is a one-line error; under multi-ref the
    teacher-forced reference before each event is left out on both sides."""
    from duplexeval.analysis._pipeline import AnalysisOptions, analyze_run

    analysed_options = options or AnalysisOptions(asr="none")
    truth = read_m3_outputs(analyze_run(run_dir, truth=True, progress=False))[0]
    analysed = read_m3_outputs(analyze_run(run_dir, analysed_options, progress=False))[0]
    multi_ref = RunDir(run_dir).read_config().protocol == "multi-ref"
    bounds = boundary_matches(truth, analysed, tolerance=tolerance,
                              reference_before_event=multi_ref)
    timing = get_variant(variant)
    return bounds, compare_scores(score_events(truth, timing), score_events(analysed, timing))
