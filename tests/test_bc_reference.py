"""``bc-reference``: backchannel positions annotated by a judge over loopback HTTP, turned into
FLEXI's per-item distribution (0.2 s bins, epsilon, uniform without positions), written in the
shape the model-backchannel JSD reads, with every answer in the provenance file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.metrics.content._bc_reference import distribution
from duplexeval.peers.fdb._io import read_reference_distribution
from fake_judge import FakeJudge
from flexi_folders import silent_wav, transcript, write


def test_the_distribution_is_flexis() -> None:
    """1.0 s -> 6 bins; positions 0.25 and 0.9 -> bins 1 and 4; 5.0 is outside."""
    p = distribution([0.25, 0.9, 5.0], 1.0)
    assert len(p) == 6 and sum(p) == pytest.approx(1.0)
    assert p[1] == pytest.approx(0.5, abs=1e-9) and p[4] == pytest.approx(0.5, abs=1e-9)
    assert distribution([], 0.5) == pytest.approx([1 / 3] * 3)


def _policy(messages: list[dict[str, str]]) -> dict[str, str]:
    if "garbled" in messages[-1]["content"]:
        return {"raw": "I would say after the second sentence"}
    return {"raw": json.dumps({"positions": [1.3, 2.9, 99.0], "reason": "clause ends"})}


def test_annotation_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "flexi"
    for name, words in (("dialog_1", [("So", 0.2, 0.5), ("yesterday", 0.6, 1.3),
                                      ("I", 2.0, 2.2), ("went", 2.3, 2.9)]),
                        ("dialog_2", [("garbled", 0.1, 0.9)])):
        write(root / name, input_json=transcript(words))
        silent_wav(root / name / "input.wav", 4.0)
    out = tmp_path / "ref.json"
    with FakeJudge(policy=_policy) as server:
        args = ["bc-reference", str(root), "-o", str(out), "--judge-url", server.base_url,
                "--judge-model", "fake", "--judge-cache", str(tmp_path / "c.sqlite")]
        assert main(args) == 0
        assert main(args) == 0 and len(server.requests) == 2  # the rerun is cached
    ref = read_reference_distribution(out)
    assert set(ref) == {"dialog_1"} and len(ref["dialog_1"]) == int(4.0 / 0.2) + 1
    assert ref["dialog_1"][6] == pytest.approx(0.5, abs=1e-9)  # 1.3 s
    assert ref["dialog_1"][14] == pytest.approx(0.5, abs=1e-9)  # 2.9 s
    records = {r["item"]: r for r in map(json.loads, (tmp_path / "ref.json.provenance.jsonl")
                                          .read_text().splitlines())}
    assert records["dialog_1"]["dropped"] == 1 and records["dialog_1"]["prompt_version"] >= 1
    assert records["dialog_2"]["unusable_reason"] and records["dialog_2"]["raw"]
    assert "1 item(s) without one" in capsys.readouterr().out


def test_a_judge_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "flexi"
    write(root / "dialog_1", input_json=transcript([("So", 0.2, 0.5)]))
    silent_wav(root / "dialog_1" / "input.wav", 1.0)
    before = sorted(tmp_path.rglob("*"))
    assert main(["bc-reference", str(root), "-o", str(tmp_path / "x.json")]) == 2
    assert "needs --judge-url" in capsys.readouterr().err
    # a missing source is named first, judge or not: the line the user needs to fix it
    missing = tmp_path / "nope"
    assert main(["bc-reference", str(missing), "-o", str(tmp_path / "x.json")]) == 2
    assert f"{missing}: not a folder" in capsys.readouterr().err
    assert sorted(tmp_path.rglob("*")) == before
