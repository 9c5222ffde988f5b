"""Results: the record of one scoring, the one way to read it, and its JSON Schema.

``metrics`` writes results files (:mod:`duplexeval.metrics._score_outputs`); every stage above it
reads them here::

    from duplexeval import results

    r = results.load("runs/cascade-multi-gen")     # a run, its scores folder or the file
    for row in r.aggregates:
        print(row.event_type, row.dimension, row.metric, row.mean, row.ci95_half_width)

* :mod:`~duplexeval.results._model`: :class:`Results` and its parts (pydantic);
* :mod:`~duplexeval.results._content`: the judged and offline content records;
* :mod:`~duplexeval.results._reader`: :func:`load` (every older version, newer ones refused),
  :func:`load_scored` (with the content records beside it);
* :mod:`~duplexeval.results._schema`: the JSON Schema.
"""

from duplexeval.results._content import ContentRecord, ContentResults, OfflineRecord
from duplexeval.results._model import (
    SCHEMA_VERSION,
    AggregateRow,
    DatasetRef,
    EventResult,
    Results,
    SourceInfo,
    VariantInfo,
)
from duplexeval.results._reader import (
    ScoredRun,
    load,
    load_scored,
    read_content_records,
    results_file,
)
from duplexeval.results._schema import json_schema, json_schema_text, write_json_schema

__all__ = [
    "SCHEMA_VERSION",
    "AggregateRow",
    "ContentRecord",
    "ContentResults",
    "DatasetRef",
    "EventResult",
    "OfflineRecord",
    "Results",
    "ScoredRun",
    "SourceInfo",
    "VariantInfo",
    "json_schema",
    "json_schema_text",
    "load",
    "load_scored",
    "read_content_records",
    "results_file",
    "write_json_schema",
]
