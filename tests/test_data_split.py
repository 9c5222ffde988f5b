"""``duplexeval data split``: deterministic, speaker-disjoint test and dev sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.data import Dialogue, load_dataset, write_dataset
from duplexeval.data._split import dialogue_speakers, speaker_disjoint_split
from duplexeval.events import Event, EventKind

CONVERSATIONS = {  # source id: (speakers, segments of 100 s)
    "c1": (["A", "B"], 3), "c2": (["C", "D"], 2), "c3": (["A", "E"], 1), "c4": (["F", "G"], 1),
    "c5": (["H", "B"], 1),
}


def _dialogues() -> list[Dialogue]:
    out = []
    for source, (speakers, n) in CONVERSATIONS.items():
        for k in range(n):
            out.append(Dialogue(
                id=f"{source}.{k * 100.0}-{(k + 1) * 100.0}",
                events=(Event(EventKind.TURN, 0, 0.0, 100.0),),
                extra={"source": {"corpus": "candor", "id": source, "speakers": speakers}}))
    return out


def test_split_is_speaker_disjoint_and_follows_the_scores() -> None:
    dialogues = _dialogues()
    scores = {"c2.0.0-100.0": 4.0, "c4.0.0-100.0": 3.5, "c1.0.0-100.0": 3.0}
    result = speaker_disjoint_split(dialogues, 250.0, scores)
    assert result.test == ("c2.0.0-100.0", "c4.0.0-100.0", "c1.0.0-100.0")
    assert result.test_seconds == 300.0
    by_id = {d.id: d for d in dialogues}
    test_speakers = set().union(*(dialogue_speakers(by_id[i]) for i in result.test))
    assert all(not dialogue_speakers(by_id[i]) & test_speakers for i in result.dev)
    assert result.dev == ()  # every other dialogue has A, B, C or D
    assert result.dropped == ("c1.100.0-200.0", "c1.200.0-300.0", "c2.100.0-200.0",
                              "c3.0.0-100.0", "c5.0.0-100.0")
    assert sorted(result.test + result.dev + result.dropped) == sorted(by_id)


def test_split_without_scores_is_deterministic() -> None:
    first = speaker_disjoint_split(_dialogues(), 150.0)
    again = speaker_disjoint_split(list(reversed(_dialogues())), 150.0)
    assert first.test == again.test and set(first.dev) == set(again.dev)
    assert len(first.test) == 2


def test_split_command_writes_test_dev_and_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ds"
    write_dataset(root, "all", _dialogues())
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"c4.0.0-100.0": 5, "c3.0.0-100.0": 4}))
    args = ["data", "split", str(root), "--hours", str(150 / 3600), "--scores", str(scores)]
    assert main(args) == 0
    test, _ = load_dataset(root, "test")
    dev, _ = load_dataset(root, "dev")
    assert [d.id for d in test] == ["c4.0.0-100.0", "c3.0.0-100.0"]
    assert [d.id for d in dev] == ["c2.0.0-100.0", "c2.100.0-200.0", "c5.0.0-100.0"]
    report = json.loads((root / "split.json").read_text())
    assert report["dropped"] == ["c1.0.0-100.0", "c1.100.0-200.0", "c1.200.0-300.0"]
    assert "dev 3; 3 dropped" in capsys.readouterr().out
    assert main(args) == 2  # the splits exist now
    assert "pass --force" in capsys.readouterr().err
