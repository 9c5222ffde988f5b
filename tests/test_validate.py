"""Validation: each problem from its own fixture, reported with file and line, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import make_dataset, write_jsonl, write_stereo
from duplexeval.cli import main
from duplexeval.data import Need, check_dataset

GOOD_EVENTS = {"0": [("TURN", 0.5, 2.0)], "1": [("TURN_SHIFT", 2.0, 2.3), ("TURN", 2.3, 4.0)]}
GOOD_WORDS = [(0, 0.5, 1.2, "hello"), (0, 1.2, 2.0, "there"), (1, 2.3, 4.0, "hi")]


def problems(root: Path, **kwargs) -> list[str]:
    report = check_dataset(root, **kwargs)
    return [str(p) for p in report.problems]


def one_problem(root: Path, needle: str, **kwargs) -> str:
    found = problems(root, **kwargs)
    assert len(found) == 1, found
    assert needle in found[0], found
    return found[0]


def test_clean_dataset_has_no_problem(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "ok", GOOD_EVENTS, GOOD_WORDS)
    assert problems(root) == []
    assert main(["validate", str(root)]) == 0


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, GOOD_WORDS)
    path = root / "test.jsonl"
    path.write_text(path.read_text() + '{"id": "d2", "events": \n', encoding="utf-8")
    line = one_problem(root, "malformed JSON")
    assert line.startswith(f"{path}:2: ")


def test_unknown_event_kind(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", {"0": [("TURN", 0.5, 2.0), ("LAUGH", 1.0, 1.2)]},
                        [(0, 0.5, 2.0, "hello")])
    assert "unknown event kind 'LAUGH'" in one_problem(root, "test.jsonl:1:")


def test_start_after_end_only_legal_for_an_overlapping_shift(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "bad", {"0": [("TURN_HOLD", 3.0, 2.0)]}, [])
    one_problem(root, "start > end")
    # ch0 |=====|            an overlapping TURN_SHIFT [2.0, 1.8] is fine
    # ch1      |=====|
    root = make_dataset(tmp_path / "shift", {"0": [("TURN", 0.5, 2.0)],
                        "1": [("TURN_SHIFT", 2.0, 1.8), ("TURN", 1.8, 4.0)]},
                        [(0, 0.5, 2.0, "a"), (1, 1.8, 4.0, "b")])
    assert problems(root) == []


def test_times_outside_the_audio(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", {"0": [("TURN", 0.5, 25.0)]}, [(0, 0.5, 2.0, "a")],
                        audio_seconds=20.0)
    one_problem(root, "after the end of the audio")
    root = make_dataset(tmp_path / "w", {"0": [("TURN", 0.5, 2.0)]}, [(0, 0.5, 21.0, "a")],
                        audio_seconds=20.0)
    one_problem(root, "after the audio ends")


def test_audio_not_stereo(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, GOOD_WORDS, audio_seconds=None)
    write_stereo(root / "audio" / "d1.wav", 5.0, channels=1)
    one_problem(root, "not stereo")


def test_missing_audio(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, GOOD_WORDS, audio_seconds=None)
    assert one_problem(root, "audio file not found").startswith(str(root / "audio" / "d1.wav"))
    # optional where only annotations are needed (planning)
    assert problems(root, audio=Need.OPTIONAL) == []
    assert check_dataset(root, audio=Need.OPTIONAL).warnings


def test_missing_alignment(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, None)
    one_problem(root, "alignment file not found")


def test_words_out_of_order(tmp_path: Path) -> None:
    words = [(0, 1.2, 2.0, "there"), (0, 0.5, 1.2, "hello"), (1, 2.3, 4.0, "hi")]
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, words)
    assert one_problem(root, "out of order").startswith(str(root / "txt_align" / "d1.txt") + ":2:")


def test_words_overlapping_on_one_channel(tmp_path: Path) -> None:
    words = [(0, 0.5, 1.3, "hello"), (0, 1.2, 2.0, "there"), (1, 2.3, 4.0, "hi")]
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, words)
    one_problem(root, "overlaps the word on line 1")


def test_malformed_alignment_line(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, GOOD_WORDS)
    path = root / "txt_align" / "d1.txt"
    path.write_text(path.read_text() + "0\tabc\t5\tword\n", encoding="utf-8")
    one_problem(root, ":4: start and end must be numbers")


def test_missing_split_lists_the_available_ones(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, GOOD_WORDS)
    one_problem(root, "available splits: test", split="dev")


def test_duplicate_ids(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, GOOD_WORDS)
    record = {"id": "d1", "events": {"0": [], "1": []}}
    write_jsonl(root / "test.jsonl", [record, record])
    one_problem(root, "duplicate dialogue id d1")


def test_cli_prints_one_line_per_problem_and_exits_2(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = make_dataset(tmp_path / "d", {"0": [("TURN", 0.5, 2.0), ("NOPE", 1, 2)],
                                         "1": [("TURN_HOLD", 3.0, 2.0)]}, None)
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert any("unknown event kind 'NOPE'" in line for line in lines)
    assert any("start > end" in line for line in lines)
    assert any("alignment file not found" in line for line in lines)
    assert lines[-1].endswith("3 problem(s)")


def test_commands_that_read_a_dataset_are_guarded(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = make_dataset(tmp_path / "d", {"0": [("TURN", 0.5, 2.0), ("NOPE", 1, 2)]}, None)
    assert main(["plan", str(root), "--protocol", "single"]) == 2
    err = capsys.readouterr().err
    assert "unknown event kind 'NOPE'" in err and "Traceback" not in err


# ids that would name a file outside the dataset or a hidden one: each form, and the reason
BAD_IDS = [
    ("../../etc/evil", "contains a path separator"),
    ("a/b", "contains a path separator"),
    ("a\\b", "contains a path separator"),
    ("..", "contains '..'"),
    ("x..y", "contains '..'"),
    (".hidden", "starts with '.'"),
    ("a\nb", "contains a control character"),
    ("a\x00b", "contains a control character"),
    ("tab\there", "contains a control character"),
    ("del\x7f", "contains a control character"),
]


@pytest.mark.parametrize(("bad_id", "why"), BAD_IDS)
def test_ids_that_are_not_file_names_are_refused_with_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bad_id: str, why: str) -> None:
    root = make_dataset(tmp_path / "d", GOOD_EVENTS, GOOD_WORDS)
    jsonl = root / "test.jsonl"
    write_jsonl(jsonl, [{"id": "d1", "events": {"0": [], "1": []}},
                        {"id": bad_id, "events": {"0": [], "1": []}}])
    line = one_problem(root, why)
    assert line.startswith(f"{jsonl}:2: dialogue id {bad_id!r} cannot be used in a file name: "
                           f"{why}")
    assert "\n" not in line
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"{jsonl}:2: dialogue id" in err and "Traceback" not in err
    # one line per problem, and no count under a single problem
    assert len([x for x in err.splitlines() if x.strip()]) == 1


def test_ordinary_ids_are_file_names(tmp_path: Path) -> None:
    for i, good in enumerate(["d1", "A0050_x-1.2", "りんご", "a.b", "7", "with space"]):
        root = make_dataset(tmp_path / str(i), GOOD_EVENTS, GOOD_WORDS, dialogue_id=good)
        assert problems(root) == [], good
