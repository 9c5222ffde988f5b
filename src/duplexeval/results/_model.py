"""``results.json``: the versioned record of one scoring, as a pydantic model.

:class:`Results` validates a results file; ``schema_version`` (:data:`SCHEMA_VERSION`) changes
with every incompatible change, and :mod:`duplexeval.results._reader` reads older versions.
:mod:`duplexeval.metrics._score_outputs` writes the files; every stage above ``metrics`` reads
them through :func:`duplexeval.results.load`.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from duplexeval.results._content import ContentResults
from duplexeval.results._counterfactual import PairedEffect
from duplexeval.results._distributions import DistributionResults
from duplexeval.results._intervals import IntervalFields
from duplexeval.version import __version__

__all__ = ["SCHEMA_VERSION", "AggregateRow", "DatasetRef", "EventResult", "Origin", "PassPoint",
           "Results", "SourceInfo", "Stability", "StabilityRow", "TriesSpread", "Value",
           "VariantInfo"]

Value = float | int | None
"""A metric value: a number, or ``None`` when the event has none (e.g. no latency)."""

SCHEMA_VERSION: Final = 7
"""7: ``distributions``, the distributional-realism section (``realism`` variant),
``counterfactual``, the paired effects of the user's acts, and ``stability``, pass@k, pass^k
and the spread of repeated tries (``run --repeats``); 6:
``label_aggregates``, the rows per dialogue label (MTR's features and combinations), and
``variant.definition`` (official code, paper or compat); 5: ``ci_method`` of every interval
(Wilson, bootstrap or Student-t); 4: ``environment``, the numeric stack's versions where the
file was scored; 3: ``source.protocol``, ``source.dataset`` and, per event, ``audio``,
``user_channel``, ``event_start`` and ``event_end``; 2: ``content``; 1: timing only.
:mod:`duplexeval.results` reads every older version (their new fields take their defaults) and
refuses newer ones."""


class Origin(BaseModel):
    """Where a latency metric's interval starts and ends
    (:class:`~duplexeval.metrics._base.MeasurementOrigin`)."""

    model_config = ConfigDict(extra="forbid")
    start: str
    end: str


class VariantInfo(BaseModel):
    """The timing variant that scored the run: its name, version and conventions."""

    model_config = ConfigDict(extra="forbid")
    name: str
    version: str
    source: str
    settings: dict[str, Any]
    definition: str = ""
    """Which definition the settings apply: ``official code``, ``paper`` or ``compat``
    (:meth:`~duplexeval.metrics._base.TimingVariant.definition`; '' in files of version 5 or
    older)."""
    measurement_origin: dict[str, Origin] = Field(default_factory=dict)
    """``"dimension/metric"`` -> where that latency's interval starts and ends (every latency
    metric of the variant; empty in files written before it was recorded)."""


class DatasetRef(BaseModel):
    """The dataset a run used, as far as tables need it (``config.json`` ``dataset``)."""

    model_config = ConfigDict(extra="forbid")
    name: str = ""
    path: str = ""
    content_hash: str = ""
    language: str = ""
    domain: str = ""

    def identity(self) -> str:
        """What makes two runs' datasets the same: the content hash, else name and path."""
        return self.content_hash or f"{self.name}@{self.path}"


class SourceInfo(BaseModel):
    """What was scored: a run directory or an official M3 output folder."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["m3-official", "run"]
    path: str
    metadata: str
    system: str = ""
    """The system of a run ('' for an official output folder)."""
    oracle: list[str] = Field(default_factory=list)
    """Oracle data the system read (``Capabilities.oracle``): its content is not its own; the
    tables mark such rows."""
    protocol: str = ""
    """The run's protocol (``single``, ``multi-gen``, ``multi-ref``; '' when unknown)."""
    dataset: DatasetRef | None = None
    """The run's dataset (``None`` for an official output folder or a version-2 file)."""


class EventResult(BaseModel):
    """One scored event: its ids, kind, values, extras and diagnostic information."""

    model_config = ConfigDict(extra="forbid")
    event_id: str
    sample_id: str
    event_type: str
    language: str
    domain: str
    dimension: str
    values: dict[str, Value]
    extras: dict[str, Value]
    info: dict[str, Any]
    audio: str | None = None
    """The sample's stereo wav (ch0 user, ch1 system) relative to ``source.path``, never
    embedded; ``None`` when the metadata gives no relative path."""
    user_channel: int | None = None
    """The dialogue channel that played the user (``None`` when the metadata has none)."""
    event_start: float | None = None
    """The event's span in dialogue seconds: with the dialogue and the user channel it names
    the event across protocols, whose event ids number samples differently."""
    event_end: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _reasons_to_info(cls, data: Any) -> Any:
        """Strict JSON (:func:`duplexeval._fileio.strict_json`) writes a non-finite value as
        ``null`` with ``{key}_reason`` beside it; in ``values`` and ``extras`` those reasons
        move to ``info["reasons"]`` (``{key: reason}``), so the numbers stay numbers."""
        if not isinstance(data, dict):
            return data
        reasons: dict[str, str] = {}
        out = dict(data)
        for field in ("values", "extras"):
            block = data.get(field)
            if not isinstance(block, dict):
                continue
            kept = {}
            for key, value in block.items():
                if isinstance(value, str) and key.endswith("_reason") \
                        and block.get(key[:-len("_reason")], 0) is None:
                    reasons[key[:-len("_reason")]] = value
                else:
                    kept[key] = value
            out[field] = kept
        if reasons:
            info = dict(out.get("info") or {})
            info["reasons"] = {**dict(info.get("reasons") or {}), **reasons}
            out["info"] = info
        return out


class AggregateRow(IntervalFields):
    """One aggregate: a metric over the events of a language, domain and kind (and round),
    with its n, mean and 95 % interval."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_reasons(cls, data: Any) -> Any:
        """A strict-JSON ``{key}_reason`` beside a ``null`` (see
        :func:`duplexeval._fileio.strict_json`) is the file's note on that value; the row
        reads without it."""
        if not isinstance(data, dict):
            return data
        return {key: value for key, value in data.items()
                if not (key.endswith("_reason") and isinstance(value, str)
                        and data.get(key[:-len("_reason")], 0) is None)}

    language: str
    domain: str
    official: bool
    event_type: str
    dimension: str
    metric: str
    round: int | None = None
    """``None`` over all events; k for the events in round k of their dialogue."""
    label: str | None = None
    """``None`` over all dialogues; else the events of the dialogues their suite labels so
    (MTR's features ``smooth`` ... ``backchannel`` and combinations ``S`` ... ``S+I+P+B``)."""
    measurement_origin: Origin | None = None
    """For a latency metric: where its interval starts and ends (``None`` otherwise)."""
    quantiles: dict[str, float] | None = None
    """``p10``, ``p50`` and ``p90`` of the values (linear interpolation, numpy's default) for
    the metrics the variant names in ``quantile_metrics`` (TurnBench's latency figures);
    ``None`` for every other row and in files written before it existed."""


class PassPoint(IntervalFields):
    """pass@k or pass^k at one ``k``: the mean over events of the per-event unbiased estimate
    (``n`` = events with at least ``k`` tries), with its interval (bootstrap, or Wilson when
    every estimate is 0 or 1)."""

    model_config = ConfigDict(extra="forbid")
    k: int


class TriesSpread(IntervalFields):
    """The within-event standard deviation (``ddof=1``) of one latency over an event's tries,
    averaged over the events with at least two tries that have a value (``n``)."""

    model_config = ConfigDict(extra="forbid")
    metric: str
    measurement_origin: Origin | None = None


class StabilityRow(BaseModel):
    """The tries of the events of one kind and dimension
    (:mod:`duplexeval.metrics._stability`)."""

    model_config = ConfigDict(extra="forbid")
    event_type: str
    dimension: str
    events: int
    """Events with at least one scored try."""
    tries: int
    """The most tries an event has (the run's ``--repeats``)."""
    pass_rule: str | None
    """What a pass is for this kind (the variant's :class:`~duplexeval.metrics._base.PassRule`
    in words); ``None``: the variant gives no binary verdict, so no pass rates."""
    pass_at_k: list[PassPoint] = Field(default_factory=list)
    """pass@k for k = 1 .. tries: at least one of k tries passes."""
    pass_hat_k: list[PassPoint] = Field(default_factory=list)
    """pass^k for k = 1 .. tries: all k tries pass."""
    flip_share: IntervalFields | None = None
    """Share of events (with two or more judged tries) whose verdict differs between tries
    (Wilson interval)."""
    latency_std: list[TriesSpread] = Field(default_factory=list)
    identical_share: IntervalFields | None = None
    """Share of events whose tries produced the identical system channel (Wilson)."""


class Stability(BaseModel):
    """The repeated tries of a run (``run --repeats k``): per event kind pass@k, pass^k, the
    latency spread within an event and the share of flipping verdicts; and whether the system
    gave identical tries."""

    model_config = ConfigDict(extra="forbid")
    tries: int
    events: int
    """Events (base event ids) with at least one scored try."""
    identity: str
    """How two tries are called identical (the hash compared)."""
    identical_events: int
    """Events all of whose tries have the identical system channel."""
    deterministic: bool
    """Every event's tries are identical: the system ignores the seed, so the k tries are
    one try k times (pass^k equals pass@k equals pass@1)."""
    rows: list[StabilityRow]


class Results(BaseModel):
    """Schema of ``results.json`` (``schema_version`` changes with any incompatible change)."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Literal[7] = SCHEMA_VERSION
    tool: str = Field(default_factory=lambda: f"duplexeval {__version__}")
    environment: dict[str, str | None] = Field(default_factory=dict)
    """The Python version and the resolved versions of the numeric stack (numpy, scipy, soxr,
    onnxruntime, ctranslate2, faster-whisper, torch; ``None``: not installed) of the process
    that wrote the file (:func:`duplexeval._environment.numeric_stack`); empty in a file of
    schema version 3 or older."""
    source: SourceInfo
    variant: VariantInfo
    analysis: dict[str, Any] | None
    events: list[EventResult]
    aggregates: list[AggregateRow]
    label_aggregates: list[AggregateRow] = Field(default_factory=list)
    """The rows per dialogue label (``label`` set; over all rounds and per round), apart from
    :attr:`aggregates` so that a reader of the overall rows never meets them: MTR's
    per-feature table and ablation.  Empty when no dialogue is labelled."""
    content: ContentResults | None = None
    """Content metrics (``None`` when not computed, e.g. an official output folder)."""
    distributions: DistributionResults | None = None
    """The system's timing distributions against the reference human channel's (the
    ``realism`` variant, :mod:`duplexeval.metrics._distributions`); ``None`` for every other
    variant and in files of schema version 6 or older."""
    counterfactual: list[PairedEffect] = Field(default_factory=list)
    """The effect of the user's act per event kind and metric, each event against its
    counterfactual twin (:mod:`duplexeval.metrics._counterfactual`); empty for a run planned
    without twins and in files of schema version 6 or older."""
    stability: Stability | None = None
    """The repeated tries (``None`` for a run of one try per sample and in files of schema
    version 6 or older)."""
