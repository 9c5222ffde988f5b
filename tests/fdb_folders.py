"""Hand-made Full-Duplex-Bench v1/v1.5 sample folders for the ``--peer fdb-v1`` tests: word
chunks, event annotations, silent wavs and ``vad_segments.json`` (seconds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from duplexeval.peers import PeerOptions
from duplexeval.peers.fdb._scorer import score_fdb

Stamp = tuple[float | None, float | None]


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def chunks(folder: Path, *stamps: Stamp, name: str = "output.json") -> None:
    """``output.json`` (or ``name``) with one chunk ``w{i}`` per ``(start, end)``."""
    items = [{"text": f"w{i}", "timestamp": [a, b]} for i, (a, b) in enumerate(stamps)]
    write_json(folder / name, {"text": " ".join(c["text"] for c in items), "chunks": items})


def event(folder: Path, name: str, start: float, end: float) -> None:
    """A turn_taking.json / interrupt.json with one event ``[start, end]`` (seconds)."""
    write_json(folder / name, [{"text": "[EVENT]", "context": "c", "interrupt": "i",
                                "timestamp": [start, end]}])


def wav(path: Path, seconds: float, rate: int = 16000) -> None:
    """A silent mono wav of ``seconds`` at ``rate`` Hz."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.zeros(int(seconds * rate), dtype=np.float32), rate)


def vad(folder: Path, **wavs: list[tuple[float, float]]) -> None:
    """``vad_segments.json`` with ``{stem}.wav`` speech at the given ``(start, end)`` seconds."""
    data: dict[str, Any] = {"sampling_rate": 16000}
    for stem, spans in wavs.items():
        data[f"{stem}.wav"] = {"num_samples": 0, "unit": "seconds",
                               "speech_timestamps": [{"start": a, "end": b} for a, b in spans]}
    write_json(folder / "vad_segments.json", data)


def score(task: str, root: Path, out: Path, **options: Any) -> tuple[dict, list[dict]]:
    """Score, check aggregate.json equals the returned aggregate, return it and the rows."""
    aggregate = score_fdb(task, root, out, PeerOptions(**options))
    assert json.loads((out / "aggregate.json").read_text()) == aggregate
    rows = [json.loads(line) for line in (out / "per_sample.jsonl").read_text().splitlines()]
    return aggregate, rows
