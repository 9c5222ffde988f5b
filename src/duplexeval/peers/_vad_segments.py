"""``vad_segments.json``: speech segments computed elsewhere, used instead of running VAD.

Format (the shape Silero's ``get_speech_timestamps`` returns, one entry per wav)::

    {"sampling_rate": 16000,
     "output.wav": {"num_samples": 480000, "unit": "samples",
                    "speech_timestamps": [{"start": 16000, "end": 40000}, ...]},
     "input.wav":  {"num_samples": 480000, "unit": "seconds",
                    "speech_timestamps": [{"start": 1.0, "end": 2.5}, ...]}}

Conventions: ``unit`` is ``"samples"`` (integers at ``sampling_rate``) or ``"seconds"``;
segments are returned as :class:`~duplexeval.timeline.Span` in seconds, sorted by start,
with the boundaries given (they are not merged: merging is the scorer's rule).  A segment
with ``end <= start`` or a negative start is an error.  Every problem is a one-line
:class:`~duplexeval.errors.DuplexevalError` naming the file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from duplexeval._fileio import read_json
from duplexeval.errors import DuplexevalError
from duplexeval.timeline import Span

__all__ = ["VAD_SEGMENTS_FILE", "read_vad_segments"]

VAD_SEGMENTS_FILE = "vad_segments.json"
"""The file name looked for in a sample folder."""


def _number(value: Any, path: Path, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DuplexevalError(f"{path}: {where} must be a finite number, got {value!r}")
    return float(value)


def read_vad_segments(path: Path, wav_name: str) -> list[Span] | None:
    """The segments of ``wav_name`` in seconds, or ``None`` when the file has no entry for it.

    ``path`` is the ``vad_segments.json`` file; it must exist (callers check first)."""
    data = read_json(path, "VAD segments file")
    if not isinstance(data, dict):
        raise DuplexevalError(f"{path}: expected a JSON object")
    entry = data.get(wav_name)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise DuplexevalError(f"{path}: {wav_name!r} must be an object")
    unit = entry.get("unit", "samples")
    if unit not in ("samples", "seconds"):
        raise DuplexevalError(f"{path}: {wav_name}.unit must be 'samples' or 'seconds', "
                              f"got {unit!r}")
    rate = 1.0
    if unit == "samples":
        rate = _number(data.get("sampling_rate"), path, "sampling_rate")
        if rate <= 0:
            raise DuplexevalError(f"{path}: sampling_rate must be positive")
    stamps = entry.get("speech_timestamps")
    if not isinstance(stamps, list):
        raise DuplexevalError(f"{path}: {wav_name}.speech_timestamps must be a list")
    spans = []
    for i, stamp in enumerate(stamps):
        where = f"{wav_name}.speech_timestamps[{i}]"
        if not isinstance(stamp, dict):
            raise DuplexevalError(f"{path}: {where} must be an object with start and end")
        start = _number(stamp.get("start"), path, f"{where}.start") / rate
        end = _number(stamp.get("end"), path, f"{where}.end") / rate
        if start < 0 or end <= start:
            raise DuplexevalError(f"{path}: {where} is not a segment (start {start:g} s, "
                                  f"end {end:g} s)")
        spans.append(Span(start, end))
    return sorted(spans, key=lambda s: (s.start, s.end))
