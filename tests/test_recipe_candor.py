"""``data import candor``: a tiny CANDOR folder round-trips into the M3 layout."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import Need, check_dataset
from duplexeval.events import annotate_spans
from recipe_fixtures import (
    CANDOR_WORDS,
    SPEAKER_L,
    SPEAKER_R,
    UUID,
    aws_items,
    make_candor,
)


def _import(source: Path, out: Path, *extra: str) -> int:
    return main(["data", "import", "candor", str(source), "-o", str(out), "--segment", "0",
                 *extra])


def _rounded(words: object) -> list[tuple[int, float, float, str]]:
    return sorted((w.channel, round(w.start, 3), round(w.end, 3), w.text) for w in words)


def _expected_events() -> list[object]:
    spans = {ch: [w.span for w in CANDOR_WORDS if w.channel == ch] for ch in (0, 1)}
    return annotate_spans(spans)


def _load(out: Path) -> object:
    report = check_dataset(out, "test", audio=Need.REQUIRE, alignment=Need.REQUIRE)
    assert report.problems == []
    return report.dataset


@pytest.mark.parametrize("mp3", [True, False])
def test_candor_round_trip(tmp_path: Path, mp3: bool, capsys: pytest.CaptureFixture[str]) -> None:
    make_candor(tmp_path / "src", mp3=mp3)
    out = tmp_path / "candor"
    assert _import(tmp_path / "src", out) == 0
    assert "1 dialogue(s) from CANDOR" in capsys.readouterr().out
    dataset = _load(out)
    (dialogue,) = dataset.dialogues
    assert dialogue.id == UUID and dataset.language == "en" and dataset.domain == "chat"
    assert _rounded(dialogue.words) == _rounded(CANDOR_WORDS)
    assert [(e.kind, e.channel, round(e.start, 3), round(e.end, 3)) for e in dialogue.events] \
        == [(e.kind, e.channel, round(e.start, 3), round(e.end, 3)) for e in _expected_events()]
    kinds = {e.kind.value for e in dialogue.events}
    assert {"TURN", "BC", "TURN_SHIFT", "TURN_HOLD", "SHORTPAUSE"} <= kinds
    assert dialogue.extra["source"]["speakers"] == [SPEAKER_L, SPEAKER_R]
    assert dialogue.audio.sample_rate == 16000 and dialogue.audio.channels == 2
    audio, _ = sf.read(str(dialogue.audio.path))  # channel 0 = L: speech where L's words are
    at = round(0.4 * 16000)
    assert np.abs(audio[at - 100:at + 100, 0]).max() > 0.05
    assert np.abs(audio[at - 100:at + 100, 1]).max() < 0.02


def test_candor_backbiter_and_channel_labels(tmp_path: Path) -> None:
    folder = make_candor(tmp_path / "src")
    assert _import(folder, tmp_path / "bb", "--transcript", "backbiter") == 0
    (d,) = _load(tmp_path / "bb").dialogues
    assert _rounded(d.words) == _rounded(CANDOR_WORDS)
    aws = folder / "transcription" / "transcribe_output.json"
    obj = json.loads(aws.read_text())
    del obj["results"]["items"]
    obj["results"]["channel_labels"] = {"number_of_channels": 2, "channels": [
        {"channel_label": f"ch_{ch}", "items": aws_items([w for w in CANDOR_WORDS
                                                         if w.channel == ch])} for ch in (0, 1)]}
    aws.write_text(json.dumps(obj))
    assert _import(folder, tmp_path / "labels") == 0
    (d,) = _load(tmp_path / "labels").dialogues
    assert _rounded(d.words) == _rounded(CANDOR_WORDS)


def test_candor_without_aws_words_spreads_the_turns(tmp_path: Path) -> None:
    folder = make_candor(tmp_path / "src")
    (folder / "transcription" / "transcribe_output.json").unlink()
    assert _import(folder, tmp_path / "out") == 0
    (d,) = _load(tmp_path / "out").dialogues
    assert [w.text for w in d.words_on(1)] == ["Yeah", "Ohio,", "you?"]
    assert d.words_on(0)[0].start == pytest.approx(0.3)


def test_candor_mono_mix_takes_each_speakers_track(tmp_path: Path) -> None:
    folder = make_candor(tmp_path / "src", mp3=False)
    wav = folder / "processed" / f"{UUID}.wav"
    audio, rate = sf.read(str(wav))
    wav.unlink()
    sf.write(str(folder / "processed" / f"{UUID}.wav"), audio.mean(axis=1), rate)
    sf.write(str(folder / "processed" / f"{SPEAKER_L}.wav"), audio[:, 0], rate)
    sf.write(str(folder / "processed" / f"{SPEAKER_R}.wav"), audio[::3, 1], rate // 3)
    assert _import(folder, tmp_path / "out") == 0
    (d,) = _load(tmp_path / "out").dialogues
    assert d.audio.duration == pytest.approx(6.0, abs=0.01)


def test_candor_segments_keep_the_source_id_and_range(tmp_path: Path) -> None:
    make_candor(tmp_path / "src")
    assert main(["data", "import", "candor", str(tmp_path / "src"), "-o",
                 str(tmp_path / "out"), "--segment", "3"]) == 0
    dialogues = _load(tmp_path / "out").dialogues
    first, second = dialogues
    assert first.id == f"{UUID}.0.0-4.1" and second.id.startswith(f"{UUID}.4.1-")
    assert [(w.text, round(w.start, 3)) for w in second.words] == [("and", 0.7), ("you", 0.95)]
    assert second.extra["source"]["start"] == 4.1


@pytest.mark.parametrize(("edit", "where"), [
    (lambda f: _replace(f / "transcription" / "transcript_audiophile.csv", ",2.7,", ",2.7x,"),
     "transcript_audiophile.csv:5: start must be seconds"),
    (lambda f: _replace(f / "transcription" / "transcript_audiophile.csv", "8e123", "77"),
     "transcript_audiophile.csv:3: speaker '77' is neither"),
    (lambda f: _replace(f / "transcription" / "transcribe_output.json", '"results"', '"results',
                        ), "transcribe_output.json:1: malformed JSON"),
])
def test_malformed_candor_is_one_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, where: str) -> None:
    folder = make_candor(tmp_path / "src")
    edit(folder)  # type: ignore[operator]
    out = tmp_path / "out"
    assert _import(folder, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and where in err[0]
    assert not out.exists() and list(tmp_path.iterdir()) == [tmp_path / "src"]


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_candor_speaker_labels_outvote_the_turns(tmp_path: Path) -> None:
    folder = make_candor(tmp_path / "src")
    csv_path = folder / "transcription" / "transcript_audiophile.csv"
    csv_path.write_text("".join(line + "\n" for line in csv_path.read_text().splitlines()
                                if ",Yeah," not in line))  # the BC row gone: "Yeah" looks like L's
    assert _import(folder, tmp_path / "turns") == 0
    (d,) = _load(tmp_path / "turns").dialogues
    assert "Yeah" in [w.text for w in d.words_on(0)]
    aws = folder / "transcription" / "transcribe_output.json"
    obj = json.loads(aws.read_text())
    obj["results"]["speaker_labels"] = {"speakers": 2, "segments": [
        {"speaker_label": f"spk_{ch}", "items": [
            {"start_time": f"{w.start:.2f}", "end_time": f"{w.end:.2f}",
             "speaker_label": f"spk_{ch}"} for w in CANDOR_WORDS if w.channel == ch]}
        for ch in (0, 1)]}
    aws.write_text(json.dumps(obj))
    assert _import(folder, tmp_path / "labels") == 0
    (d,) = _load(tmp_path / "labels").dialogues
    assert _rounded(d.words) == _rounded(CANDOR_WORDS)


def test_a_later_malformed_conversation_leaves_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_candor(tmp_path / "src")
    second = make_candor(tmp_path / "other")
    second = second.rename(tmp_path / "src" / "ffffffff-1658-4747-99c1-2839e736b481")
    (second / "processed" / "channel_map.json").write_text('{"L": "x"}')
    out = tmp_path / "out"
    assert _import(tmp_path / "src", out) == 2
    assert "channel_map.json: expected" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "src"]
    out.mkdir()
    (out / "test.jsonl").write_text("")
    assert _import(tmp_path / "src", out) == 2
    assert "already holds test.jsonl; pass --force" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["test.jsonl"]


def test_a_second_split_joins_the_dataset_and_force_replaces_one(tmp_path: Path) -> None:
    folder = make_candor(tmp_path / "src")
    out = tmp_path / "out"
    assert _import(folder, out) == 0
    assert _import(folder, out, "--split", "dev") == 0
    assert sorted(p.name for p in out.iterdir()) == ["audio", "dataset.json", "dev.jsonl",
                                                     "test.jsonl", "txt_align"]
    assert _load(out).dialogues[0].id == UUID
    assert _import(folder, out, "--segment", "3") == 2
    assert main(["data", "import", "candor", str(folder), "-o", str(out), "--segment", "3",
                 "--force"]) == 0
    ids = [d.id for d in _load(out).dialogues]
    assert len(ids) == 2 and ids[0] == f"{UUID}.0.0-4.1"
    assert not list(tmp_path.glob(".out*"))
