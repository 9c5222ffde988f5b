"""``vad_segments.json``: segments computed elsewhere, in samples or seconds, and bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.errors import DuplexevalError
from duplexeval.peers import read_vad_segments
from duplexeval.timeline import Span


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "vad_segments.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_samples_are_converted_to_seconds_and_sorted(tmp_path: Path) -> None:
    path = _write(tmp_path, {"sampling_rate": 16000, "output.wav": {
        "num_samples": 160000, "unit": "samples",
        "speech_timestamps": [{"start": 48000, "end": 56000}, {"start": 8000, "end": 24000}]}})
    assert read_vad_segments(path, "output.wav") == [Span(0.5, 1.5), Span(3.0, 3.5)]


def test_seconds_need_no_rate_and_missing_wav_is_none(tmp_path: Path) -> None:
    path = _write(tmp_path, {"input.wav": {"num_samples": 10, "unit": "seconds",
                                           "speech_timestamps": [{"start": 1.25, "end": 2}]}})
    assert read_vad_segments(path, "input.wav") == [Span(1.25, 2.0)]
    assert read_vad_segments(path, "output.wav") is None


@pytest.mark.parametrize("data, message", [
    ([], "expected a JSON object"),
    ({"output.wav": {"unit": "frames", "speech_timestamps": []}}, "unit must be"),
    ({"output.wav": {"unit": "samples", "speech_timestamps": []}}, "sampling_rate"),
    ({"output.wav": {"unit": "seconds", "speech_timestamps": [{"start": 2, "end": 1}]}},
     "speech_timestamps[0] is not a segment"),
    ({"output.wav": {"unit": "seconds", "speech_timestamps": [{"start": "a", "end": 1}]}},
     "speech_timestamps[0].start must be a finite number"),
])
def test_bad_files_name_the_file(tmp_path: Path, data: object, message: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(DuplexevalError) as info:
        read_vad_segments(path, "output.wav")
    assert str(path) in str(info.value) and message in str(info.value)
