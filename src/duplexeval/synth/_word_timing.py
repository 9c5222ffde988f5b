"""Word timing of one synthesized utterance: trimmed to its speech, its pauses where its audio is
silent.

An engine's word timing comes from its phoneme durations (or ASR word timestamps), which put a
word's start at its first phoneme even when that phoneme is silent (the closure of a stop
after a comma: ``"Sorry to cut in, but"`` -- piper's ``but`` starts 0.10-0.16 s before its
audio does), and which leave short spaces that the audio fills.  The M3 annotation rules make a
SHORTPAUSE of every gap > 0 between two words of an IPU, and the analysis finds pauses in a
system's audio with voice activity, so a pause in the alignment that the audio does not carry
(or carries elsewhere) is an event the dataset claims and its audio lacks.  Here the words of
one utterance are fitted to its audio, in this order (:func:`fit_words`):

1. trimmed to its speech (:func:`speech_bounds`), the words clamped into it;
2. spaces shorter than :data:`JOIN_GAP_S` given to the previous word;
3. engine pauses longer than :data:`NATURAL_PAUSE_MAX_S` shortened
   (:func:`cap_natural_pauses`);
4. a short first word joined to the next (:func:`join_lone_first_word`);
5. each remaining pause moved onto the audio's silence (:func:`snap_pauses_to_audio`).

Frames are :data:`TRIM_FRAME_S` long; a frame is active when its RMS is within a number of dB of
the utterance's loudest frame (:data:`TRIM_DB` for trimming and capping, :data:`SNAP_DB` for
step 5).  Times are seconds from the utterance's first sample; ``[start, end)``.
"""

from __future__ import annotations

import itertools

import numpy as np

from duplexeval.speech._tts import TimedWord

__all__ = ["JOIN_GAP_S", "LONE_WORD_GAP_S", "LONE_WORD_MAX_S", "NATURAL_PAUSE_MAX_S", "SNAP_DB",
           "TRIM_DB", "TRIM_FRAME_S", "active_frames", "cap_natural_pauses", "fit_words",
           "join_lone_first_word", "silent_run", "snap_pauses_to_audio", "speech_bounds"]

TRIM_DB = 40.0
TRIM_FRAME_S = 0.005

LONE_WORD_MAX_S = 0.2
"""A first word shorter than this (seconds of audio) that the engine separates from the rest
by a pause (Japanese あ、 え、 before a barge-in) is joined to the next word: see
:data:`LONE_WORD_GAP_S`."""
LONE_WORD_GAP_S = 0.0
"""The longest natural pause kept after such a short first word.  OpenJTalk says あ、 in
0.145 s and pauses 0.3 s after it; Silero does not detect a burst that short on its own after
a long silence on its channel, so the audio's IPU started at the second word, 0.45-0.5 s after
the aligned turn start, and none of m3-chat-ja's barge-ins was recovered from the audio (0 of 4
in its quick subset).  Joined to the next word (kept pauses of 0.1 s and 0.05 s still lost 2
of the 12 of the full suite), the VAD starts the IPU at the first word: 12 of 12."""
JOIN_GAP_S = 0.1
"""Engine word timings leave short spaces between words (the word-boundary symbol's duration);
spaces shorter than this are given to the previous word, so that only real pauses (commas,
inserted pauses) separate words, as in aligned natural speech."""
NATURAL_PAUSE_MAX_S = 0.4
"""Longest silence (seconds, measured on the audio's energy as :func:`speech_bounds` does) that
the engine's own pauses (at commas, Japanese 、 and 。) may keep inside an utterance: longer ones
are shortened to this.  OpenJTalk's punctuation pauses last 0.43-0.53 s of audio while their
label timings say 0.3-0.45 s, right at the 0.5 s that separates IPUs, so the events annotated
from the alignments and from the audio disagreed; kept below it with a margin, both agree.
Pauses a spec asks for are inserted afterwards at their exact length."""
SNAP_DB = 50.0
"""A frame is audible, for where a pause starts and ends, when its RMS is within this many dB of
the utterance's loudest frame: the level at which the analysis's voice activity places speech
boundaries (``ActivityOptions.refine_threshold_db``), so that the pauses of the alignment are the
silences the analysis hears.  On the full English suites this took the SHORTPAUSE events
recovered from the audio within 100 ms from 124/162 (m3-qa-en) and 257/279 (m3-chat-en) to
the figures of ``perf/annotation_recovery.py`` in the measurements."""


def active_frames(audio: np.ndarray, rate: int, db: float) -> np.ndarray:
    """Per :data:`TRIM_FRAME_S` frame (the last partial frame dropped): whether its RMS is
    within ``db`` dB of the loudest frame's (none is when every frame is silent)."""
    hop = max(1, round(TRIM_FRAME_S * rate))
    n = len(audio) // hop
    if n == 0:
        return np.zeros(0, dtype=bool)
    rms = np.sqrt(np.mean(audio[:n * hop].reshape(n, hop).astype(np.float64) ** 2, axis=1))
    return np.asarray(rms > rms.max() * 10 ** (-db / 20))


def speech_bounds(audio: np.ndarray, rate: int) -> tuple[int, int]:
    """``[a, b)``: the samples from the first to the last 5 ms frame whose RMS is within
    :data:`TRIM_DB` of the loudest frame (``(0, 0)`` when there is none)."""
    hop = max(1, round(TRIM_FRAME_S * rate))
    active = np.flatnonzero(active_frames(audio, rate, TRIM_DB))
    if active.size == 0:
        return 0, 0
    return int(active[0]) * hop, int(active[-1] + 1) * hop


def cap_natural_pauses(audio: np.ndarray, words: list[TimedWord], rate: int,
                        longest: float) -> tuple[np.ndarray, list[TimedWord]]:
    """Shorten each silence between two words that lasts more than ``longest`` seconds on the
    audio (from the last active frame of one word to the first of the next, active as in
    :func:`speech_bounds`) to ``longest``, cutting samples from its middle and moving the later
    words back by as much."""
    hop = max(1, round(TRIM_FRAME_S * rate))
    active = active_frames(audio, rate, TRIM_DB)
    n = len(active)
    if n == 0 or len(words) < 2:
        return audio, words
    cuts: list[tuple[int, int]] = []  # [a, b) samples to drop, in order
    for left, right in itertools.pairwise(words):
        run = silent_run(active, min(n, round(left.end * rate / hop)),
                          min(n, round(right.start * rate / hop)))
        if run is None:
            continue
        silent_from, silent_to = run[0] * hop, run[1] * hop
        excess = silent_to - silent_from - round(longest * rate)
        if excess > 0:
            a = silent_from + (silent_to - silent_from - excess) // 2
            cuts.append((a, a + excess))
    if not cuts:
        return audio, words
    keep = np.ones(len(audio), dtype=bool)
    for a, b in cuts:
        keep[a:b] = False
    out: list[TimedWord] = []
    for w in words:
        before_start = sum(min(b, round(w.start * rate)) - a for a, b in cuts
                           if a < round(w.start * rate))
        before_end = sum(min(b, round(w.end * rate)) - a for a, b in cuts
                         if a < round(w.end * rate))
        out.append(TimedWord(w.start - before_start / rate, w.end - before_end / rate, w.text))
    return audio[keep], out


def join_lone_first_word(audio: np.ndarray, words: list[TimedWord], rate: int,
                          ) -> tuple[np.ndarray, list[TimedWord]]:
    """Shorten the silence between the first and the second word (the longest run of inactive
    5 ms frames, as in :func:`speech_bounds`, before the second word's start) to
    :data:`LONE_WORD_GAP_S`, moving the later words back by as much (the caller checks that
    the first word is short)."""
    hop = max(1, round(TRIM_FRAME_S * rate))
    active = active_frames(audio, rate, TRIM_DB)
    n = len(active)
    # the longest silence from the first word's start to the second's (an engine may give
    # the first word the silence after it)
    run = silent_run(active, min(n, round(words[0].start * rate / hop)),
                      min(n, round(words[1].start * rate / hop)))
    if run is None:
        return audio, words
    excess = (run[1] - run[0]) * hop - round(LONE_WORD_GAP_S * rate)
    if excess <= 0:
        return audio, words
    a = run[0] * hop + (run[1] - run[0]) * hop // 2 - excess // 2
    shift = excess / rate
    first = words[0]
    out = [TimedWord(first.start, min(first.end, a / rate), first.text)]
    for w in words[1:]:  # an aligned start inside the cut moves to the previous word's end
        start = max(w.start - shift, out[-1].end)
        out.append(TimedWord(start, max(w.end - shift, start), w.text))
    if out[1].start - out[0].end < JOIN_GAP_S:
        out[0] = TimedWord(out[0].start, out[1].start, out[0].text)
    return np.concatenate([audio[:a], audio[a + excess:]]), out


def silent_run(active: np.ndarray, f1: int, f2: int) -> tuple[int, int] | None:
    """The run ``[a, b)`` of inactive frames around the word gap ``[f1, f2)``: the longest
    inactive run inside it, widened while the frames beside it stay inactive (``None`` when
    the gap holds no inactive frame)."""
    if f2 <= f1:
        return None
    best: tuple[int, int] | None = None
    k = f1
    while k < f2:
        if active[k]:
            k += 1
            continue
        j = k
        while j < f2 and not active[j]:
            j += 1
        if best is None or j - k > best[1] - best[0]:
            best = (k, j)
        k = j
    if best is None:
        return None
    a, b = best
    while a > 0 and not active[a - 1]:
        a -= 1
    while b < len(active) and not active[b]:
        b += 1
    return a, b


def snap_pauses_to_audio(audio: np.ndarray, words: list[TimedWord], rate: int,
                         db: float = SNAP_DB) -> list[TimedWord]:
    """Move every pause between two words onto the audio's silence.

    For each gap ``[left.end, right.start)`` (> 0) the silent run around it is found
    (:func:`silent_run` on frames active within ``db`` of the loudest): the pause becomes that
    run, kept inside ``[left.start, right.end]``; a gap holding no silent frame closes (the
    previous word gets it); and a pause left shorter than :data:`JOIN_GAP_S` goes to the
    previous word as in step 2.  Words touching each other are not looked at, and no audio
    changes.  A pause after a comma, then a stop consonant (``.`` silent, ``#`` audible)::

        aligned   |in--------|pause      |but-----------|
        audio     |##########|...........|......|########|
        snapped   |in--------|pause             |but----|    (the stop's closure is silent)
    """
    hop = max(1, round(TRIM_FRAME_S * rate))
    active = active_frames(audio, rate, db)
    n = len(active)
    out: list[TimedWord] = [words[0]] if words else []
    for w in words[1:]:
        left, start = out[-1], w.start
        end = left.end
        if start > end:
            run = silent_run(active, min(n, round(end * rate / hop)),
                             min(n, round(start * rate / hop)))
            if run is None:
                end = start
            else:
                end = min(max(run[0] * hop / rate, left.start), start)
                start = max(min(run[1] * hop / rate, w.end), end)
                if start - end < JOIN_GAP_S:
                    end = start
        if end <= left.start or start >= w.end:  # a word would vanish: keep the aligned gap
            end, start = left.end, w.start
        out[-1] = TimedWord(left.start, end, left.text)
        out.append(TimedWord(start, w.end, w.text))
    return out


def fit_words(audio: np.ndarray, words: list[TimedWord], rate: int,
              ) -> tuple[np.ndarray, list[TimedWord]]:
    """The utterance trimmed to its speech and its words fitted to it (steps 1-5 of the module
    docstring); ``audio`` at ``rate``, ``words`` in seconds from its first sample.  An empty
    word list means the audio holds no speech (or no word survives the trim)."""
    a, b = speech_bounds(audio, rate)
    if b <= a:
        return audio[:0], []
    audio = audio[a:b]
    t0, dur = a / rate, (b - a) / rate
    out: list[TimedWord] = []
    for i, w in enumerate(words):
        start = 0.0 if i == 0 else min(max(w.start - t0, 0.0), dur)
        end = dur if i == len(words) - 1 else min(max(w.end - t0, 0.0), dur)
        if out and start < out[-1].end:
            start = out[-1].end
        if out and start - out[-1].end < JOIN_GAP_S:
            out[-1] = TimedWord(out[-1].start, start, out[-1].text)
        if end > start:
            out.append(TimedWord(start, end, w.text))
    if out:
        out[-1] = TimedWord(out[-1].start, dur, out[-1].text)
    audio, out = cap_natural_pauses(audio, out, rate, NATURAL_PAUSE_MAX_S)
    if len(out) > 1 and out[0].end - out[0].start < LONE_WORD_MAX_S:
        audio, out = join_lone_first_word(audio, out, rate)
    return audio, snap_pauses_to_audio(audio, out, rate)
