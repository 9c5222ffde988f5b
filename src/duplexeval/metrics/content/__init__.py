"""Content metrics: what the system said, on TURN_SHIFT events.

* :mod:`.text`: joining words, reference answers and histories, words in the event window;
* :mod:`.inputs`: one event's judged texts in the ``default`` or ``official`` mode;
* :mod:`.offline`: QA token F1 / exact match, response word count, truncation (no LLM);
* :mod:`.judged`: relevance, consistency and QA through the LLM judge;
* :mod:`.summary`: the records (``content.jsonl``, ``content_offline.jsonl``) and aggregates;
* :mod:`.score`: all of it for one run's events.
"""

from __future__ import annotations

from duplexeval.metrics.content._inputs import (
    ContentInput,
    ContentMode,
    ContentOptions,
    HistorySource,
)
from duplexeval.metrics.content._score import ContentOutcome, JudgeSettings, score_content
from duplexeval.results._content import (
    ContentAggregate,
    ContentRecord,
    ContentResults,
    NotComputed,
    OfflineRecord,
)

__all__ = [
    "ContentAggregate",
    "ContentInput",
    "ContentMode",
    "ContentOptions",
    "ContentOutcome",
    "ContentRecord",
    "ContentResults",
    "HistorySource",
    "JudgeSettings",
    "NotComputed",
    "OfflineRecord",
    "score_content",
]
