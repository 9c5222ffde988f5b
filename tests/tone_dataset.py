"""A tiny dataset for wall-clock loopback runs: one dialogue whose user (channel 0) speaks short
200 Hz tone turns, each followed by a TURN_SHIFT to the system (channel 1), so every turn is
one ``single`` sample ``[turn start, turn end + window]`` with the user silent after its turn."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from conftest import write_jsonl
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, Sample, build_plan

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


def tone_turns(n: int) -> list[tuple[float, float]]:
    """``n`` user turns of 0.3 s, 4 s apart from 0.5 s (samples never overlap at windows
    up to 3.7 s)."""
    return [(0.5 + 4 * k, 0.8 + 4 * k) for k in range(n)]


def single_samples(dataset: Path, window: float) -> list[Sample]:
    """The ``single`` samples in the order the runner opens their sessions."""
    ds, _ = load_dataset(dataset, audio=Need.REQUIRE)
    plan = build_plan(ds.dialogues, PlanOptions(protocol=EvalProtocol.SINGLE, window=window))
    return [s for members in plan.groups().values() for s in members]


def sample_record(out: Path, sample: Sample) -> dict[str, Any]:
    """A sample's record in run directory ``out``."""
    return json.loads((out / "samples" / sample.sample_id / f"{sample.event_id}.json")
                      .read_text())


def trace_file(out: Path, sample: Sample) -> dict[str, Any]:
    """A wall-clock sample's trace file (``{event_id}.trace.json``) in run directory ``out``."""
    return json.loads((out / sample_record(out, sample)["trace_path"]).read_text())


def has_driver_trace(trace: dict[str, Any]) -> bool:
    """Whether ``trace`` holds the real-time driver's keys (send drift with its series, arrival
    jitter, server events, arrivals, playout flushes)."""
    realtime = trace.get("realtime") or {}
    return ({"series", "max", "p95"} <= set(realtime.get("send_drift_ms") or {})
            and "rfc3550" in (realtime.get("arrival_jitter_ms") or {})
            and all(isinstance(trace.get(k), list)
                    for k in ("server_events", "audio_arrivals", "playout_flushes")))
