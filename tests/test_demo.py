"""The demo runs end to end: suite build, plans, then `eval` of each built-in system (runs,
analysis, scores, a bundle each) and the M3 table of all of them."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import pytest

from browser import Elements, chromium, load
from duplexeval.app._demo import STAGES, run_demo
from duplexeval.benchmarks import verify_bundle
from duplexeval.speech._tts import engine_class


@pytest.mark.skipif(engine_class("piper").unavailable_reason() is not None,
                    reason="piper (duplexeval[tts-en]) not installed")
@pytest.mark.slow
def test_demo_on_one_bundled_dialogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DUPLEXEVAL_M3_TOY", str(tmp_path / "absent"))
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache"))
    assert run_demo([], runs_root=tmp_path / "runs", suites=["m3-qa-en"], limit=1) == 0
    out = capsys.readouterr().out
    check = next(line for line in out.splitlines()
                 if line.strip().startswith("m3-qa-en (first 1): "))
    # events annotated from the voiced audio vs. from the alignments: "KIND found/total"
    found, total = check.split("TURN_SHIFT ")[1].split(",")[0].split("/")
    assert int(total) > 0 and int(found) >= 0.8 * int(total)
    # the demo is `eval` of each built-in system, then the M3 tables of all of them
    assert "M3-DuplexBench (v3), every system: " in out
    table = [line for line in out.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    rows = {cells[1]: dict(zip(header, cells, strict=True))
            for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table[1:])
            if cells[1] in ("cascade◆", "reference◆", "silence")}
    assert set(rows) == {"reference◆", "cascade◆", "silence"}
    # the human reference and the cascade take every question's turn; silence never does
    assert rows["reference◆"]["MT-QA SHIFT TOR↑"].startswith("100.0")
    assert rows["cascade◆"]["MT-QA SHIFT TOR↑"].startswith("100.0")
    assert rows["silence"]["MT-QA SHIFT TOR↑"].startswith("0.0")
    # m3-qa-en gets the content transcripts: offline QA F1 for the speaking rows
    assert rows["reference◆"]["MT-QA QA F1↑"] != "–"
    assert "§ from a bundled synthetic suite: not comparable with published numbers" in out
    assert "--judge-url URL --judge-model MODEL" in out
    # the cascade answers from the reference answers: marked as reading oracle data
    assert "- ◆ cascade reads oracle data (qa_references, reference_transcript)" in out
    assert "- ◆ reference reads oracle data (reference_audio)" in out
    for name in ("reference", "cascade", "silence"):
        bundle = tmp_path / "runs" / name
        run = bundle / "cells" / "m3" / "m3-qa-en-multi-gen"
        summary = json.loads((run / "run_summary.json").read_text())
        assert summary["samples"] > 0 and summary["failed"] == 0
        assert (run / "scores" / "m3" / "results.json").is_file()
        assert (bundle / "eval.json").is_file()
    assert verify_bundle(tmp_path / "runs" / "silence").ok
    # the wall time of every stage, printed and recorded
    assert "Demo wall time: " in out
    timing = json.loads((tmp_path / "runs" / "demo_timing.json").read_text())
    assert tuple(timing["seconds"]) == STAGES and timing["cpu_count"] >= 1
    assert abs(sum(timing["seconds"].values()) - timing["total_seconds"]) < 0.05
    _check_report(tmp_path / "runs" / "report" / "index.html", out)


def _check_report(index: Path, out: str) -> None:
    """The demo ends with its HTML report: printed, every audio source on disk, and (where
    Chromium is installed: CI installs it) loaded without console or page errors."""
    assert f"open it in a browser): {index}" in out
    page = Elements(index.read_text(encoding="utf-8"))
    audio = [a["src"] or "" for a in page.tags("audio")]
    assert audio and all((index.parent / unquote(src)).is_file() for src in audio)
    if chromium() is None:
        return
    loaded = load(index)
    assert loaded.console == [], loaded.console
    dom = Elements(loaded.dom)
    assert dom.tags("body")[0].get("data-ready") == "1"
    assert not dom.texts.get("page-errors", "").strip()
