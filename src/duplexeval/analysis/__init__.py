"""Turning audio into timestamped speech: voice activity (and, later, ASR)."""

from __future__ import annotations

from duplexeval.analysis._segments import Chunk, SpeechSegment, read_transcript, transcript_json

__all__ = [
    "Chunk",
    "SpeechSegment",
    "read_transcript",
    "transcript_json",
]
