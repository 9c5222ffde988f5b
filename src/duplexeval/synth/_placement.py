"""Positions inside a synthesized turn, and where each spec turn was placed.

A position (``after_word`` / ``after_char``, see :mod:`duplexeval.synth._spec`) is resolved to
the last engine word that ends at it.  Times are seconds: relative to the utterance's first
sample in :class:`_Piece`, from the start of the dialogue in :class:`PlacedTurn`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from duplexeval.data._dialogue import Word
from duplexeval.speech._tts import TimedWord
from duplexeval.synth._spec import _Position
from duplexeval.timeline import Span

__all__ = ["PlacedTurn"]


@dataclass
class _Piece:
    """A prepared utterance at the dataset rate: speech only, words from its first sample."""

    audio: np.ndarray
    words: list[TimedWord]
    text: str

    @property
    def duration(self) -> float:
        return float(self.words[-1].end) if self.words else 0.0


def _char_ends(text: str, words: Sequence[TimedWord]) -> list[int]:
    """For each engine word, the offset in ``text`` just after its last character (matched
    in order on letters and digits, case-insensitively)."""
    keys = [(i, ch.lower()) for i, ch in enumerate(text) if ch.isalnum()]
    pos = 0
    ends = []
    for w in words:
        for ch in (c.lower() for c in w.text if c.isalnum()):
            j = pos
            while j < len(keys) and keys[j][1] != ch:
                j += 1
            if j < len(keys):
                pos = j + 1
        ends.append(keys[pos - 1][0] + 1 if pos > 0 else 0)
    return ends


def _char_offset(text: str, position: _Position) -> int:
    if position.after_char is not None:
        return position.after_char
    k = position.after_word or 0
    offset = 0
    for seen, token in enumerate(text.split(), start=1):
        offset = text.index(token, offset) + len(token)
        if seen == k:
            return offset
    return len(text)


def _span_of(start: float, words: Sequence[TimedWord]) -> Span:
    """The span of a clip placed at ``start`` from its first word to its last (rounded to the
    millisecond as :func:`_mix` rounds the words)."""
    return Span(round(start + words[0].start, 3), round(start + words[-1].end, 3))


def _boundary(piece: _Piece, position: _Position) -> int:
    """Index of the last word spoken before ``position`` (at least the first word, at most the
    second to last)."""
    target = _char_offset(piece.text, position)
    ends = _char_ends(piece.text, piece.words)
    idx = 0
    for i, end in enumerate(ends):
        if end <= target + _skippable(piece.text, end, target):
            idx = i
    return max(0, min(idx, len(piece.words) - 2))


def _skippable(text: str, end: int, target: int) -> int:
    """Characters after ``target`` that are punctuation or space (a word may end after them)."""
    n = 0
    while target + n < len(text) and not text[target + n].isalnum():
        n += 1
    return n if end > target else 0


@dataclass(frozen=True)
class PlacedTurn:
    """Where one spec turn was placed: its channel, its start (dialogue seconds) and its words
    relative to that start (pauses inserted), plus the listener's backchannels it carries.

    Times of :meth:`words` and :meth:`time_after` are rounded to the millisecond exactly as
    the word alignments are, so they equal the times of the annotated events.
    """

    index: int
    channel: int
    start: float
    text: str
    timed_words: tuple[TimedWord, ...]
    backchannels: tuple[Span, ...] = ()
    """The listener's backchannels placed in this turn (dialogue seconds; dropped ones are
    absent)."""

    def words(self) -> list[Word]:
        """The turn's words in dialogue time, as written to the alignment."""
        return [Word(self.channel, round(self.start + w.start, 3), round(self.start + w.end, 3),
                     w.text) for w in self.timed_words]

    @property
    def span(self) -> Span:
        """From the first word's start to the last word's end (dialogue seconds)."""
        words = self.words()
        return Span(words[0].start, words[-1].end)

    def word_index(self, position: _Position) -> int:
        """Index of the last word spoken before ``position`` (as the synthesizer places
        pauses, backchannels and interruptions)."""
        return _boundary(_Piece(np.zeros(0, np.float32), list(self.timed_words), self.text),
                         position)

    def time_after(self, position: _Position) -> float:
        """End (dialogue seconds) of the last word spoken before ``position``."""
        return self.words()[self.word_index(position)].end
