"""``data import magicdata``: a tiny MagicData conversation round-trips into the M3 layout."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import Need, check_dataset
from duplexeval.events import EventKind, annotate_spans
from duplexeval.timeline import Span
from recipe_fixtures import MAGIC_ID, MAGIC_TXT, MAGIC_UTTERANCES, make_magicdata


def _import(source: Path, out: Path, *extra: str) -> int:
    return main(["data", "import", "magicdata", str(source), "-o", str(out), *extra])


def _rounded(events: object) -> list[tuple[object, int, float, float]]:
    return [(e.kind, e.channel, round(e.start, 3), round(e.end, 3)) for e in events]


@pytest.mark.parametrize("per_speaker", [False, True])
def test_magicdata_round_trip(tmp_path: Path, per_speaker: bool) -> None:
    make_magicdata(tmp_path / "src", per_speaker=per_speaker)
    out = tmp_path / "magicdata"
    assert _import(tmp_path / "src", out) == 0
    report = check_dataset(out, "test", audio=Need.REQUIRE, alignment=Need.REQUIRE)
    assert report.problems == []
    (d,) = report.dataset.dialogues
    assert d.id == MAGIC_ID and report.dataset.language == "ja"
    assert d.extra["source"]["speakers"] == ["G0001", "G0002"]
    assert "swapped" not in d.extra["source"]
    assert d.audio.sample_rate == 16000 and d.audio.duration == pytest.approx(6.0)
    for ch, start, end, text in MAGIC_UTTERANCES:  # the utterance's words, back to back
        words = [w for w in d.words_on(ch) if start - 1e-6 <= w.start and w.end <= end + 1e-6]
        assert "".join(w.text for w in words) == text
        assert words[0].start == pytest.approx(start) and words[-1].end == pytest.approx(end)
    assert sum(len(w.text) for w in d.words) == sum(len(u[3]) for u in MAGIC_UTTERANCES)
    spans = {ch: [Span(s, e) for c, s, e, _ in MAGIC_UTTERANCES if c == ch] for ch in (0, 1)}
    assert _rounded(d.events) == _rounded(annotate_spans(spans))
    assert [e.channel for e in d.events_of(EventKind.BC)] == [1]  # the overlapping うん
    assert {(e.channel, e.start, e.end) for e in d.events_of(EventKind.TURN_SHIFT)} == {
        (1, 1.5, 1.7), (0, 3.0, 4.0)}


@pytest.mark.parametrize(("old", "new", "where"), [
    ("[1.700,3.000]", "[1.700-3.000]", f"TXT/{MAGIC_ID}.txt:3: times must be [start,end]"),
    ("[4.000,5.200]", "[5.200,4.000]", f"TXT/{MAGIC_ID}.txt:6: bad time range"),
    ("\tG0002\t男\tうん", "\tG0002", f"TXT/{MAGIC_ID}.txt:2: expected [start,end]"),
    ("G0002\t男\tはい", "G0003\t男\tはい", f"TXT/{MAGIC_ID}.txt: 3 speaker(s)"),
])
def test_malformed_magicdata_is_one_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
        where: str) -> None:
    src = make_magicdata(tmp_path / "src")
    assert old in MAGIC_TXT
    (src / "TXT" / f"{MAGIC_ID}.txt").write_text(MAGIC_TXT.replace(old, new, 1),
                                                encoding="utf-8")
    assert _import(src, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and where in err[0], err
    assert list(tmp_path.iterdir()) == [tmp_path / "src"]


def test_magicdata_without_audio_names_the_missing_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = make_magicdata(tmp_path / "src")
    (src / "WAV" / f"{MAGIC_ID}.wav").unlink()
    assert _import(src, tmp_path / "out") == 2
    assert f"WAV/{MAGIC_ID}.wav: no stereo WAV" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_swapped_stereo_channels_are_put_back(tmp_path: Path) -> None:
    src = make_magicdata(tmp_path / "src")
    wav = src / "WAV" / f"{MAGIC_ID}.wav"
    audio, rate = sf.read(str(wav))
    sf.write(str(wav), audio[:, ::-1], rate)
    assert _import(src, tmp_path / "out") == 0
    (d,) = check_dataset(tmp_path / "out", "test").dataset.dialogues
    assert d.extra["source"]["swapped"] is True
    out, _ = sf.read(str(d.audio.path))
    at = round(0.5 * 16000)  # G0001 alone speaks: on channel 0 again
    assert abs(out[at - 80:at + 80, 0]).max() > 0.05 and abs(out[at - 80:at + 80, 1]).max() < 0.01
