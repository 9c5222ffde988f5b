"""Reading a judge's answer: a JSON object with exactly an integer ``score`` (or, where the
prompt allows half points, a multiple of its step) and a string ``reason``.

Conventions: the answer may be the bare object, the object inside a fenced block (three
backquotes with an optional ``json`` tag), or the object with prose around it; the *first*
JSON object in the text is taken, and nothing after it is read.  The object must have exactly
the two keys; the score must be a JSON integer (not a boolean, not ``2.0``) within the prompt's
declared range, both ends inclusive.  Anything else is *unscored*, with a one-line reason.

Prompts whose answer kind is ``"json"`` are read by :func:`parse_json_object`: the first JSON
object, whatever its keys (the caller checks them).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["ParsedAnswer", "first_json_object", "parse_answer", "parse_json_object"]

_DECODER = json.JSONDecoder()
_KEYS = {"score", "reason"}


@dataclass(frozen=True)
class ParsedAnswer:
    """A parsed answer: ``score`` and ``reason`` when valid, else ``unscored_reason``."""

    score: int | float | None
    reason: str | None
    unscored_reason: str | None


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (scanning each ``{`` in turn), or ``None``."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _unscored(reason: str) -> ParsedAnswer:
    return ParsedAnswer(score=None, reason=None, unscored_reason=reason)


def parse_answer(text: str, score_min: int, score_max: int,
                 score_step: float = 1.0) -> ParsedAnswer:
    """Check ``text`` against the answer format and the range ``[score_min, score_max]``; with
    ``score_step`` below 1 (half points: 0.5) a JSON number on that grid is a score too
    (``4.5``; ``4.25`` is not), kept as an int when it is whole."""
    obj = first_json_object(text)
    if obj is None:
        return _unscored("no JSON object in the answer")
    if set(obj) != _KEYS:
        return _unscored(f"the JSON object has keys {sorted(obj)}, expected ['reason', 'score']")
    score, reason = obj["score"], obj["reason"]
    if score_step < 1 and isinstance(score, float) and not isinstance(score, bool):
        steps = (score - score_min) / score_step
        if not math.isfinite(score) or abs(steps - round(steps)) > 1e-9:
            return _unscored(f"score {json.dumps(score)} is not a multiple of {score_step}")
        score = int(score) if float(score).is_integer() else score
    if isinstance(score, bool) or not isinstance(score, (int, float)) or (
            isinstance(score, float) and score_step >= 1):
        return _unscored(f"score {json.dumps(score)} is not an integer"
                         + ("" if score_step >= 1 else f" or a multiple of {score_step}"))
    if not isinstance(reason, str):
        return _unscored(f"reason {json.dumps(reason)} is not a string")
    if not score_min <= score <= score_max:
        return _unscored(f"score {score} is outside the range {score_min}-{score_max}")
    return ParsedAnswer(score=score, reason=reason, unscored_reason=None)


def parse_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The first JSON object in ``text`` and ``None``, or ``None`` and the reason."""
    obj = first_json_object(text)
    return (obj, None) if obj is not None else (None, "no JSON object in the answer")
