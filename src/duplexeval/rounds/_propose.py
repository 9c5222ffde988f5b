"""Asking the judge for rounds: the transcript it is shown, the k items, and reading answers.

The transcript
--------------
Each channel's words are grouped into utterances (words merge while the silence between them
is at most ``ipu_gap``, 0.5 s, as the annotator's IPUs), and the utterances of both channels
are listed by start time, one line each, with the channel's role::

    [  0.30 -   2.82] USER: So what did you do over the weekend?
    [  3.07 -   6.43] ASSISTANT: We went hiking up the ridge ...
    [  4.27 -   4.61] USER: yeah

Words are joined with spaces, or without for Japanese (``ja``).  The prompt is
``segment.rounds`` (``judge/prompt_texts/segment.rounds.toml``; English, and Japanese for a
Japanese transcript).

The k asks
----------
Attempt ``i`` (0 to k - 1) renders the same prompt with ``attempt = i + 1`` in the user
message, so each attempt is its own cache entry: a rerun answers every attempt from the cache,
raising k asks only for the new attempts, and with a temperature above 0 the attempts are k
independent samples (the default temperature, :data:`PROPOSAL_TEMPERATURE`, is 0.7: at 0 a
deterministic server would return k near-copies and the vote would add nothing).

Reading an answer
-----------------
A valid answer is a JSON object with a list ``rounds`` of objects with numeric ``start`` and
``end`` (seconds, ``start < end``, within the transcript ``[0, duration]`` give or take
:data:`SLACK` seconds for rounding; times are then clipped to it).  An empty list is a valid
proposal (no user round).  Anything else discards the **whole** answer (a partly wrong
segmentation is not a trustworthy vote) and is counted, with its reason: no JSON object, no
``rounds`` list, a round that is not an object, a time that is not a finite number, an empty or
reversed round, or a round outside the transcript.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from duplexeval.data._dialogue import Dialogue, Word
from duplexeval.events import AnnotationRules, ipus_from_spans
from duplexeval.judge._records import JudgeItem, JudgeResult, Sampling
from duplexeval.judge._templates import load_prompt
from duplexeval.timeline import Span

__all__ = [
    "PROMPT_ID",
    "PROPOSAL_MAX_TOKENS",
    "PROPOSAL_TEMPERATURE",
    "SLACK",
    "Proposal",
    "Utterance",
    "dialogue_language",
    "proposal_sampling",
    "read_proposal",
    "render_items",
    "render_transcript",
    "utterances",
]

PROMPT_ID = "segment.rounds"
PROPOSAL_TEMPERATURE = 0.7
"""Default sampling temperature of the k asks (> 0, so that they are independent samples)."""
PROPOSAL_MAX_TOKENS = 2048
"""Default answer length limit: about 25 tokens a round, room for 80 rounds."""
SLACK = 0.05
"""Seconds a proposed time may lie outside the transcript (then clipped to it)."""

_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@dataclass(frozen=True)
class Utterance:
    """One channel's words merged across short silences."""

    channel: int
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Proposal:
    """One judge answer read: its rounds when valid, else the reason it was discarded."""

    attempt: int
    rounds: tuple[Span, ...] | None
    problem: str | None = None

    @property
    def valid(self) -> bool:
        """Whether the answer was a usable segmentation."""
        return self.rounds is not None


def proposal_sampling(temperature: float = PROPOSAL_TEMPERATURE,
                      max_tokens: int = PROPOSAL_MAX_TOKENS) -> Sampling:
    """The sampling settings for the k asks (give them to the
    :class:`~duplexeval.judge._client.JudgeClient`)."""
    return Sampling(temperature=temperature, max_tokens=max_tokens)


def dialogue_language(dialogue: Dialogue, default: str | None = None) -> str:
    """The dialogue's language, else ``default``, else ``ja`` when its words hold kana or
    kanji, else ``en``."""
    if dialogue.language:
        return dialogue.language
    if default:
        return default
    words = dialogue.words or ()
    return "ja" if any(_JAPANESE.search(w.text) for w in words) else "en"


def utterances(words: Sequence[Word], rules: AnnotationRules = AnnotationRules(),
               joiner: str = " ") -> list[Utterance]:
    """Both channels' utterances, sorted by (start, channel)."""
    out: list[Utterance] = []
    for channel in sorted({w.channel for w in words}):
        mine = sorted((w for w in words if w.channel == channel and w.end >= w.start),
                      key=lambda w: (w.start, w.end))
        ipus = ipus_from_spans(channel, [w.span for w in mine], rules)
        for ipu in ipus:
            text = joiner.join(w.text for w in mine if ipu.span.contains(w.span))
            out.append(Utterance(channel, ipu.span.start, ipu.span.end, text))
    return sorted(out, key=lambda u: (u.start, u.channel))


def render_transcript(dialogue: Dialogue, user_channel: int, language: str) -> str:
    """The transcript lines shown to the judge (see the module docstring)."""
    joiner = "" if language == "ja" else " "
    lines = []
    for u in utterances(dialogue.words or (), joiner=joiner):
        role = "USER" if u.channel == user_channel else "ASSISTANT"
        lines.append(f"[{u.start:7.2f} - {u.end:7.2f}] {role}: {u.text}")
    return "\n".join(lines)


def render_items(dialogue: Dialogue, user_channel: int, k: int, language: str,
                 duration: float) -> list[JudgeItem]:
    """The k items for one dialogue, ids ``{dialogue id}#{attempt}``."""
    template = load_prompt(PROMPT_ID)
    transcript = render_transcript(dialogue, user_channel, language)
    return [template.render(f"{dialogue.id}#{i}", language, transcript=transcript,
                            duration=f"{duration:.2f}", attempt=str(i + 1))
            for i in range(k)]


def _time(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _round(obj: Any, span: Span) -> Span | str:
    """One proposed round, or the reason it is not one."""
    if not isinstance(obj, dict) or "start" not in obj or "end" not in obj:
        return "a round is not an object with start and end"
    start, end = _time(obj["start"]), _time(obj["end"])
    if start is None or end is None:
        return f"round times {obj['start']!r}, {obj['end']!r} are not numbers"
    if not start < end:
        return f"round [{start}, {end}] is empty or reversed"
    lo, hi = max(start, span.start), min(end, span.end)
    if start < span.start - SLACK or end > span.end + SLACK or not lo < hi:
        return (f"round [{start}, {end}] lies outside the transcript "
                f"[{span.start:g}, {span.end:g}]")
    return Span(lo, hi)


def read_proposal(attempt: int, result: JudgeResult, span: Span) -> Proposal:
    """Check one answer (see the module docstring)."""
    if result.answer is None:
        return Proposal(attempt, None, result.unscored_reason or "no answer")
    rounds = result.answer.get("rounds")
    if not isinstance(rounds, list):
        return Proposal(attempt, None, "the answer has no list 'rounds'")
    spans = []
    for obj in rounds:
        checked = _round(obj, span)
        if isinstance(checked, str):
            return Proposal(attempt, None, checked)
        spans.append(checked)
    return Proposal(attempt, tuple(spans))
