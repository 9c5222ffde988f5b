"""``results.json``: the versioned record of one scoring (pydantic schema), and the score outputs.

``duplexeval score`` writes into its output folder:

* ``per_event.jsonl`` - one line per (event, dimension): ``event_id`` and the official metric
  names and values (``"tor ↑"``, ``"latency ↓"``, ...), the variant's extra metrics and the miss
  type;
* ``aggregate.json`` - the official aggregation (a list of ``event_type, dimension, metric, n,
  mean``) plus interval fields;
* ``content_offline.jsonl`` - the offline content values of each TURN_SHIFT event with the
  texts they were computed from, and, with a judge, ``content.jsonl`` - one line per judged
  (event, dimension) (:mod:`duplexeval.metrics.content`);
* ``results.json`` - everything, with the variant's name, version and settings, the analysis
  settings, the source and the content aggregates, validated by :class:`Results`.

Every file is written atomically; floats are written as computed (no rounding).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from duplexeval import __version__
from duplexeval.environment import numeric_stack
from duplexeval.fileio import atomic_write_json, atomic_write_text, json_line
from duplexeval.metrics.base import EventScore, TimingVariant, Value
from duplexeval.metrics.content.score import ContentOutcome
from duplexeval.metrics.content.summary import ContentResults
from duplexeval.metrics.scoring import aggregate_rows, official_aggregate, per_event_rows
from duplexeval.metrics.stats import IntervalFields
from duplexeval.runs.directory import ScoreFiles

__all__ = ["SCHEMA_VERSION", "DatasetRef", "Results", "load_results", "write_score_outputs"]

SCHEMA_VERSION = 4
"""4: ``environment``, the numeric stack's versions where the file was scored; 3:
``source.protocol``, ``source.dataset`` and, per event, ``audio``, ``user_channel``,
``event_start`` and ``event_end``; 2: ``content``; 1: timing only.  :mod:`duplexeval.results`
reads every older version (their new fields take their defaults) and refuses newer ones."""


class Origin(BaseModel):
    """Where a latency metric's interval starts and ends
    (:class:`~duplexeval.metrics.base.MeasurementOrigin`)."""

    model_config = ConfigDict(extra="forbid")
    start: str
    end: str


class VariantInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    version: str
    source: str
    settings: dict[str, Any]
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


class AggregateRow(IntervalFields):
    model_config = ConfigDict(extra="forbid")
    language: str
    domain: str
    official: bool
    event_type: str
    dimension: str
    metric: str
    round: int | None = None
    """``None`` over all events; k for the events in round k of their dialogue."""
    measurement_origin: Origin | None = None
    """For a latency metric: where its interval starts and ends (``None`` otherwise)."""


class Results(BaseModel):
    """Schema of ``results.json`` (``schema_version`` changes with any incompatible change)."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Literal[4] = SCHEMA_VERSION
    tool: str = Field(default_factory=lambda: f"duplexeval {__version__}")
    environment: dict[str, str | None] = Field(default_factory=dict)
    """The Python version and the resolved versions of the numeric stack (numpy, scipy, soxr,
    onnxruntime, ctranslate2, faster-whisper, torch; ``None``: not installed) of the process
    that wrote the file (:func:`duplexeval.environment.numeric_stack`); empty in a file of
    schema version 3 or older."""
    source: SourceInfo
    variant: VariantInfo
    analysis: dict[str, Any] | None
    events: list[EventResult]
    aggregates: list[AggregateRow]
    content: ContentResults | None = None
    """Content metrics (``None`` when not computed, e.g. an official output folder)."""


def build_results(scores: list[EventScore], variant: TimingVariant, source: SourceInfo,
                  analysis: dict[str, Any] | None,
                  content: ContentResults | None = None) -> Results:
    events = [EventResult(event_id=s.event.event_id, sample_id=s.event.sample_id,
                          event_type=s.event.event_type, language=s.event.language,
                          domain=s.event.domain, dimension=d.dimension, values=d.values,
                          extras=d.extras, info=d.info, audio=_audio(s.event.metadata),
                          user_channel=_channel(s.event.metadata),
                          event_start=s.event.event_start, event_end=s.event.event_end)
              for s in scores for d in s.dimensions]
    origins = {key: Origin(**o.to_json()) for key, o in variant.measurement_origins.items()}
    rows = []
    for r in aggregate_rows(scores):
        found = variant.measurement_origin(r["dimension"], r["metric"])
        rows.append(AggregateRow(**r, measurement_origin=Origin(**found.to_json())
                                 if found is not None else None))
    return Results(source=source,
                   variant=VariantInfo(name=variant.name, version=variant.version,
                                       source=variant.source, settings=variant.settings(),
                                       measurement_origin=origins),
                   analysis=analysis, events=events, aggregates=rows, content=content,
                   environment=numeric_stack())


def _audio(metadata: Mapping[str, Any]) -> str | None:
    """The output wav of an event's metadata when it is a relative path (runs write it
    relative to the run directory)."""
    value = metadata.get("output_audio_path")
    if not isinstance(value, str) or not value or Path(value).is_absolute():
        return None
    return Path(value).as_posix()


def _channel(metadata: Mapping[str, Any]) -> int | None:
    value = metadata.get("user_channel")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def write_score_outputs(out: Path, scores: list[EventScore], variant: TimingVariant,
                        source: SourceInfo, analysis: dict[str, Any] | None,
                        content: ContentOutcome | None = None) -> Results:
    """Write the per-event rows, the official aggregate, the content records and the results
    file (last) into the scores folder ``out`` (:class:`~duplexeval.runs.directory.ScoreFiles`).
    A judged file from an earlier scoring is removed when this one judged nothing."""
    files = ScoreFiles(out)
    out.mkdir(parents=True, exist_ok=True)
    results = build_results(scores, variant, source, analysis,
                            content.results if content is not None else None)
    if content is not None:
        atomic_write_text(files.content_offline,
                          "".join(json_line(r.model_dump()) for r in content.offline))
        if content.judged:
            atomic_write_text(files.content,
                              "".join(json_line(r.model_dump()) for r in content.judged))
        else:
            files.content.unlink(missing_ok=True)
    atomic_write_text(files.per_event, "".join(json_line(r) for r in per_event_rows(scores)))
    atomic_write_json(files.aggregate, official_aggregate(scores))
    atomic_write_json(files.results, results.model_dump(mode="json"))
    return results


def load_results(path: Path) -> Results:
    """Read and validate a results.json of this version (any version, with one-line errors:
    :func:`duplexeval.results.load`)."""
    return Results.model_validate_json(path.read_text(encoding="utf-8"))
