"""Content metrics that need no LLM, always computed on TURN_SHIFT events.

* ``qa_f1``, ``qa_em`` (task domain only): token F1 and exact match of the system's response
  against the whole reference response turn, as TopiOCQA's evaluation computes them (SQuAD
  normalisation: lower case, punctuation and the articles *a*, *an*, *the* removed, whitespace
  collapsed; F1 over the bags of tokens).  Japanese has no spaces and many spellings of one
  word, so both sides are first converted to their katakana reading
  (:func:`~duplexeval.speech._japanese.to_kana`, OpenJTalk) and compared character by character.
  Per event the values are in ``[0, 1]``; tables show them ×100.
* ``response_words``: the number of words (ASR chunks) the system said inside the event window
  (after the user's turn end).  For Japanese, Whisper's "words" are short (often one kanji),
  so counts are not comparable across languages.
* ``truncated``: 1 when the system was still speaking at the end of the window (its last
  segment ends within :data:`TRUNCATION_MARGIN` of the window end), so the judged response
  may be cut; 0 otherwise.  ``None`` for a silent response.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from functools import cache

from duplexeval.speech._japanese import to_kana

__all__ = ["TRUNCATION_MARGIN", "exact_match", "normalize_answer", "qa_tokens", "token_f1"]

TRUNCATION_MARGIN = 0.1
"""Seconds: speech ending this close to the window end counts as cut by it."""

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD/TopiOCQA normalisation: lower case, no punctuation, no articles, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


@cache
def _kana(text: str) -> str:
    return to_kana(text)


def qa_tokens(text: str, language: str) -> list[str]:
    """The tokens compared: normalised words, or katakana characters for Japanese."""
    if language == "ja":
        return list(_kana(text)) if text.strip() else []
    return normalize_answer(text).split()


def token_f1(prediction: str, reference: str, language: str) -> float:
    """Token F1 of ``prediction`` against ``reference`` (1.0 when both are empty, 0.0 when only
    one is)."""
    pred, ref = qa_tokens(prediction, language), qa_tokens(reference, language)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, reference: str, language: str) -> float:
    """1.0 when the normalised token sequences are equal, else 0.0."""
    return float(qa_tokens(prediction, language) == qa_tokens(reference, language))
