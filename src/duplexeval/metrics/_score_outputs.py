"""The score outputs of one scoring (``results.json``: :mod:`duplexeval.results`).

``duplexeval score`` writes into its output folder:

* ``per_event.jsonl`` - one line per (event, dimension): ``event_id`` and the official metric
  names and values (``"tor ↑"``, ``"latency ↓"``, ...), the variant's extra metrics and the miss
  type;
* ``aggregate.json`` - the official aggregation (a list of ``event_type, dimension, metric, n,
  mean``) plus interval fields;
* ``content_offline.jsonl`` - the offline content values of each TURN_SHIFT event with the
  texts they were computed from, and, with a judge, ``content.jsonl`` - one line per judged
  (event, dimension) (:mod:`duplexeval.metrics.content`);
* the counterfactual twins' scores (``counterfactual_of`` in their metadata) go into
  ``results.json``'s ``counterfactual`` paired effects only
  (:mod:`duplexeval.metrics._counterfactual`), never into the rows above;
* ``results.json`` - everything, with the variant's name, version and settings, the analysis
  settings, the source and the content aggregates, validated by
  :class:`~duplexeval.results._model.Results`.

Every file is written atomically; floats are written as computed (no rounding).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from duplexeval._environment import numeric_stack
from duplexeval._fileio import (
    atomic_write_json,
    atomic_write_text,
    json_line,
    remove_stale_temporaries,
)
from duplexeval.metrics._base import EventScore, TimingVariant
from duplexeval.metrics._counterfactual import is_twin, paired_effects
from duplexeval.metrics._scoring import (
    aggregate_rows,
    label_rows,
    official_aggregate,
    per_event_rows,
)
from duplexeval.metrics.content._score import ContentOutcome
from duplexeval.results._content import ContentResults
from duplexeval.results._model import (
    AggregateRow,
    EventResult,
    Origin,
    Results,
    SourceInfo,
    Stability,
    VariantInfo,
)
from duplexeval.runs._directory import ScoreFiles

__all__ = ["build_results", "write_score_outputs"]

def build_results(scores: list[EventScore], variant: TimingVariant, source: SourceInfo,
                  analysis: dict[str, Any] | None,
                  content: ContentResults | None = None,
                  stability: Stability | None = None) -> Results:
    events = [EventResult(event_id=s.event.event_id, sample_id=s.event.sample_id,
                          event_type=s.event.event_type, language=s.event.language,
                          domain=s.event.domain, dimension=d.dimension, values=d.values,
                          extras=d.extras, info=d.info, audio=_audio(s.event.metadata),
                          user_channel=_channel(s.event.metadata),
                          event_start=s.event.event_start, event_end=s.event.event_end)
              for s in scores for d in s.dimensions]
    origins = {key: Origin(**o.to_json()) for key, o in variant.measurement_origins.items()}

    def typed(raw: list[dict[str, Any]]) -> list[AggregateRow]:
        out = []
        for r in raw:
            found = variant.measurement_origin(r["dimension"], r["metric"])
            out.append(AggregateRow(**r, measurement_origin=Origin(**found.to_json())
                                    if found is not None else None))
        return out

    return Results(source=source,
                   variant=VariantInfo(name=variant.name, version=variant.version,
                                       source=variant.source, settings=variant.settings(),
                                       definition=variant.definition(),
                                       measurement_origin=origins),
                   analysis=analysis, events=events,
                   aggregates=typed(aggregate_rows(scores, variant.quantile_metrics)),
                   label_aggregates=typed(label_rows(scores, variant.quantile_metrics)),
                   content=content, distributions=variant.distributions(scores),
                   stability=stability,
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
                        content: ContentOutcome | None = None,
                        stability: Stability | None = None) -> Results:
    """Write the per-event rows, the official aggregate, the content records and the results
    file (last) into the scores folder ``out`` (:class:`~duplexeval.runs._directory.ScoreFiles`).
    A judged file from an earlier scoring is removed when this one judged nothing."""
    files = ScoreFiles(out)
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out)  # a killed scoring's half-written files
    twins = [s for s in scores if is_twin(s)]
    scores = [s for s in scores if not is_twin(s)]
    results = build_results(scores, variant, source, analysis,
                            content.results if content is not None else None, stability)
    if twins:
        results = results.model_copy(update={"counterfactual": paired_effects(scores, twins)})
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
