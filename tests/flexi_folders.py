"""Hand-made FLEXI output folders (``dialog_N`` with FLEXI's JSON files), shared by the FLEXI
peer tests.  Every time is in seconds; words are ``(text, start, end)``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

WordSpec = tuple[str, float | None, float | None]


def transcript(words: Sequence[WordSpec]) -> dict[str, Any]:
    """An ``output.json``/``input.json`` body as FLEXI's ``asr.py`` writes it."""
    return {"text": " ".join(w[0] for w in words),
            "chunks": [{"text": t, "timestamp": [s, e]} for t, s, e in words]}


def write(folder: Path, **files: Any) -> Path:
    """Write ``name_json=obj`` as ``name.json`` (``turn_taking_json`` -> ``turn_taking.json``);
    a ``str`` value is written as is (for malformed files)."""
    folder.mkdir(parents=True, exist_ok=True)
    for key, obj in files.items():
        name = key[:-5] + ".json" if key.endswith("_json") else key
        text = obj if isinstance(obj, str) else json.dumps(obj)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def silent_wav(path: Path, seconds: float, rate: int = 16000) -> None:
    """A mono wav of zeros (the model-backchannel reader needs its length only)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.zeros(round(seconds * rate), dtype=np.float32), rate)


def vad_segments(folder: Path, segments: Sequence[tuple[float, float]], unit: str = "seconds",
                 rate: int = 16000, num_samples: int | None = None) -> None:
    """``vad_segments.json`` for ``output.wav`` (``segments`` in ``unit``)."""
    entry: dict[str, Any] = {"unit": unit,
                             "speech_timestamps": [{"start": a, "end": b} for a, b in segments]}
    if num_samples is not None:
        entry["num_samples"] = num_samples
    write(folder, vad_segments_json={"sampling_rate": rate, "output.wav": entry})


# -- per task ------------------------------------------------------------------------------------

def turn_taking_folder(root: Path, name: str, user_end: float,
                       words: Sequence[WordSpec] | None) -> Path:
    """``turn_taking.json`` (``[0].timestamp[0]`` is the user's end) and ``output.json``
    (``words`` ``None``: no ``output.json``)."""
    folder = write(root / name, turn_taking_json=[{"text": "[TURN-TAKING]",
                                                   "timestamp": [user_end, user_end + 8]}])
    if words is not None:
        write(folder, output_json=transcript(words))
    return folder


def pause_folder(root: Path, name: str, pause: tuple[float, float] | None,
                 user: Sequence[WordSpec], model: Sequence[WordSpec]) -> Path:
    """``pause.json``, ``input.json`` and ``output.json`` (``pause`` ``None``: no pause.json)."""
    folder = write(root / name, input_json=transcript(user), output_json=transcript(model))
    if pause is not None:
        write(folder, pause_json={"timestamp": list(pause)})
    return folder


def interrupt_folder(root: Path, name: str, interruption: tuple[float, float],
                     model: Sequence[WordSpec]) -> Path:
    """``interrupt.json`` and ``output.json``."""
    return write(root / name, output_json=transcript(model), interrupt_json=[{
        "context": "Tell me about photosynthesis.", "interrupt": "Just one sentence.",
        "timestamp": list(interruption)}])


def backchannel_folder(root: Path, name: str, user: Sequence[WordSpec],
                       model: Sequence[WordSpec], metadata_times: list[float] | None = None
                       ) -> Path:
    """``input.json``, ``output.json`` and, when given, ``metadata.json``."""
    folder = write(root / name, input_json=transcript(user), output_json=transcript(model))
    if metadata_times is not None:
        write(folder, metadata_json={"user_backchannel_times": metadata_times})
    return folder
