"""``data import topiocqa``: TopiOCQA's JSON/JSONL into dialogue specs (and, with --synth, a
voiced dataset)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.data import Need, check_dataset
from duplexeval.events import EventKind
from duplexeval.speech._tts import engine_class
from duplexeval.synth._spec import load_specs
from recipe_fixtures import TOPIOCQA, make_topiocqa


def _import(source: Path, out: Path, *extra: str) -> int:
    return main(["data", "import", "topiocqa", str(source), "-o", str(out), *extra])


@pytest.mark.parametrize("jsonl", [False, True])
def test_topiocqa_specs_round_trip(tmp_path: Path, jsonl: bool) -> None:
    out = tmp_path / "topiocqa"
    assert _import(make_topiocqa(tmp_path / "src", jsonl=jsonl), out) == 0
    specs = load_specs(out / "specs")
    assert [s.id for s in specs] == ["topiocqa_dev_0001", "topiocqa_dev_0002"]
    first = specs[0]
    assert first.language == "en" and first.domain == "task"
    assert {s.id: s.channel for s in first.speakers} == {"user": 1, "system": 0}
    assert [(t.speaker, t.text) for t in first.turns] == [
        ("user", TOPIOCQA[0]["Question"]), ("system", TOPIOCQA[0]["Answer"]),
        ("user", TOPIOCQA[1]["Question"]), ("system", TOPIOCQA[1]["Answer"])]
    assert [t.gap for t in first.turns if t.speaker == "system"] == [0.2, 0.2]
    assert first.turns[2].answer == "December 18, 2017"
    unanswerable = specs[1].turns
    assert unanswerable[2].answer == "UNANSWERABLE"
    assert unanswerable[3].text == "Sorry, I don't know."
    refs = [json.loads(x) for x in (out / "references.jsonl").read_text().splitlines()]
    assert [(r["Conversation_no"], r["Turn_no"], r["turn"]) for r in refs] == [
        (1, 1, 0), (1, 2, 2), (2, 1, 0), (2, 2, 2)]
    assert refs[1]["answers"] == ["December 18, 2017", "18 December 2017"]
    assert not list(tmp_path.glob(".topiocqa*"))


def test_short_answers_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _import(make_topiocqa(tmp_path / "src"), tmp_path / "out") == 0
    assert "1 answer(s) of under 3 words" in capsys.readouterr().out


def _write(tmp_path: Path, turns: list[dict]) -> Path:
    path = tmp_path / "topiocqa_dev.json"
    path.write_text(json.dumps(turns, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize(("change", "message"), [
    ({"Turn_no": "2"}, "Turn_no must be an integer >= 1"),
    ({"Answer": ""}, "Answer must be a non-empty string"),
    ({"Turn_no": 1}, "conversation 1: Turn_no 1 repeated"),
    ({"Additional_answers": [{"answer": "x"}]}, "Additional_answers must be a list"),
])
def test_malformed_topiocqa_names_the_turns_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict, message: str) -> None:
    turns = [dict(t) for t in TOPIOCQA]
    turns[1].update(change)
    path = _write(tmp_path, turns)
    starts = [i for i, x in enumerate(path.read_text().splitlines(), start=1) if x == " {"]
    assert _import(path, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"topiocqa_dev.json:{starts[1]}: " in err[0] and message in err[0]
    assert not (tmp_path / "out").exists()


def test_broken_topiocqa_json_names_the_line(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, TOPIOCQA)
    lines = path.read_text().splitlines()
    lines[20] = lines[20] + ","  # a dangling comma inside the second object
    path.write_text("\n".join(lines))
    assert _import(path, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert "topiocqa_dev.json:" in err and "malformed JSON" in err and "\n" not in err


@pytest.mark.skipif(engine_class("piper").unavailable_reason() is not None,
                    reason="piper (duplexeval[tts-en]) not installed")
def test_topiocqa_synth_voices_the_specs(tmp_path: Path) -> None:
    src = _write(tmp_path, TOPIOCQA[0:1])
    out = tmp_path / "voiced"
    assert _import(src, out, "--synth") == 0
    report = check_dataset(out, "test", audio=Need.REQUIRE, alignment=Need.REQUIRE)
    assert report.problems == []
    (d,) = report.dataset.dialogues
    assert d.id == "topiocqa_dev_0001" and report.dataset.domain == "task"
    said = {ch: " ".join(w.text for w in d.words_on(ch)).lower() for ch in (0, 1)}
    assert "dunkirk about" in said[1] and "evacuation of allied soldiers" in said[0]
    (shift,) = d.events_of(EventKind.TURN_SHIFT)
    assert shift.channel == 0 and shift.end - shift.start == pytest.approx(0.2, abs=0.02)
