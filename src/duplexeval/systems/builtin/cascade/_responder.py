"""The built-in, deterministic responder: a retrieval baseline plus acknowledgements.

Retrieval over QA references (oracle ``qa_references``, the synthesized QA suites): the user's
ASR text is compared with every reference question; with the best match's similarity at or
above ``threshold`` the reply is that question's reference answer.  Similarity is
:class:`difflib.SequenceMatcher`'s ratio (0-1) of the normalised texts as sequences of units
(:func:`normalise`: words, or single characters for Japanese); the default threshold 0.5
(``match_threshold``) accepts ASR errors and a question cut at a pause, and rejects the other
questions of the same dialogue: on ``m3-qa-en`` the asked question scored 0.67-1.0 against the
ASR text (first two dialogues), the best other question at most 0.31, and two questions of one
dialogue are at most 0.44 alike.

Retrieval over the reference transcript (oracle ``reference_transcript``, dialogues without QA
references, e.g. the chat suites): :func:`transcript_pairs` turns the transcript into the same
question/answer form: every window of up to :data:`MAX_WINDOW` consecutive user IPUs of one
user turn is a question, and its answer is the reference system's next turn after the window
(its TURN IPUs up to the next user TURN IPU; system backchannels are skipped).  Only the words
are retrieved: when to speak stays the cascade's own decision, so a matched pause is answered
with the reference's *next* system turn even though the reference stayed silent there.

Both are *retrieval baselines*: they read reference content from the dataset, so they measure
the timing of a cascade with a perfect-content back end, not a system's knowledge (declared as
oracle data and marked in the tables).

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

__all__ = ["ACKNOWLEDGEMENTS", "MAX_WINDOW", "Match", "acknowledgement", "best_match",
           "normalise", "transcript_pairs"]

ACKNOWLEDGEMENTS: dict[str, tuple[str, ...]] = {
    "en": ("I see.", "Sure, go on."),
    "ja": ("なるほど。", "そうなんですね。"),
}
"""Replies when nothing is retrieved, by language."""
MAX_WINDOW = 4
"""Most consecutive user IPUs one transcript question spans."""
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


def transcript_pairs(transcript: Sequence[Mapping[str, str]], separator: str = " ",
                     ) -> list[dict[str, Any]]:
    """Question/answer pairs (the form :func:`best_match` takes) from a reference transcript
    (``{"role": "user" | "system", "kind": "turn" | "bc", "text"}`` IPUs in time order): each
    window of 1..:data:`MAX_WINDOW` consecutive user IPUs not separated by a system TURN IPU,
    joined with ``separator``, answered by the texts of the next run of system TURN IPUs."""
    entries = [e for e in transcript if not (e.get("role") == "system" and e.get("kind") == "bc")]
    pairs: list[dict[str, Any]] = []
    for i, first in enumerate(entries):
        if first.get("role") != "user":
            continue
        for j in range(i, min(i + MAX_WINDOW, len(entries))):
            if entries[j].get("role") != "user":
                break
            answer = _next_system_turn(entries, j + 1, separator)
            if answer:
                question = separator.join(str(e["text"]) for e in entries[i:j + 1])
                pairs.append({"turn": i, "question": question, "answer": answer})
    return pairs


def _next_system_turn(entries: Sequence[Mapping[str, str]], start: int, separator: str) -> str:
    """The joined texts of the first run of system entries at or after ``start``."""
    k = start
    while k < len(entries) and entries[k].get("role") != "system":
        k += 1
    texts = []
    while k < len(entries) and entries[k].get("role") == "system":
        texts.append(str(entries[k]["text"]))
        k += 1
    return separator.join(texts)
