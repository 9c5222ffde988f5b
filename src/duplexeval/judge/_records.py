"""What the judge client takes in and gives back: a prompt's identity, one item to judge, and
the result record for it.

Conventions:

* A prompt is identified by ``prompt_id`` and an integer ``version``; its scores are integers
  in ``[score_min, score_max]`` (both inclusive).  Its ``answer`` kind says how answers are
  read: ``"score"`` (the ``{"score", "reason"}`` object) or ``"json"`` (any JSON object, kept
  in :attr:`JudgeResult.answer` for the caller to check).  Change the version whenever the
  wording or the scale changes: the version is part of the cache key, so old answers are not
  reused.
* Messages are already rendered: ``(role, content)`` pairs in the order sent.
* A result is *scored* when ``score`` is an integer (a ``"json"`` prompt: when ``answer`` is
  an object), and *unscored* otherwise; then ``unscored_reason`` says why (a malformed
  answer, a score out of range, a call that finally failed).  Nothing judged is ever dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["JudgeItem", "JudgePrompt", "JudgeResult", "Sampling"]


@dataclass(frozen=True)
class JudgePrompt:
    """A prompt's identity, its declared score range (inclusive) and its answer kind.

    ``answer`` is not part of the cache key (:func:`~.store.cache_key` uses the id and the
    version, which fix it), so keys of score prompts are unchanged by it."""

    prompt_id: str
    version: int
    score_min: int
    score_max: int
    answer: str = "score"
    """``"score"``: ``{"score", "reason"}``; ``"json"``: any JSON object."""
    score_step: float = 1.0
    """The score's resolution: 1 (integers) or, for a prompt that allows half points (MTR's
    dialogue quality), 0.5."""
    scale: str = "normalised"
    """How aggregates show the score: ``normalised`` to 0-100 (M3's 0/1/2, as its paper
    reports them; 0/1 rates as percent) or ``own`` (the prompt's scale, e.g. FLEXI's and
    MTR's 0-5, as their papers print them)."""

    def __post_init__(self) -> None:
        if self.scale not in ("normalised", "own"):
            raise ValueError(f"prompt {self.prompt_id}: scale must be 'normalised' or 'own'")
        if not 0 < self.score_step <= 1 or (1 / self.score_step) % 1:
            raise ValueError(f"prompt {self.prompt_id}: score_step must be 1 or 1/k, got "
                             f"{self.score_step}")
        if self.answer not in ("score", "json"):
            raise ValueError(f"prompt {self.prompt_id}: answer must be 'score' or 'json'")
        if self.score_min > self.score_max:
            raise ValueError(f"prompt {self.prompt_id}: score_min {self.score_min} "
                             f"> score_max {self.score_max}")


@dataclass(frozen=True)
class JudgeItem:
    """One thing to judge: a caller-chosen id, the prompt it was rendered from, and the
    rendered chat messages as ``(role, content)`` pairs."""

    item_id: str
    prompt: JudgePrompt
    messages: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Sampling:
    """Sampling settings sent with every request (and part of the cache key).  ``None`` fields
    are not sent, so the server's default applies."""

    temperature: float | None = 0.0
    max_tokens: int | None = 256
    top_p: float | None = None
    seed: int | None = None

    def as_request(self) -> dict[str, float | int]:
        """The fields to send, without the unset ones."""
        fields = {"temperature": self.temperature, "max_tokens": self.max_tokens,
                  "top_p": self.top_p, "seed": self.seed}
        return {k: v for k, v in fields.items() if v is not None}


@dataclass(frozen=True)
class JudgeResult:
    """The record of one judged item.

    ``score`` is ``None`` when unscored, with ``unscored_reason`` set; ``reason`` is the judge's
    own reason when it gave a well-formed answer.  ``raw`` is the answer text as received
    (``None`` when no answer came back).  Token counts are the call's usage as reported by the
    server (0 when it reported none); ``cached`` is true when the answer came from the cache
    (no request was made); ``attempts`` counts HTTP requests made for this item in this run
    (0 when cached).
    """

    item_id: str
    score: int | float | None
    reason: str | None
    unscored_reason: str | None
    judge_model: str
    prompt_id: str
    prompt_version: int
    raw: str | None
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    attempts: int
    answer: dict[str, Any] | None = None
    """A ``"json"`` prompt's parsed answer object (``None`` for score prompts, or when the
    answer had no JSON object; then ``unscored_reason`` says so)."""

    @property
    def scored(self) -> bool:
        """Whether the item has a score (a ``"json"`` prompt: a parsed answer object)."""
        return self.score is not None or self.answer is not None
