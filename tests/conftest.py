"""Shared fixtures: the official M3 toy data (read from ../shared, never copied) and dataset
builders for hand-made cases."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

REPO = Path(__file__).resolve().parents[1]
M3_TOY = REPO.parent / "shared" / "m3_toy" / "ja"
TOY_SETS = {
    "chat": M3_TOY / "chat" / "magicdata_toy",
    "task": M3_TOY / "task" / "topiocqa_ja_toy",
}


@pytest.fixture
def m3_toy() -> dict[str, Path]:
    """Folders of the two official toy sets; skips when ../shared/m3_toy is absent."""
    if not all(p.is_dir() for p in TOY_SETS.values()):
        pytest.skip(f"official M3 toy data not found at {M3_TOY} (third-party data, not shipped)")
    return TOY_SETS


def write_jsonl(path: Path, records: Sequence[object]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")


def write_stereo(path: Path, seconds: float, sr: int = 16000, channels: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = round(seconds * sr)
    sf.write(str(path), np.zeros((n, channels), dtype=np.float32), sr)


def make_dataset(
    root: Path,
    events: dict[str, list[tuple[str, float, float]]],
    words: list[tuple[int, float, float, str]] | None = None,
    audio_seconds: float | None = 20.0,
    dialogue_id: str = "d1",
) -> Path:
    """A one-dialogue dataset: ``events`` as {"0": [(KIND, start, end)], ...}."""
    root.mkdir(parents=True, exist_ok=True)
    record = {"id": dialogue_id, "events": {
        ch: [{"event": k, "time": [s, e]} for k, s, e in evs] for ch, evs in events.items()}}
    write_jsonl(root / "test.jsonl", [record])
    if words is not None:
        (root / "txt_align").mkdir(exist_ok=True)
        (root / "txt_align" / f"{dialogue_id}.txt").write_text(
            "".join(f"{c}\t{s}\t{e}\t{w}\n" for c, s, e, w in words), encoding="utf-8")
    if audio_seconds is not None:
        write_stereo(root / "audio" / f"{dialogue_id}.wav", audio_seconds)
    return root
