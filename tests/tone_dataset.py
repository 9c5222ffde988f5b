"""A tiny dataset for wall-clock loopback runs: one dialogue whose user (channel 0) speaks short
200 Hz tone turns, each followed by a TURN_SHIFT to the system (channel 1), so every turn is
one ``single`` sample ``[turn start, turn end + window]`` with the user silent after its turn."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import soundfile as sf

from conftest import write_jsonl

RATE = 16000


def tone_dataset(root: Path, turns: Sequence[tuple[float, float]], seconds: float) -> Path:
    """``turns`` as (start, end) seconds of the user's tone; the reference system answers
    0.3 s after each turn for 1 s (silent audio: only its events matter here)."""
    root.mkdir(parents=True, exist_ok=True)
    user: list[dict] = []
    system: list[dict] = []
    audio = np.zeros((round(seconds * RATE), 2), np.float32)
    for start, end in turns:
        user.append({"event": "TURN", "time": [start, end]})
        system.append({"event": "TURN_SHIFT", "time": [end, end + 0.3]})
        system.append({"event": "TURN", "time": [end + 0.3, end + 1.3]})
        a, b = round(start * RATE), round(end * RATE)
        audio[a:b, 0] = 0.2 * np.sin(2 * np.pi * 200 * np.arange(b - a) / RATE)
    write_jsonl(root / "test.jsonl", [{"id": "tones", "events": {"0": user, "1": system}}])
    (root / "audio").mkdir(exist_ok=True)
    sf.write(str(root / "audio" / "tones.wav"), audio, RATE)
    return root


def loud_onset(x: np.ndarray, rate: int, level: float = 0.05) -> float | None:
    """Seconds to the first sample above ``level`` (``None``: never)."""
    loud = np.flatnonzero(np.abs(x) > level)
    return None if len(loud) == 0 else loud[0] / rate
