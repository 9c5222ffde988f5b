"""``duplexeval data stats``: Table 3 statistics per split and domain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.data import Dialogue, write_dataset
from duplexeval.events import Event, EventKind

K = EventKind


def _dialogue(dialogue_id: str, domain: str, events: list[Event]) -> Dialogue:
    return Dialogue(id=dialogue_id, events=tuple(events), domain=domain,
                    extra={"domain": domain})


def _make(root: Path) -> Path:
    chat = _dialogue("c1", "chat", [Event(K.TURN, 0, 0.0, 10.0), Event(K.TURN_SHIFT, 1, 10.0,
                     10.5), Event(K.TURN, 1, 10.5, 60.0), Event(K.BC, 0, 20.0, 20.4),
                     Event(K.SHORTPAUSE, 1, 30.0, 30.2), Event(K.TURN_HOLD, 1, 40.0, 41.0)])
    task = _dialogue("t1", "task", [Event(K.TURN, 1, 0.0, 5.0), Event(K.TURN_SHIFT, 0, 5.0, 4.8),
                     Event(K.TURN, 0, 4.8, 30.0), Event(K.BARGE_IN, 1, 20.0, 30.0),
                     Event(K.TURN, 1, 20.0, 90.0)])
    write_dataset(root, "test", [chat, task], {"name": "mixed", "language": "en"})
    write_dataset(root, "dev", [chat], {"name": "mixed", "language": "en"})
    return root


def test_stats_json_counts_kinds_durations_and_domains(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _make(tmp_path / "ds")
    assert main(["data", "stats", str(root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    groups = out["groups"]
    assert list(groups) == ["dev", "test", "test/chat", "test/task"]
    test = groups["test"]
    assert test["dialogues"] == 2 and test["hours"] == round(150 / 3600, 4)
    assert test["mean_dialogue_s"] == 75.0
    assert test["table3"] == {"SHIFT": 2, "PAUSE": 2, "BC": 1, "BARGE_IN": 1}
    assert test["events"]["TURN_SHIFT"] == {"n": 2, "total_s": 0.3, "mean_s": 0.15}
    assert groups["test/task"]["events"]["BARGE_IN"]["mean_s"] == 10.0
    assert groups["dev"]["dialogues"] == 1


def test_stats_table_for_one_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _make(tmp_path / "ds")
    assert main(["data", "stats", str(root), "--split", "dev"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "mixed (en, ?)"
    rows = {line.split("  ")[0].strip(): line.split()[-1] for line in lines[3:]}
    assert rows["# Dialogues"] == "1" and rows["Mean dur. (s)"] == "60.0"
    assert rows["# SHIFT"] == "1" and rows["# BARGE_IN"] == "0" and rows["BC mean (s)"] == "0.400"


def test_stats_of_a_missing_split_is_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = _make(tmp_path / "ds")
    assert main(["data", "stats", str(root), "--split", "other"]) == 2
    assert "split 'other' not found" in capsys.readouterr().err
