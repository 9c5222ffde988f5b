"""Timestamped speech segments: the transcript format the M3 timing metrics read.

A transcript is the official pipeline's per-event JSON::

    {"segments": [{"channel": 1, "text": "hello there", "timestamp": [0.52, 1.30],
                   "chunks": [{"text": "hello", "timestamp": [0.52, 0.80]}, ...]}, ...]}

Conventions: times are seconds from the start of the event's output wav (``input_start``);
channel 0 is the user input as fed, channel 1 the system output.  A segment is
``[start, end]`` with ``start <= end``; ``chunks`` are its words (empty when only voice activity
is known, so a segment without ASR counts as zero words).

Segmentation follows the official aligner: words of one channel, sorted by start, are split into
segments wherever the gap between a word's start and the previous word's end is ``>= 0.5`` s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._fileio import read_json
from duplexeval.errors import DuplexevalError
from duplexeval.timeline import Span

__all__ = [
    "SEGMENT_GAP",
    "Chunk",
    "SpeechSegment",
    "read_transcript",
    "segments_from_spans",
    "segments_from_words",
    "transcript_json",
]

SEGMENT_GAP = 0.5
"""Official split: a new segment starts where the silence between words is >= this (seconds)."""


@dataclass(frozen=True)
class Chunk:
    """One word: ``[start, end]`` seconds and its text."""

    start: float
    end: float
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "timestamp": [self.start, self.end]}


@dataclass(frozen=True)
class SpeechSegment:
    """A labelled interval: the :class:`~duplexeval.timeline.Span` of one stretch of speech on
    ``channel``, with its text and words (``chunks``, possibly none).  (pyannote's ``Segment``
    is the interval alone; here that is ``Span``.)"""

    channel: int
    span: Span
    text: str = ""
    chunks: tuple[Chunk, ...] = ()

    @classmethod
    def of(cls, channel: int, start: float, end: float, text: str = "",
           chunks: tuple[Chunk, ...] = ()) -> SpeechSegment:
        """A segment over ``[start, end]`` seconds (``ValueError`` when ``end < start``)."""
        return cls(channel, Span(start, end), text, chunks)

    @property
    def start(self) -> float:
        return self.span.start

    @property
    def end(self) -> float:
        return self.span.end

    @property
    def duration(self) -> float:
        return self.span.duration

    def to_json(self) -> dict[str, Any]:
        return {"channel": self.channel, "text": self.text,
                "timestamp": [self.start, self.end],
                "chunks": [c.to_json() for c in self.chunks]}


def segments_from_words(words: Iterable[Chunk], channel: int, max_gap: float = SEGMENT_GAP,
                        joiner: str = " ") -> list[SpeechSegment]:
    """Split one channel's words at silences ``>= max_gap`` (the official rule).

    ``joiner`` joins word texts into the segment text (the official code uses a space for every
    language)."""
    ordered = sorted((w for w in words if w.end > w.start), key=lambda w: (w.start, w.end))
    out: list[SpeechSegment] = []
    group: list[Chunk] = []
    for w in ordered:
        if group and w.start - group[-1].end >= max_gap:
            out.append(_segment(group, channel, joiner))
            group = []
        group.append(w)
    if group:
        out.append(_segment(group, channel, joiner))
    return out


def _segment(words: list[Chunk], channel: int, joiner: str) -> SpeechSegment:
    return SpeechSegment.of(channel, words[0].start, words[-1].end,
                   joiner.join(w.text for w in words), tuple(words))


def segments_from_spans(spans: Iterable[Span], channel: int,
                        max_gap: float = SEGMENT_GAP) -> list[SpeechSegment]:
    """Segments from voice activity alone: spans closer than ``max_gap`` are merged, no words."""
    out: list[SpeechSegment] = []
    for s in sorted(spans):
        if out and s.start - out[-1].end < max_gap:
            last = out[-1]
            out[-1] = SpeechSegment.of(channel, last.start, max(last.end, s.end))
        else:
            out.append(SpeechSegment.of(channel, s.start, s.end))
    return out


def transcript_json(segments: Sequence[SpeechSegment], **extra: Any) -> dict[str, Any]:
    """The official transcript object (segments sorted by channel, then start)."""
    ordered = sorted(segments, key=lambda s: (s.channel, s.start, s.end))
    return {"segments": [s.to_json() for s in ordered], **extra}


def _pair(value: Any, where: str) -> tuple[float, float]:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        raise ValueError(f"{where}: 'timestamp' must be [start, end] numbers, got {value!r}")
    if not all(math.isfinite(v) for v in value):
        raise ValueError(f"{where}: 'timestamp' must be finite, got {value!r}")
    return float(value[0]), float(value[1])


def read_transcript(path: Path) -> list[SpeechSegment]:
    """Read an official transcript JSON; a malformed file is a one-line :class:`DuplexevalError`.

    Timestamps are kept as written (no sorting or clipping), as the official evaluator reads
    them."""
    data = read_json(path, "transcript")
    if not isinstance(data, dict) or not isinstance(data.get("segments", []), list):
        raise DuplexevalError(f"{path}: expected an object with a 'segments' list")
    out = []
    for i, seg in enumerate(data.get("segments", [])):
        where = f"segment {i}"
        try:
            if not isinstance(seg, dict) or "channel" not in seg:
                raise ValueError(f"{where}: needs 'channel' and 'timestamp'")
            start, end = _pair(seg.get("timestamp"), where)
            chunks = tuple(Chunk(*_pair(c.get("timestamp"), f"{where} chunk {j}"),
                                 str(c.get("text", "")))
                           for j, c in enumerate(seg.get("chunks") or []))
            out.append(SpeechSegment.of(int(seg["channel"]), start, end, str(seg.get("text", "")),
                               chunks))
        except (ValueError, TypeError, AttributeError, OverflowError) as exc:
            raise DuplexevalError(f"{path}: {where}: {exc}" if isinstance(exc, OverflowError)
                                  else f"{path}: {exc}") from None
    return out
