"""The built-in, deterministic responder: a retrieval baseline plus acknowledgements.

Retrieval (dialogues with ``extra["qa_references"]``, the synthesized QA suites): the user's
ASR text is compared with every reference question; with the best match's similarity at or
above ``threshold`` the reply is that question's reference answer.  Similarity is
:class:`difflib.SequenceMatcher`'s ratio (0-1) of the normalised texts as sequences of units
(:func:`normalise`: words, or single characters for Japanese); the default threshold 0.5
(``match_threshold``) accepts ASR errors and a question cut at a pause, and rejects the other
questions of the same dialogue: on ``m3-qa-en`` the asked question scored 0.67-1.0 against the
ASR text (first two dialogues), the best other question at most 0.31, and two questions of one
dialogue are at most 0.44 alike.

It is a *retrieval baseline*: it reads the reference answers from the dataset, so it measures
the timing of a cascade with a perfect-content back end, not a system's knowledge.

Otherwise the reply is an acknowledgement drawn from the session's random generator:
"I see." / "Sure, go on." in English, "なるほど。" / "そうなんですね。" in Japanese.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ACKNOWLEDGEMENTS", "Match", "acknowledgement", "best_match", "normalise"]

ACKNOWLEDGEMENTS: dict[str, tuple[str, ...]] = {
    "en": ("I see.", "Sure, go on."),
    "ja": ("なるほど。", "そうなんですね。"),
}
"""Replies when nothing is retrieved, by language."""
_CJK = 0x2E80  # from here on: CJK radicals, kana, kanji (compared per character)


@dataclass(frozen=True)
class Match:
    """The reference question most similar to the user's words."""

    turn: int
    question: str
    answer: str
    score: float


def normalise(text: str) -> list[str]:
    """Comparison units of ``text`` (NFKC, case-folded, punctuation dropped): words, except
    that runs of CJK characters (kana, kanji) are split into single characters, so Japanese,
    written without spaces, is compared character by character."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    units: list[str] = []
    for word in re.findall(r"\w+", folded):
        if any(ord(ch) >= _CJK for ch in word):
            units.extend(word)
        else:
            units.append(word)
    return units


def best_match(text: str, references: Sequence[Mapping[str, Any]]) -> Match | None:
    """The reference (``{"turn", "question", "answer"}``) whose question is most similar to
    ``text`` (first one on ties), or ``None`` without references or text."""
    said = normalise(text)
    best: Match | None = None
    if not said:
        return None
    for ref in references:
        question = str(ref.get("question", ""))
        answer = str(ref.get("answer", ""))
        if not question or not answer:
            continue
        score = difflib.SequenceMatcher(None, said, normalise(question), autojunk=False).ratio()
        if best is None or score > best.score:
            best = Match(int(ref.get("turn", -1)), question, answer, score)
    return best


def acknowledgement(language: str, rng: np.random.Generator) -> str:
    """One acknowledgement of ``language`` (English for others), drawn from ``rng``."""
    options = ACKNOWLEDGEMENTS.get(language, ACKNOWLEDGEMENTS["en"])
    return options[int(rng.integers(0, len(options)))]
