"""Timing metric variants: named, versioned definitions over the same analysed event.

The same word means different things across benchmarks (M3's TOR is "took the turn within the
overlap tolerance", Full-Duplex-Bench's TOR is "spoke at all in the window"; FLEXI's stop latency
starts at another onset), so every metric value is produced by a *variant* with a name and a
version, and results record both.  A variant reads an :class:`EventView` (the event's metadata
and the analysed segments of its output wav) and returns, per dimension, the metric values under
the variant's own (official) names, diagnostic information, and any extra metrics the variant's
paper reports beyond its code.

New variants subclass :class:`TimingVariant` and register in :data:`VARIANTS` (an entry point of
the ``duplexeval.variants`` group, or :func:`register_variant` in one process).

Measurement origin: every latency metric (any metric measuring an interval) states where its
interval starts and ends (:class:`MeasurementOrigin`, in the variant's
``measurement_origins``; results record them).  "Input channel" is the user as fed to the
system (channel 0 of the sample wav); "system channel" is channel 1 as written: on the frame
timeline for offline systems, and for wall-clock systems the *played-out* output the real-time
driver rebuilt (:mod:`duplexeval.systems.realtime._driver`: user frames sent at their deadlines,
answers placed at their arrival), so a wall-clock latency includes the network, codec, compute and
queueing delays a listener would hear::

    input channel   uuuuuuuuuu|                      start: e.g. the user's turn end
    system channel             |<-- latency -->|MMMM  end: e.g. the first system speech
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from duplexeval.analysis._segments import SpeechSegment
from duplexeval.registry import Registry, subclass_of
from duplexeval.results._distributions import DistributionResults
from duplexeval.results._model import Value

__all__ = [
    "INPUT_CHANNEL",
    "SYSTEM_CHANNEL",
    "VARIANTS",
    "Definition",
    "DimensionScore",
    "EventScore",
    "EventView",
    "MeasurementOrigin",
    "PassRule",
    "TimingVariant",
    "get_variant",
    "register_variant",
    "variant_names",
]


INPUT_CHANNEL = "in the input channel (the user as fed)"
SYSTEM_CHANNEL = ("in the system channel as written (wall-clock systems: the played-out "
                  "output)")


@dataclass(frozen=True)
class MeasurementOrigin:
    """Where a latency metric's interval starts and ends (see the module docstring)."""

    start: str
    end: str

    def to_json(self) -> dict[str, str]:
        """Plain-data form, as results record it."""
        return {"start": self.start, "end": self.end}


@dataclass(frozen=True)
class PassRule:
    """What a *pass* is for one event kind under a variant: the event's ``metric`` of
    ``dimension`` equals ``value`` (a verdict the variant already gives, e.g. M3's TOR).
    pass@k and pass^k (:mod:`duplexeval.metrics._stability`) count these."""

    dimension: str
    metric: str
    value: int
    meaning: str
    """The rule in words, as results print it (e.g. ``took the turn (tor ↑ = 1)``)."""

    def passed(self, values: Mapping[str, Any]) -> bool | None:
        """Whether ``values`` pass (``None``: the metric is missing or not a number)."""
        found = values.get(self.metric)
        if isinstance(found, bool) or not isinstance(found, int | float):
            return None
        return bool(found == self.value)


@dataclass(frozen=True)
class EventView:
    """One evaluated event.  Times are absolute dialogue seconds as in the M3 metadata
    (``input_start`` is the output wav's time zero); ``segments`` are in output-wav time."""

    event_id: str
    event_type: str
    input_start: float
    input_end: float
    event_start: float
    event_end: float
    segments: tuple[SpeechSegment, ...]
    sample_id: str = ""
    language: str = ""
    domain: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_metadata(cls, record: Mapping[str, Any], segments: tuple[SpeechSegment, ...],
                      language: str = "", domain: str = "") -> EventView:
        """From one official ``metadata*.jsonl`` record (values taken with ``float()`` as the
        official evaluator takes them)."""
        return cls(
            event_id=str(record.get("event_id", "")), event_type=str(record["event_type"]),
            input_start=float(record["input_start"]), input_end=float(record["input_end"]),
            event_start=float(record["event_start"]), event_end=float(record["event_end"]),
            segments=segments, sample_id=str(record.get("sample_id", "")),
            language=language, domain=domain, metadata=dict(record))


@dataclass(frozen=True)
class DimensionScore:
    """A variant's verdict on one dimension of one event."""

    dimension: str
    values: dict[str, Value]
    """Metric values under the variant's names (``None`` where undefined)."""
    info: dict[str, Any] = field(default_factory=dict)
    """Diagnostics: target segment, miss type, reference times."""
    extras: dict[str, Value] = field(default_factory=dict)
    """Metrics the variant's paper reports beyond its official code (kept apart so that the
    official aggregate stays equal to the official code's)."""


@dataclass(frozen=True)
class EventScore:
    """All dimensions of one event under one variant."""

    event: EventView
    variant: str
    version: str
    dimensions: tuple[DimensionScore, ...]


Definition = Literal["official code", "paper", "compat"]
"""Which definition made a number (see :meth:`TimingVariant.definition`)."""


class TimingVariant(ABC):
    """A named, versioned set of timing metric definitions."""

    name: ClassVar[str]
    version: ClassVar[str]
    source: ClassVar[str]
    """Where the definitions come from (paper and code, with revision)."""
    measurement_origins: ClassVar[Mapping[str, MeasurementOrigin]] = {}
    """``"dimension/metric"`` -> where that latency metric's interval starts and ends (every
    metric that measures an interval has one, extras included)."""
    quantile_metrics: ClassVar[tuple[str, ...]] = ()
    """``"dimension/metric"`` keys whose results aggregate rows also carry the p10, p50 and p90
    of their values (:func:`duplexeval.metrics._scoring.aggregate_rows`; the official
    ``aggregate.json`` never does)."""
    pass_rules: ClassVar[Mapping[str, PassRule]] = {}
    """What counts as a pass (:class:`PassRule`) for pass@k and pass^k, keyed
    ``"EVENT_TYPE/dimension"`` (one rule per dimension of an event type), ``"EVENT_TYPE"`` (the
    rule's own dimension) or ``"*/dimension"`` (a dimension scored on any event type, such as
    annotated background speech); see :meth:`pass_rule`.  A dimension without one gets the
    latency spread and the identity of its tries, but no pass rates."""
    full_transcript_events: ClassVar[tuple[str, ...]] = ()
    """Event types whose samples need every word of the :attr:`full_transcript_channels` (not
    only the short system segments the M3 rules read); scoring asks the analysis for them."""
    full_transcript_channels: ClassVar[tuple[int, ...]] = (0, 1)
    """The channels (0 the user, 1 the system) whose every word those samples need."""

    reference_channel: ClassVar[bool] = False
    """Whether the variant reads the reference system channel of each sample's window
    (``reference_segments`` of the event metadata: ``[start, end]`` pairs in wav seconds, the
    dataset audio's system channel analysed as the sample's; scoring adds them,
    :mod:`duplexeval.metrics._realism_reference`)."""

    @abstractmethod
    def dimensions(self, event_type: str) -> tuple[str, ...]:
        """The dimensions this variant scores for an event type (empty: not scored)."""

    @abstractmethod
    def score(self, event: EventView) -> EventScore:
        """Score one event."""

    def settings(self) -> dict[str, Any]:
        """Parameters that change values (recorded in results)."""
        return {}

    def definition(self) -> Definition:
        """Which definition these settings apply: ``official code`` (the benchmark's released
        code, as M3's and MTR's variants do), ``paper`` (the paper's text where the code
        differs) or ``compat`` (a paper-default variant run in its code mode).  Recorded in
        results and printed with every table cell."""
        return "official code"

    def pass_rule(self, event_type: str, dimension: str) -> PassRule | None:
        """The pass of ``dimension`` on an ``event_type`` event: the ``"EVENT_TYPE/dimension"``
        rule, else the ``"EVENT_TYPE"`` rule when its dimension is ``dimension``, else the
        ``"*/dimension"`` rule; ``None``: the dimension has no binary verdict."""
        rules = self.pass_rules
        own = rules.get(event_type)
        for found in (rules.get(f"{event_type}/{dimension}"),
                      own if own is not None and own.dimension == dimension else None,
                      rules.get(f"*/{dimension}")):
            if found is not None and found.dimension == dimension:
                return found
        return None

    def measurement_origin(self, dimension: str, metric: str) -> MeasurementOrigin | None:
        """Where ``metric`` of ``dimension`` starts and ends (``None``: not an interval)."""
        return self.measurement_origins.get(f"{dimension}/{metric}")

    def distributions(self, scores: Sequence[EventScore]) -> DistributionResults | None:
        """A run-level comparison of distributions, written as the results'
        ``distributions`` (the ``realism`` variant's); default ``None``."""
        return None

    def prepare(self, events: Sequence[EventView]) -> None:  # noqa: B027 (optional hook)
        """Called once with every event before any is scored: a variant whose rule depends on
        the run as a whole (FLEXI's pause allowance is the run's mean latency) measures it
        here.  Default: nothing."""


VARIANTS: Registry[type[TimingVariant]] = Registry("metric variant", "variants", {
    "m3": "duplexeval.metrics.timing._m3:M3Timing",
    "flexi": "duplexeval.metrics.timing._flexi:FlexiTiming",
    "mtr": "duplexeval.metrics.timing._mtr:MtrTiming",
    "fdb-v1": "duplexeval.metrics.timing._fdb_v1:FdbV1Timing",
    "turnbench": "duplexeval.metrics.timing._turnbench:TurnBenchTiming",
    "realism": "duplexeval.metrics.timing._realism:RealismTiming",
}, subclass_of(TimingVariant))
"""The timing variants (:class:`~duplexeval.registry.Registry`, entry-point group
``duplexeval.variants``: ``name = "package.module:VariantClass"``)."""


def register_variant(cls: type[TimingVariant]) -> type[TimingVariant]:
    """Class decorator: make a variant available by its ``name`` in this process (a package
    registers one for every process with a ``duplexeval.variants`` entry point)."""
    return VARIANTS.add(cls.name, cls)


def variant_names() -> list[str]:
    """The names of every known variant (built-in, added and from entry points)."""
    return VARIANTS.names()


def get_variant(name: str, **settings: Any) -> TimingVariant:
    """An instance of a registered variant; unknown names list the valid ones."""
    return VARIANTS.get(name)(**settings)
