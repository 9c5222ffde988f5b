"""``duplexeval data import flexi``: a tiny copy of FLEXI's released data, made here in its
format (one ``dialog_1`` per scenario), into the M3 layout; ``validate`` passes on it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import check_dataset
from duplexeval.data.recipes._flexi import scenario_of
from flexi_folders import transcript, write

RATE = 16000


def _dialog(folder: Path, words: list[tuple[str, float, float]], seconds: float = 12.0,
            **files: object) -> None:
    """``input.wav`` (a quiet tone under each word, so its values are recognisable),
    ``input.json`` and the scenario's annotation files."""
    x = np.zeros(round(seconds * RATE), dtype=np.float32)
    for _, start, end in words:
        n = round(end * RATE) - round(start * RATE)
        x[round(start * RATE):round(end * RATE)] = 0.1 * np.sin(np.arange(n) * 0.05)
    folder.mkdir(parents=True)
    sf.write(str(folder / "input.wav"), x, RATE)
    write(folder, input_json=transcript(words), **files)


QUERY = [("What", 0.5, 0.9), ("is", 1.0, 1.2), ("the", 1.3, 1.5), ("water", 1.6, 2.0),
         ("cycle", 2.1, 2.6)]


def build_flexi(root: Path) -> None:
    """One dialog per scenario, FLEXI's folder names::

        turn_taking        user |What is the water cycle|2.6              TURN_SHIFT on 1 at 2.6
        pause_handing      user |I've been  thinking|  pause 3.0-4.0  |about it|
        user_interruption  user |query|          |Wait, one sentence| 6.0-8.0 BARGE_IN
        user_backchannel   user |query|      > 1.5 s      |Okay| 7.0        BC 7.0-7.4
        model_interruption user |false claim ... |5.0                    TURN_SHIFT at 5.0
        model_backchannel  user |narrative|  |narrative|                  TURN_SHIFT at end
    """
    _dialog(root / "turn_taking" / "dialog_1", QUERY,
            turn_taking_json=[{"text": "[TURN-TAKING]", "timestamp": [2.6, 12.0]}])
    _dialog(root / "pause_handing" / "dialog_1",
            [("I've", 0.5, 1.0), ("been", 1.1, 2.0), ("thinking", 2.1, 3.0), ("about", 4.0, 4.5),
             ("it", 4.6, 5.0)], pause_json={"timestamp": [3.0, 4.0]})
    _dialog(root / "user_interruption" / "dialog_1",
            [*QUERY, ("Wait", 6.0, 6.5), ("one", 6.6, 7.0), ("sentence", 7.1, 8.0)],
            interrupt_json=[{"context": "What is the water cycle?",
                             "interrupt": "Wait, one sentence.", "timestamp": [6.0, 8.0]}])
    _dialog(root / "user_backchannel" / "dialog_1", [*QUERY, ("Okay", 7.0, 7.4)],
            metadata_json={"user_backchannel_times": [7.0]})
    _dialog(root / "model_interruption" / "dialog_1",
            [("Mix", 0.5, 1.0), ("bleach", 1.1, 2.0), ("and", 2.1, 2.5), ("ammonia", 2.6, 5.0)])
    _dialog(root / "model_backchannel" / "dialog_1",
            [("So", 0.5, 1.0), ("I", 1.1, 1.5), ("went", 1.6, 3.0), ("hiking", 4.5, 6.0),
             ("yesterday", 6.1, 8.0)])


def _records(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "test.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def _events(record: dict[str, object], channel: str, kind: str) -> list[list[float]]:
    events = record["events"]
    assert isinstance(events, dict)
    return [e["time"] for e in events.get(channel, []) if e["event"] == kind]


def test_import_writes_a_valid_m3_dataset_with_each_scenario_event(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]
                                                                 ) -> None:
    build_flexi(tmp_path / "flexi")
    out = tmp_path / "dataset"
    assert main(["data", "import", "flexi", str(tmp_path / "flexi"), "-o", str(out)]) == 0
    assert "6 dialogue(s)" in capsys.readouterr().out
    report = check_dataset(out)
    assert report.ok, report.problems
    r = _records(out)
    assert set(r) == {f"flexi_{s}_dialog_1" for s in (
        "turn_taking", "pause_handling", "user_interrupt", "user_backchannel",
        "model_interrupt", "model_backchannel")}
    assert _events(r["flexi_turn_taking_dialog_1"], "1", "TURN_SHIFT") == [[2.6, 2.6]]
    assert _events(r["flexi_turn_taking_dialog_1"], "0", "TURN") == [[0.5, 2.6]]
    pause = r["flexi_pause_handling_dialog_1"]
    assert _events(pause, "0", "TURN_HOLD") == [[3.0, 4.0]]
    assert _events(pause, "1", "TURN_SHIFT") == [[5.0, 5.0]]
    ui = r["flexi_user_interrupt_dialog_1"]
    assert _events(ui, "0", "BARGE_IN") == [[6.0, 8.0]]
    assert ui["flexi"] == {"scenario": "user_interrupt", "source": "dialog_1",
                           "interrupt": [6.0, 8.0], "context": "What is the water cycle?",
                           "interrupt_text": "Wait, one sentence."}
    assert _events(r["flexi_user_backchannel_dialog_1"], "0", "BC") == [[7.0, 7.4]]
    assert _events(r["flexi_model_interrupt_dialog_1"], "1", "TURN_SHIFT") == [[5.0, 5.0]]
    assert _events(r["flexi_model_backchannel_dialog_1"], "0", "TURN_HOLD") == [[3.0, 4.5]]


def test_imported_audio_puts_the_user_on_channel_0_and_words_in_txt_align(
        tmp_path: Path) -> None:
    build_flexi(tmp_path / "flexi")
    out = tmp_path / "dataset"
    assert main(["data", "import", "flexi", str(tmp_path / "flexi" / "turn_taking"),
                 "-o", str(out)]) == 0
    stereo, rate = sf.read(str(out / "audio" / "flexi_turn_taking_dialog_1.wav"))
    mono, _ = sf.read(str(tmp_path / "flexi" / "turn_taking" / "dialog_1" / "input.wav"))
    assert rate == RATE and stereo.shape == (len(mono), 2)
    assert np.allclose(stereo[:, 0], mono, atol=1e-4) and not stereo[:, 1].any()
    lines = (out / "txt_align" / "flexi_turn_taking_dialog_1.txt").read_text().splitlines()
    assert lines[0] == "0\t0.5\t0.9\tWhat" and len(lines) == len(QUERY)


def test_backchannel_time_from_the_input_gap_without_metadata(tmp_path: Path) -> None:
    """No metadata.json: FLEXI's rule finds "Okay" after the 4.4 s gap."""
    _dialog(tmp_path / "user_backchannel" / "dialog_1", [*QUERY, ("Okay", 7.0, 7.4)])
    out = tmp_path / "dataset"
    assert main(["data", "import", "flexi", str(tmp_path / "user_backchannel"),
                 "-o", str(out)]) == 0
    assert _records(out)["flexi_user_backchannel_dialog_1"]["flexi"]["backchannel_time"] == 7.0


def test_bad_sources_are_one_line_errors(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    build_flexi(tmp_path / "flexi")
    (tmp_path / "flexi" / "pause_handing" / "dialog_1" / "pause.json").unlink()
    assert main(["data", "import", "flexi", str(tmp_path / "flexi"), "-o",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pause.json: required file not found" in err[0]
    assert main(["data", "import", "flexi", str(tmp_path), "-o", str(tmp_path / "o")]) == 2
    assert "no FLEXI scenario folder" in capsys.readouterr().err
    assert main(["data", "import", "flexi", str(tmp_path / "flexi" / "turn_taking"),
                 "-o", str(tmp_path / "o2")]) == 0
    assert main(["data", "import", "flexi", str(tmp_path / "flexi" / "turn_taking"),
                 "-o", str(tmp_path / "o2")]) == 2
    assert "--force" in capsys.readouterr().err


@pytest.mark.parametrize("name, scenario", [
    ("turn_taking", "turn_taking"), ("Turn-Taking", "turn_taking"),
    ("pause_handing", "pause_handling"), ("user_interruption", "user_interrupt"),
    ("model_interrupt", "model_interrupt"), ("user_backchannel", "user_backchannel"),
    ("model_backchannel", "model_backchannel"), ("backchannel", None), ("dialogs", None)])
def test_scenario_folder_names(name: str, scenario: str | None) -> None:
    assert scenario_of(name) == scenario
