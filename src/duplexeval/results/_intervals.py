"""The interval fields every aggregate row of a results file carries (its ``Summary`` is
:class:`duplexeval.metrics._stats.Summary`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["IntervalFields"]


class IntervalFields(BaseModel):
    """The fields every aggregate row of a results file carries: :class:`Summary` as stored
    (``n``, ``mean``, ``std``, the 95 % interval and its half width, ``few_events`` = †)."""

    model_config = ConfigDict(extra="forbid")
    n: int = Field(ge=0)
    mean: float | None
    std: float | None
    ci95_low: float | None
    ci95_high: float | None
    ci95_half_width: float | None
    few_events: bool
    ci_method: Literal["t", "wilson", "bootstrap"] = "t"
    """How the interval was made: ``wilson`` (a proportion), ``bootstrap`` (percentile; a
    bounded score, or few events), ``t`` (Student-t; every file of schema version 4 or older)."""
