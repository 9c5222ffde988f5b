"""voice-bursts: speech exactly inside every word span, silence elsewhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from conftest import SAMPLE_EN
from duplexeval.cli import main
from duplexeval.data import Need, load_dataset


def test_voice_bursts_fills_word_spans(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "sample-en"
    shutil.copytree(SAMPLE_EN, src)
    out = tmp_path / "voiced"
    assert main(["data", "voice-bursts", str(src), "-o", str(out)]) == 0
    dataset, warnings = load_dataset(out, audio=Need.REQUIRE, alignment=Need.REQUIRE)
    assert warnings == []
    for d in dataset.dialogues:
        x, sr = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
        assert x.shape[1] == 2 and sr == 16000
        inside = np.zeros(x.shape, dtype=bool)
        for w in d.words:
            inside[round(w.start * sr):round(w.end * sr), w.channel] = True
        assert not x[~inside].any()  # nothing outside the word spans
        # inside: real speech energy in (almost) every word
        voiced = [np.sqrt(np.mean(x[round(w.start * sr):round(w.end * sr), w.channel] ** 2))
                  > 0.01 for w in d.words if w.end - w.start >= 0.05]
        assert np.mean(voiced) > 0.95
    assert len(dataset.dialogues) == 2
    before = sorted(p.relative_to(src) for p in src.rglob("*"))
    assert main(["data", "voice-bursts", str(src), "-o", str(src)]) == 2
    assert "another folder" in capsys.readouterr().err
    assert sorted(p.relative_to(src) for p in src.rglob("*")) == before
