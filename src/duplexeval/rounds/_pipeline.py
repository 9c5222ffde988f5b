"""Segmenting dialogues into user rounds, by the judge or by the annotator fallback, and the
output file.

Inputs and channel roles
------------------------
A duplexeval dataset folder (the M3 layout: ``{split}.jsonl`` with events, ``txt_align/`` with
words; loaded and validated by :func:`duplexeval.data.load_dataset`) or one alignment file
(``channel<TAB>start<TAB>end<TAB>word`` per line; its events come from the annotator).  Both
speakers are on their own channel; ``user_channel`` (default 0, the left channel, as in the
MTR README and in the run directory's samples) is the user whose rounds are segmented, the
other channel is the assistant.  (MTR's own quality script maps the *right* channel to the
user; pass ``user_channel=1`` for data laid out that way.)

With a judge
------------
Each dialogue with words is asked k times (:mod:`.propose`); the answers are read and the
valid ones combined (:mod:`.rounds`: merge at 30 % IoU, medians, majority vote, overlap
resolution).  When no more than half of the k answers are valid (a failing judge), or the
dialogue has no words to show, the dialogue falls back to the annotator and the record says
why (``fallback_reason``); it is never dropped.

The output
----------
One JSON line per dialogue, in input order (:meth:`Segmentation.to_json`)::

    {"dialogue_id": "chat_0001", "method": "judge", "user_channel": 0, "span": [0.0, 120.0],
     "language": "en",
     "rounds": [{"round": 0, "user": [0.3, 2.82], "assistant_window": [0.3, 14.57],
                 "votes": 6}, ...],
     "k": 6, "valid_proposals": 5, "discarded_proposals": 1,
     "discarded": [{"attempt": 3, "reason": "no JSON object in the answer"}],
     "proposals": [[[0.3, 2.8], ...], null, ...],
     "overlap_threshold": 0.3, "judge_model": "...", "prompt_id": "segment.rounds",
     "prompt_version": 1, "temperature": 0.7, "fallback_reason": null}

``votes`` count the valid proposals with the round (``null`` for the fallback); ``proposals``
are the valid answers' rounds by attempt (``null`` for a discarded one).  The fallback's
records have ``k``, ``judge_model``, ``prompt_*`` and ``temperature`` ``null`` when no judge
was given.  The file is written atomically.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._fileio import atomic_write_text, json_line, loads_json
from duplexeval.data._dialogue import Dialogue
from duplexeval.data._m3 import read_alignment
from duplexeval.data._validate import load_dataset
from duplexeval.errors import DatasetInvalid, DuplexevalError
from duplexeval.judge._batch import BatchOutcome, judge_batch
from duplexeval.judge._client import JudgeClient
from duplexeval.judge._retry import RetryPolicy
from duplexeval.judge._store import AnswerCache
from duplexeval.judge._templates import load_prompt
from duplexeval.rounds._consensus import (
    OVERLAP_THRESHOLD,
    Round,
    assistant_windows,
    combine_proposals,
)
from duplexeval.rounds._fallback import fallback_rounds
from duplexeval.rounds._propose import (
    PROMPT_ID,
    Proposal,
    dialogue_language,
    read_proposal,
    render_items,
)
from duplexeval.timeline import Span

__all__ = [
    "JudgeInfo",
    "SegmentSettings",
    "Segmentation",
    "load_dialogues",
    "read_rounds",
    "segment_fallback",
    "segment_with_judge",
    "write_segmentations",
]


@dataclass(frozen=True)
class SegmentSettings:
    """What to segment and how: the user's channel, k asks, the merge threshold, and the
    language of the prompt (``None``: the dialogue's, else detected)."""

    user_channel: int = 0
    k: int = 6
    threshold: float = OVERLAP_THRESHOLD
    language: str | None = None

    def __post_init__(self) -> None:
        if self.user_channel not in (0, 1):
            raise ValueError(f"user_channel must be 0 or 1, got {self.user_channel}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")


@dataclass(frozen=True)
class JudgeInfo:
    """Which judge proposed: model, prompt id and version, temperature."""

    model: str
    prompt_id: str
    prompt_version: int
    temperature: float | None


@dataclass(frozen=True)
class Segmentation:
    """One dialogue's rounds and how they were found."""

    dialogue_id: str
    method: str
    """``"judge"`` or ``"fallback"``."""
    settings: SegmentSettings
    span: Span
    rounds: tuple[Round, ...]
    language: str | None = None
    proposals: tuple[Proposal, ...] = ()
    judge: JudgeInfo | None = None
    fallback_reason: str | None = None

    @property
    def valid_proposals(self) -> int:
        """Answers that were usable segmentations."""
        return sum(p.valid for p in self.proposals)

    @property
    def discarded_proposals(self) -> int:
        """Answers discarded (malformed, out of range, or a failed call)."""
        return len(self.proposals) - self.valid_proposals

    def to_json(self) -> dict[str, Any]:
        """The output line (see the module docstring)."""
        windows = assistant_windows(self.rounds, self.span.end)
        judge = self.judge
        return {
            "dialogue_id": self.dialogue_id, "method": self.method,
            "user_channel": self.settings.user_channel,
            "span": [self.span.start, self.span.end], "language": self.language,
            "rounds": [{"round": i, "user": [r.start, r.end], "assistant_window":
                        [w.start, w.end], "votes": r.votes}
                       for i, (r, w) in enumerate(zip(self.rounds, windows, strict=True))],
            "k": self.settings.k if judge else None,
            "valid_proposals": self.valid_proposals if judge else None,
            "discarded_proposals": self.discarded_proposals if judge else None,
            "discarded": [{"attempt": p.attempt, "reason": p.problem}
                          for p in self.proposals if not p.valid],
            "proposals": [[[s.start, s.end] for s in p.rounds] if p.rounds is not None
                          else None for p in self.proposals],
            "overlap_threshold": self.settings.threshold,
            "judge_model": judge.model if judge else None,
            "prompt_id": judge.prompt_id if judge else None,
            "prompt_version": judge.prompt_version if judge else None,
            "temperature": judge.temperature if judge else None,
            "fallback_reason": self.fallback_reason,
        }


def _span(dialogue: Dialogue) -> Span:
    return Span(0.0, max(0.0, dialogue.duration))


def segment_fallback(dialogue: Dialogue, settings: SegmentSettings,
                     reason: str | None = None, *, proposals: tuple[Proposal, ...] = (),
                     judge: JudgeInfo | None = None,
                     language: str | None = None) -> Segmentation:
    """The annotator's rounds for one dialogue (``reason``: why the judge's were not used)."""
    span = _span(dialogue)
    rounds = fallback_rounds(dialogue, settings.user_channel, span)
    return Segmentation(dialogue.id, "fallback", settings, span, tuple(rounds),
                        language=language, proposals=proposals, judge=judge,
                        fallback_reason=reason)


def _from_answers(dialogue: Dialogue, settings: SegmentSettings, proposals: list[Proposal],
                  judge: JudgeInfo, language: str) -> Segmentation:
    valid = [p.rounds for p in proposals if p.rounds is not None]
    if 2 * len(valid) <= settings.k:
        reason = (f"only {len(valid)} of {settings.k} judge answers were usable (more than "
                  f"half are needed)")
        return segment_fallback(dialogue, settings, reason, proposals=tuple(proposals),
                                judge=judge, language=language)
    span = _span(dialogue)
    rounds = combine_proposals(valid, span, settings.threshold)
    return Segmentation(dialogue.id, "judge", settings, span, tuple(rounds), language=language,
                        proposals=tuple(proposals), judge=judge)


def segment_with_judge(dialogues: Sequence[Dialogue], client: JudgeClient,
                       cache: AnswerCache, settings: SegmentSettings = SegmentSettings(), *,
                       default_language: str | None = None, max_concurrency: int = 4,
                       retry: RetryPolicy = RetryPolicy()
                       ) -> tuple[list[Segmentation], BatchOutcome]:
    """Ask the judge k times per dialogue (one batch for all) and combine the answers."""
    template = load_prompt(PROMPT_ID)
    judge = JudgeInfo(client.model, PROMPT_ID, template.prompt.version,
                      client.sampling.temperature)
    languages, items = {}, []
    for d in dialogues:
        languages[d.id] = settings.language or dialogue_language(d, default_language)
        if d.words:
            items += render_items(d, settings.user_channel, settings.k, languages[d.id],
                                  _span(d).end)
    outcome = judge_batch(client, items, cache, max_concurrency=max_concurrency, retry=retry)
    results = {r.item_id: r for r in outcome.results}
    out = []
    for d in dialogues:
        if not d.words:
            out.append(segment_fallback(d, settings, "the dialogue has no words to show the "
                                        "judge", judge=judge, language=languages[d.id]))
            continue
        proposals = [read_proposal(i, results[f"{d.id}#{i}"], _span(d))
                     for i in range(settings.k)]
        out.append(_from_answers(d, settings, proposals, judge, languages[d.id]))
    return out, outcome


def load_dialogues(path: Path, split: str = "test") -> tuple[list[Dialogue], str | None]:
    """The dialogues of a dataset folder or of one alignment file, and the dataset's language
    (``None`` for a file); bad input raises a :class:`~duplexeval.errors.DuplexevalError`
    naming the file."""
    if not path.exists():
        raise DuplexevalError(f"{path}: no such file or folder")
    if path.is_dir():
        dataset, _warnings = load_dataset(path, split)
        return list(dataset.dialogues), dataset.language
    words, problems = read_alignment(path)
    if problems:
        raise DatasetInvalid(problems)
    if not words:
        raise DuplexevalError(f"{path}: no words (expected channel<TAB>start<TAB>end<TAB>word "
                              "lines)")
    return [Dialogue(id=path.stem, events=(), words=tuple(words))], None


def write_segmentations(path: Path, segmentations: Sequence[Segmentation]) -> None:
    """The output JSONL, written atomically."""
    atomic_write_text(path, "".join(json_line(s.to_json()) for s in segmentations))


def read_rounds(path: Path) -> dict[tuple[str, int], list[Round]]:
    """The rounds of a ``duplexeval segment`` output, by (dialogue id, user channel); a bad
    line is a one-line error naming the file and line."""
    out: dict[tuple[str, int], list[Round]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DuplexevalError(f"{path}: cannot read the rounds file ({exc})") from None
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = loads_json(line)
            key = (str(record["dialogue_id"]), int(record["user_channel"]))
            out[key] = [Round(float(r["user"][0]), float(r["user"][1]))
                        for r in record["rounds"]]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise DuplexevalError(f"{path}:{no}: not a segment output line ({exc!r})") from None
    return out
