"""The demo runs end to end on the bundled data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.demo import run_demo


def test_demo_on_bundled_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DUPLEXEVAL_M3_TOY", str(tmp_path / "absent"))
    assert run_demo([], runs_root=tmp_path / "runs") == 0
    out = capsys.readouterr().out
    assert "sample-en: 2 dialogue(s), annotation from word alignments reproduces 49/49" in out
    for name in ("reference", "scripted"):
        summary = json.loads((tmp_path / "runs" / f"{name}-sample-en" /
                              "run_summary.json").read_text())
        assert summary["samples"] == 22 and summary["failed"] == 0
