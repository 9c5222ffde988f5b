"""``data import mtr``: MTR-DuplexBench's dialogue-quality clips (stereo MP3 + the
``semantic_turned_time_v3.jsonl`` rounds), made here in that format, into the M3 layout with the
rounds as the record's ``mtr`` field; validate passes; bad lines are one error, nothing written.

Rounds of the fixture clip (20 s)::

    user turns   |r1 2-4|   |r2 8-10|   |r3 14-16|        (plus an overlapping 9-11: dropped)
    windows      [2 ........ 10]
                            [8 .......... 16]
                                        [14 ........ 20]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import load_dataset

TURNS = [{"start": 2.0, "end": 4.0}, {"start": 8.0, "end": 10.0}, {"start": 9.0, "end": 11.0},
         {"start": 14.0, "end": 16.0}]


def _source(root: Path, lines: list[str] | None = None) -> Path:
    (root / "Dialogue_Quality").mkdir(parents=True)
    t = np.arange(20 * 16000) / 16000
    left = 0.3 * np.sin(2 * np.pi * 220 * t) * ((t % 6) < 2)  # the user: bursts
    right = np.zeros_like(t)
    sf.write(str(root / "Dialogue_Quality" / "clip1.mp3"), np.stack([left, right], 1), 16000,
             format="MP3")
    enc = root / "Scenarios_encoding" / "dialogue_quality"
    enc.mkdir(parents=True)
    lines = lines or [json.dumps({"id": "clip1", "filtered_turn": TURNS,
                                  "continuation_info": []})]
    (enc / "semantic_turned_time_v3.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_the_rounds_become_the_mtr_record(tmp_path: Path) -> None:
    source = _source(tmp_path / "MTR" / "data")
    out = tmp_path / "ds"
    assert main(["data", "import", "mtr", str(tmp_path / "MTR"), "-o", str(out)]) == 0
    dataset, _ = load_dataset(out)
    (dialogue,) = dataset.dialogues
    record = dialogue.extra["mtr"]
    assert record["group"] == "dialogue_quality" and record["user_channel"] == 0
    assert [r["user_span"] for r in record["rounds"]] == [[2.0, 4.0], [8.0, 10.0], [14.0, 16.0]]
    assert [r["window"][1] for r in record["rounds"]] == [10.0, 16.0, pytest.approx(20.0, abs=0.1)]
    audio, _ = sf.read(str(out / "audio" / "clip1.wav"), always_2d=True)
    assert np.abs(audio[:, 0]).max() > 0.1 and np.abs(audio[:, 1]).max() < 0.01
    # no alignment files (the clips come without words): the annotations and audio validate
    assert main(["validate", "--annotations-only", str(out)]) == 0
    swapped = tmp_path / "swapped"
    assert main(["data", "import", "mtr", str(source), "-o", str(swapped),
                 "--user-side", "right"]) == 0
    audio, _ = sf.read(str(swapped / "audio" / "clip1.wav"), always_2d=True)
    assert np.abs(audio[:, 0]).max() < 0.01


def test_a_bad_line_is_one_error_and_nothing_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _source(tmp_path / "src", lines=[json.dumps({"id": "clip1", "filtered_turn": TURNS}),
                                              '{"id": "clip2"}'])
    out = tmp_path / "ds"
    assert main(["data", "import", "mtr", str(source), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "semantic_turned_time_v3.jsonl:2" in err[0]
    assert not (out / "test.jsonl").exists()
