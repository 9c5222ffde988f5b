"""The M3 dataset layout: lossless round trips and a golden file for what we write."""

from __future__ import annotations

from pathlib import Path

from conftest import SAMPLE_EN
from duplexeval._fileio import format_seconds
from duplexeval.data import Dialogue, Word, load_dataset
from duplexeval.data._m3 import format_alignment, read_alignment, write_dataset
from duplexeval.events import Event, EventKind

GOLDEN = Path(__file__).parent / "golden"


def test_format_seconds_reads_back_exactly() -> None:
    assert format_seconds(33.0) == "33"
    assert format_seconds(3.91) == "3.91"
    assert format_seconds(0.0) == "0"
    for value in (0.1, 2.98, 1 / 16000, 118.81, 1e-7, 12345.678901234):
        assert float(format_seconds(value)) == value


def _round_trips(root: Path, out: Path) -> None:
    dataset, _ = load_dataset(root)
    write_dataset(out, "test", dataset.dialogues)
    # the events file comes back byte for byte
    assert (out / "test.jsonl").read_bytes() == (root / "test.jsonl").read_bytes()
    # alignments: same words, values and order ("0.00" is written as "0")
    sources = sorted((root / "txt_align").glob("*.txt"))
    assert sources
    for source in sources:
        theirs, _ = read_alignment(source)
        ours, _ = read_alignment(out / "txt_align" / source.name)
        assert ours == theirs
    again, _ = load_dataset(out)
    for a, b in zip(dataset.dialogues, again.dialogues, strict=True):
        assert a.events == b.events and a.words == b.words
        assert a.channel_order == b.channel_order


def test_bundled_sample_round_trips_losslessly(tmp_path: Path) -> None:
    _round_trips(SAMPLE_EN, tmp_path / "sample-en")


def test_toy_datasets_round_trip_losslessly(m3_toy: dict[str, Path], tmp_path: Path) -> None:
    for name, root in m3_toy.items():
        _round_trips(root, tmp_path / name)


def test_written_dataset_matches_golden_files(tmp_path: Path) -> None:
    dialogue = Dialogue(
        id="golden_0001",
        events=(Event(EventKind.TURN, 0, 0.1, 1.5), Event(EventKind.SHORTPAUSE, 0, 0.6, 0.75),
                Event(EventKind.TURN_SHIFT, 1, 1.5, 1.3), Event(EventKind.TURN, 1, 1.3, 33.0)),
        words=(Word(1, 1.3, 33.0, "りんご"), Word(0, 0.1, 0.6, "hello"),
               Word(0, 0.75, 1.5, "there")),
        extra={"language": "en"},
    )
    write_dataset(tmp_path, "test", [dialogue], metadata={"name": "golden", "language": "en"})
    for name in ("test.jsonl", "txt_align/golden_0001.txt", "dataset.json"):
        assert (tmp_path / name).read_text(encoding="utf-8") == \
            (GOLDEN / "m3" / name).read_text(encoding="utf-8"), name


def test_audio_is_copied_and_read_back(tmp_path: Path) -> None:
    from conftest import make_dataset

    src = make_dataset(tmp_path / "src", {"0": [("TURN", 0.0, 1.0)], "1": []},
                       words=[(0, 0.0, 1.0, "hi")], audio_seconds=2.0)
    dataset, warnings = load_dataset(src)
    assert warnings == []
    assert dataset.dialogues[0].audio is not None
    assert dataset.dialogues[0].duration == 2.0
    out = tmp_path / "out"
    write_dataset(out, "test", dataset.dialogues)
    again, _ = load_dataset(out)
    assert again.dialogues[0].audio.path == out / "audio" / "d1.wav"
    assert again.dialogues[0].audio.sample_rate == 16000


def test_alignment_text_keeps_file_order(tmp_path: Path) -> None:
    text = "1\t3.91\t4.17\tゴルフ\n0\t0.1\t0.3\tはい\n1\t4.17\t33\tです\n"
    path = tmp_path / "a.txt"
    path.write_text(text, encoding="utf-8")
    words, problems = read_alignment(path)
    assert problems == []
    assert format_alignment(words) == text
