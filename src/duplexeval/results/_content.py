"""The content records of a scored run and the ``content`` part of ``results.json``.

``content.jsonl`` lines (:class:`ContentRecord`, one judged event and dimension),
``content_offline.jsonl`` lines (:class:`OfflineRecord`) and :class:`ContentResults`; the
metrics that make them are in :mod:`duplexeval.metrics.content`, whose summary module states
the scales.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from duplexeval.results._intervals import IntervalFields

__all__ = ["ContentAggregate", "ContentRecord", "ContentResults", "NotComputed",
           "OfflineRecord"]


class ContentRecord(BaseModel):
    """One line of ``content.jsonl``: one judged (event, dimension)."""

    model_config = ConfigDict(extra="forbid")
    event_id: str
    dimension: str
    score: int | float | None
    """The judge's score on the prompt's scale (an integer, or a half point where the prompt
    allows them); ``None`` when unscored."""
    score_100: float | None
    unscored_reason: str | None
    judge_model: str
    """The judge model, or ``rule`` for an empty response scored 0 without a call."""
    prompt_id: str
    prompt_version: int
    raw: str | None
    """The judge's answer as received (``None`` when no answer came back)."""
    reason: str | None
    sample_id: str
    language: str
    domain: str
    round: int | None = None
    """The event's user round in its dialogue, from 1 (``None`` when unknown)."""


class OfflineRecord(BaseModel):
    """One line of ``content_offline.jsonl``: the LLM-free values of one TURN_SHIFT event and
    the texts they were computed from."""

    model_config = ConfigDict(extra="forbid")
    event_id: str
    sample_id: str
    language: str
    domain: str
    response_words: int
    truncated: int | None
    qa_f1: float | None
    qa_em: float | None
    user: str
    response: str
    reference: str


class ContentAggregate(IntervalFields):
    """One aggregate row (see the module docstring for scales)."""

    model_config = ConfigDict(extra="forbid")
    language: str
    domain: str
    kind: Literal["judged", "offline"]
    dimension: str
    scale: Literal["0-100", "0-5", "percent", "count"]
    unscored: int
    """Items judged but without a score (never dropped silently)."""
    round: int | None = None
    """``None`` over all events; k for the events of round k (the round-by-round curves of
    judged dimensions, rounds 1 to :data:`CURVE_ROUNDS`, over all languages and domains)."""


class NotComputed(BaseModel):
    """A content dimension that was not computed, and why (shown under every table)."""

    model_config = ConfigDict(extra="forbid")
    dimension: str
    reason: str


class ContentResults(BaseModel):
    """The ``content`` part of ``results.json``."""

    model_config = ConfigDict(extra="forbid")
    settings: dict[str, Any]
    aggregates: list[ContentAggregate]
    not_computed: list[NotComputed]
    usage: dict[str, Any] | None = None
