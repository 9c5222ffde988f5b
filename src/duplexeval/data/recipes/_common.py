"""What the corpus recipes share: source errors, audio to stereo, words, segmentation, writing.

A recipe reads one source conversation into a :class:`Recording`: stereo audio (channel 0 and
channel 1, one speaker each; which one is the *user* is decided per event later, as for any
dataset) and its words in seconds from the start of that audio.  :func:`finish` then cuts it
into segments (:mod:`duplexeval.data._segmentation`), derives each segment's events from its
words with the annotator (:func:`duplexeval.events.annotate_spans`) and writes its audio.

Errors in a source are raised at once as a one-line
:class:`~duplexeval.errors.DuplexevalError` naming the file and line (:func:`source_error`);
the recipes write into a staging folder that is removed on error (see
:func:`duplexeval.data.recipes._registry.staged_output`), so nothing is left behind.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import soxr

from duplexeval._audio import AudioReadError, write_audio
from duplexeval._audio import read_audio as read_file
from duplexeval.data._dialogue import AudioInfo, Dialogue, Word
from duplexeval.data._m3 import audio_path
from duplexeval.data._segmentation import cut_words, plan_segments, segment_id
from duplexeval.errors import DuplexevalError, Problem, number_type
from duplexeval.events import AnnotationRules, annotate_spans, ipus_from_spans
from duplexeval.timeline import Span

__all__ = ["DEFAULT_SEGMENTS", "Recording", "SegmentOptions", "add_segment_arguments", "finish",
           "read_audio", "resample", "segment_options", "source_error", "spread_words", "stereo",
           "tidy_words"]


def source_error(path: Path, line: int | None, message: str) -> NoReturn:
    """Raise the one-line error ``{path}:{line}: {message}`` (exit code 2)."""
    raise DuplexevalError(str(Problem(path, line, message)))


def read_audio(path: Path) -> tuple[np.ndarray, int]:
    """``(frames, channels)`` float32 samples and the rate (Hz) of any file libsndfile reads
    (WAV, FLAC, MP3 with libsndfile >= 1.1); an unreadable file is a one-line error."""
    try:
        audio, rate = read_file(path)
    except AudioReadError as exc:
        source_error(path, None, f"unreadable audio: {exc.reason}")
    return audio, int(rate)


def resample(x: np.ndarray, rate: int, target: int) -> np.ndarray:
    """``x`` (samples, or ``(frames, channels)``) from ``rate`` to ``target`` Hz with soxr,
    float32; unchanged when the rates are equal."""
    if rate == target:
        return np.ascontiguousarray(x, dtype=np.float32)
    resampled: np.ndarray = soxr.resample(np.ascontiguousarray(x), rate, target)
    return resampled.astype(np.float32)


def stereo(tracks: Sequence[tuple[np.ndarray, int]], target_rate: int) -> np.ndarray:
    """Two mono tracks ``(samples, rate)`` as one ``(frames, 2)`` float32 array at
    ``target_rate``: track 0 is channel 0 (left).  Each is resampled with soxr when its rate
    differs; the shorter is padded with silence."""
    chans = [resample(np.asarray(x, dtype=np.float32).reshape(-1), r, target_rate)
             for x, r in tracks]
    n = max(len(c) for c in chans)
    out = np.zeros((n, len(chans)), dtype=np.float32)
    for i, c in enumerate(chans):
        out[: len(c), i] = c
    return out


def spread_words(channel: int, start: float, end: float, tokens: Sequence[str]) -> list[Word]:
    """Words for an utterance known only as a whole: ``[start, end]`` is shared among the
    tokens in proportion to their length in characters, back to back (no silence inside).
    A stand-in for forced alignment, which no recipe runs (it needs models)."""
    tokens = [t for t in tokens if t.strip()]
    total = sum(len(t) for t in tokens)
    words, t0 = [], start
    for i, token in enumerate(tokens):
        t1 = end if i == len(tokens) - 1 else start + (end - start) * \
            sum(len(x) for x in tokens[: i + 1]) / total
        words.append(Word(channel, round(t0, 4), round(t1, 4), token))
        t0 = t1
    return words


def tidy_words(words: Sequence[Word], duration: float) -> list[Word]:
    """Words as the M3 layout wants them: per channel sorted by time, not overlapping (a word
    starting before the previous one ends starts at that end), inside ``[0, duration]``
    seconds; words left empty by this are dropped.  Channel 0 first, then channel 1."""
    out: list[Word] = []
    for channel in (0, 1):
        last = 0.0
        for w in sorted((w for w in words if w.channel == channel),
                        key=lambda w: (w.start, w.end)):
            start, end = max(w.start, last, 0.0), min(w.end, duration)
            if end <= start:
                continue
            out.append(Word(channel, start, end, w.text))
            last = end
    return out


@dataclass
class Recording:
    """One source conversation: ``audio`` ``(frames, 2)`` float32 at ``sample_rate`` Hz
    (channel 0 = left), ``words`` in seconds from the audio start, and the record's other
    fields (``extra``, e.g. the speakers of each channel)."""

    id: str
    audio: np.ndarray
    sample_rate: int
    words: list[Word]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        """Length of the audio in seconds."""
        return len(self.audio) / self.sample_rate


@dataclass(frozen=True)
class SegmentOptions:
    """How :func:`finish` cuts and annotates (seconds)."""

    target: float = 120.0
    """Wanted segment length; 0 keeps each conversation whole."""
    min_last: float = 0.0
    """A last segment shorter than this joins the one before it."""
    rules: AnnotationRules = AnnotationRules()


DEFAULT_SEGMENTS = SegmentOptions()
"""120 s segments, the M3 annotation rules."""


def add_segment_arguments(p: argparse.ArgumentParser) -> None:
    """``--segment SECONDS`` (default 120, 0: whole conversations) and ``--min-last``."""
    p.add_argument("--segment", type=number_type(float, 0, unit="seconds"),
                   default=120.0, metavar="SECONDS",
                   help="cut each conversation into segments of about this length, in silences "
                   "between IPUs (default 120, as M3; 0 keeps conversations whole)")
    p.add_argument("--min-last", type=number_type(float, 0, unit="seconds"), default=0.0,
                   metavar="SECONDS",
                   help="a last segment shorter than this joins the one before it")


def segment_options(args: argparse.Namespace) -> SegmentOptions:
    """The :class:`SegmentOptions` of parsed :func:`add_segment_arguments` options."""
    return SegmentOptions(args.segment, args.min_last)


def _ipus(words: Sequence[Word], rules: AnnotationRules) -> list[Span]:
    return [ipu.span for ch in (0, 1)
            for ipu in ipus_from_spans(ch, [w.span for w in words if w.channel == ch], rules)]


def finish(rec: Recording, root: Path, options: SegmentOptions, language: str,
           domain: str) -> list[Dialogue]:
    """Cut ``rec`` into segments, annotate each from its words and write each segment's audio
    (PCM_16) to ``root/audio/{id}.wav``; the dialogues, ready for
    :func:`~duplexeval.data._m3.write_dataset`.  Each record keeps ``source`` (``corpus`` id,
    ``start``/``end`` of the segment in the source audio, seconds)."""
    words = tidy_words(rec.words, rec.duration)
    segments = plan_segments(_ipus(words, options.rules), rec.duration, options.target,
                             min_last=options.min_last)
    out = []
    for seg in segments:
        dialogue_id = rec.id if len(segments) == 1 else segment_id(rec.id, seg)
        a, b = round(seg.start * rec.sample_rate), round(seg.end * rec.sample_rate)
        target = audio_path(root, dialogue_id)
        write_audio(target, rec.audio[a:b], rec.sample_rate, subtype="PCM_16")
        info = AudioInfo(target, rec.sample_rate, b - a, 2)
        seg_words = tidy_words(cut_words(words, seg), info.duration)
        spans = {ch: [w.span for w in seg_words if w.channel == ch] for ch in (0, 1)}
        extra = dict(rec.extra)
        extra["source"] = {**extra.get("source", {}), "start": round(seg.start, 6),
                           "end": round(seg.end, 6)}
        out.append(Dialogue(id=dialogue_id, events=tuple(annotate_spans(spans, options.rules)),
                            words=tuple(seg_words), audio=info, language=language,
                            domain=domain, extra=extra))
    return out
