"""Text for the content metrics: joining words by language, reference text from a dialogue's
word alignment, and the system's and user's words from an analysed transcript.

Conventions:

* Times are dialogue seconds for references (the dataset's alignment) and output-wav seconds
  (``input_start`` = 0) for transcripts, as in :class:`~duplexeval.metrics._base.EventView`.
* Japanese (``ja``) words are joined without spaces, other languages with one space.  The
  official code joins with spaces in every language; its mode (:data:`OFFICIAL_JOINER`) keeps
  that.
* An *utterance* of the reference history is the words of one channel inside one annotated
  ``TURN`` of that channel; words in no TURN (backchannels, short IPUs) form utterances of their
  own, split at silences of :data:`~duplexeval.analysis._segments.SEGMENT_GAP` (0.5 s) or more.
  Utterances are ordered by start time and labelled ``User``/``Model`` by the event's channel
  roles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from duplexeval.analysis._segments import SEGMENT_GAP, SpeechSegment
from duplexeval.data._dialogue import Dialogue, Word
from duplexeval.timeline import TOL, Span

__all__ = ["OFFICIAL_JOINER", "Utterance", "channel_text", "format_history", "join_words",
           "official_history", "official_reference_answer", "reference_answer",
           "reference_history", "words_after"]

OFFICIAL_JOINER = " "
"""The official code's joiner, for every language."""


def joiner_for(language: str) -> str:
    """``""`` for Japanese, ``" "`` otherwise."""
    return "" if language == "ja" else " "


def join_words(texts: Iterable[str], language: str) -> str:
    """Word texts (stripped, empty ones dropped) joined by the language's rule."""
    return joiner_for(language).join(t.strip() for t in texts if t.strip())


@dataclass(frozen=True)
class Utterance:
    """One line of a history: who spoke (``User`` or ``Model``), when, and what."""

    role: str
    start: float
    text: str


def format_history(utterances: Sequence[Utterance], empty: str = "(nothing said yet)") -> str:
    """``Role: text`` lines in order (``empty`` when there are none)."""
    lines = [f"{u.role}: {u.text}" for u in utterances if u.text]
    return "\n".join(lines) if lines else empty


def _turn_utterances(words: list[Word], turns: list[Span]) -> tuple[list[list[Word]], list[Word]]:
    grouped: list[list[Word]] = [[] for _ in turns]
    loose: list[Word] = []
    for w in words:
        index = next((i for i, t in enumerate(turns)
                      if t.start - TOL <= w.start <= t.end + TOL), None)
        if index is None:
            loose.append(w)
        else:
            grouped[index].append(w)
    return [g for g in grouped if g], loose


def _split_at_gaps(words: list[Word]) -> list[list[Word]]:
    out: list[list[Word]] = []
    for w in words:
        if out and w.start - out[-1][-1].end < SEGMENT_GAP:
            out[-1].append(w)
        else:
            out.append([w])
    return out


def reference_history(dialogue: Dialogue, user_channel: int, start: float, end: float,
                      language: str) -> list[Utterance]:
    """The reference utterances (both channels) that start in ``[start, end)`` dialogue
    seconds: what was said in the context the system heard before the current user turn."""
    out: list[Utterance] = []
    for channel in (0, 1):
        words = [w for w in dialogue.words_on(channel) if start - TOL <= w.start < end - TOL]
        groups, loose = _turn_utterances(words, dialogue.turns(channel))
        role = "User" if channel == user_channel else "Model"
        for group in groups + _split_at_gaps(loose):
            out.append(Utterance(role, group[0].start, join_words((w.text for w in group),
                                                                  language)))
    return sorted(out, key=lambda u: u.start)


def official_history(dialogue: Dialogue, user_channel: int, event_start: float) -> list[Utterance]:
    """The official consistency context: every reference word (both channels) starting before
    ``event_start``, joined into an utterance only while a word starts exactly where the
    previous one ended (so every pause starts a new line), space-joined in every language."""
    out: list[Utterance] = []
    for channel in (0, 1):
        role = "User" if channel == user_channel else "Model"
        group: list[Word] = []
        for w in (w for w in dialogue.words_on(channel) if w.start < event_start):
            if group and w.start != group[-1].end:
                out.append(Utterance(role, group[0].start,
                                     OFFICIAL_JOINER.join(x.text for x in group)))
                group = []
            group.append(w)
        if group:
            out.append(Utterance(role, group[0].start, OFFICIAL_JOINER.join(x.text for x in group)))
    return sorted(out, key=lambda u: u.start)


def reference_answer(dialogue: Dialogue, system_channel: int, onset: float,
                     language: str) -> str:
    """The whole reference response turn: the words of the system channel's TURN that starts
    at ``onset`` (the TURN_SHIFT's end, the reference response onset), pauses included.
    Without such a TURN, the words of the TURN containing ``onset``; else ``""``."""
    turns = dialogue.turns(system_channel)
    turn = next((t for t in turns if abs(t.start - onset) <= TOL), None)
    if turn is None:
        turn = next((t for t in turns if t.start - TOL <= onset <= t.end + TOL), None)
    if turn is None:
        return ""
    words = [w for w in dialogue.words_on(system_channel)
             if turn.start - TOL <= w.start <= turn.end + TOL]
    return join_words((w.text for w in words), language)


def official_reference_answer(dialogue: Dialogue, system_channel: int, onset: float) -> str:
    """The official QA reference: system-channel words from the one starting exactly at
    ``onset``, extended while each next word starts exactly where the previous ended, so it
    stops at the first pause; space-joined; ``""`` when no word starts at ``onset``."""
    words = dialogue.words_on(system_channel)
    first = next((i for i, w in enumerate(words) if w.start == onset), None)
    if first is None:
        return ""
    picked = [words[first]]
    for w in words[first + 1:]:
        if w.start != picked[-1].end:
            break
        picked.append(w)
    return OFFICIAL_JOINER.join(w.text for w in picked)


def words_after(segments: Iterable[SpeechSegment], channel: int, t: float,
                language: str) -> tuple[str, int]:
    """The text and word count of ``channel``'s words that end after ``t`` (output-wav
    seconds): the speech inside the event window."""
    chunks = [c for s in segments if s.channel == channel for c in s.chunks if c.end > t + TOL]
    chunks.sort(key=lambda c: (c.start, c.end))
    return join_words((c.text for c in chunks), language), len(chunks)


def channel_text(segments: Iterable[SpeechSegment], channel: int,
                 joiner: str = OFFICIAL_JOINER) -> str:
    """Every segment text of ``channel`` in time order, joined by ``joiner``: the official
    "whole window" transcript of a channel."""
    ordered = sorted((s for s in segments if s.channel == channel), key=lambda s: s.start)
    return joiner.join(s.text.strip() for s in ordered if s.text.strip())
