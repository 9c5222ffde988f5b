"""Annotation from stereo audio: voice activity per channel, then the same rules.

The alignments (the bundled sample-en; the official toy sets when present) are voiced as noise
bursts filling each word span on its channel, so the true speech spans are known exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from conftest import SAMPLE_EN
from duplexeval.cli import main
from duplexeval.data import load_dataset
from duplexeval.data._annotate import annotate_audio_files
from duplexeval.data._m3 import read_alignment
from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity
from duplexeval.timeline import Span


def voice(alignment: Path, out: Path, sr: int, offset: float = 0.0, seed: int = 0) -> None:
    """Stereo wav with noise bursts over every word (shifted by ``offset`` seconds)."""
    words, problems = read_alignment(alignment)
    assert not problems
    rng = np.random.default_rng(seed)
    n = int((max(w.end for w in words) + 1.0 + offset) * sr)
    audio = np.zeros((n, 2), dtype=np.float32)
    for w in words:
        a, b = round((w.start + offset) * sr), round((w.end + offset) * sr)
        audio[a:b, w.channel] = rng.uniform(-0.3, 0.3, b - a)
    audio += rng.normal(0, 1e-4, audio.shape).astype(np.float32)  # a little background noise
    out.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(out), audio, sr)


def test_energy_activity_by_hand() -> None:
    sr = 16000
    x = np.zeros(sr * 2, dtype=np.float32)
    x[int(0.5 * sr):int(1.2 * sr)] = 0.5
    spans = detect_activity(x, sr)
    assert spans == [Span(0.5, 1.2)]
    assert detect_activity(np.zeros(sr, dtype=np.float32), sr) == []  # silence: no speech


def _recovers_events(root: Path, tmp_path: Path) -> int:
    """Annotate noise bursts over ``root``'s alignments; the events must equal ``root``'s
    (kind, channel, times to 0.1 ms).  Returns the number of events compared."""
    official, _ = load_dataset(root)
    files = []
    for d in official.dialogues:
        wav = tmp_path / "audio" / f"{d.id}.wav"
        voice(root / "txt_align" / f"{d.id}.txt", wav, sr=16000)
        files.append(wav)
    derived = {d.id: d for d in annotate_audio_files(files)}
    total = 0
    for d in official.dialogues:
        def key(e):
            return (e.kind, e.channel, round(e.start, 4), round(e.end, 4))
        assert sorted(map(key, derived[d.id].events)) == sorted(map(key, d.events)), d.id
        total += len(d.events)
    return total


def test_audio_annotation_recovers_the_sample_events(tmp_path: Path) -> None:
    assert _recovers_events(SAMPLE_EN, tmp_path) == 49


def test_audio_annotation_recovers_the_toy_events(m3_toy: dict[str, Path],
                                                  tmp_path: Path) -> None:
    assert _recovers_events(m3_toy["chat"], tmp_path) > 0


def _unaligned_match(root: Path, tmp_path: Path) -> tuple[int, int]:
    """Audio shifted by 3 ms at 24 kHz (boundaries land inside 10 ms frames): (matched, total)
    TURN / TURN_SHIFT / BARGE_IN / TURN_HOLD events found within 11 ms."""
    official, _ = load_dataset(root)
    matched = total = 0
    for d in official.dialogues:
        wav = tmp_path / f"{d.id}.wav"
        voice(root / "txt_align" / f"{d.id}.txt", wav, sr=24000, offset=0.003)
        (got,) = annotate_audio_files([wav])
        for e in d.events:
            if e.kind.value not in ("TURN", "TURN_SHIFT", "BARGE_IN", "TURN_HOLD"):
                continue
            total += 1
            matched += any(g.kind == e.kind and g.channel == e.channel
                           and abs(g.start - 0.003 - e.start) <= 0.011
                           and abs(g.end - 0.003 - e.end) <= 0.011 for g in got.events)
    return matched, total


def test_audio_annotation_with_unaligned_frames_is_close(tmp_path: Path) -> None:
    matched, total = _unaligned_match(SAMPLE_EN, tmp_path)
    # 42 of 42 measured
    assert total == 42 and matched / total >= 0.95, (matched, total)


def test_audio_annotation_with_unaligned_frames_is_close_on_toy(m3_toy: dict[str, Path],
                                                                tmp_path: Path) -> None:
    matched, total = _unaligned_match(m3_toy["task"], tmp_path)
    assert matched / total >= 0.95, (matched, total)


@pytest.mark.parametrize("engine", [VadEngine.WEBRTC])
def test_webrtc_engine_finds_the_bursts(engine: VadEngine) -> None:
    sr = 24000
    rng = np.random.default_rng(1)
    x = np.zeros(sr * 3, dtype=np.float32)
    x[sr:2 * sr] = rng.uniform(-0.3, 0.3, sr)
    spans = detect_activity(x, sr, ActivityOptions(engine=engine, frame_ms=10))
    # WebRTC holds speech ~100 ms after it ends (its hangover)
    assert spans and abs(spans[0].start - 1.0) <= 0.05 and abs(spans[-1].end - 2.0) <= 0.15


def test_cli_annotate_from_audio_and_words(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = SAMPLE_EN  # its events were made from its alignments by the same annotator
    out = tmp_path / "words.jsonl"
    assert main(["annotate", str(root), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").splitlines() == \
        (root / "test.jsonl").read_text(encoding="utf-8").splitlines()
    for d in ("sample_qa_0001",):
        voice(root / "txt_align" / f"{d}.txt", tmp_path / "ds" / "audio" / f"{d}.wav", 16000)
    out2 = tmp_path / "audio.jsonl"
    assert main(["annotate", str(tmp_path / "ds"), "--from", "audio", "-o", str(out2)]) == 0
    assert "annotated from audio" in capsys.readouterr().out
    assert [r["id"] for r in map(json.loads, out2.read_text(encoding="utf-8").splitlines())] \
        == ["sample_qa_0001"]


def test_cli_annotate_bad_input_writes_nothing(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "txt_align"
    src.mkdir()
    (src / "a.txt").write_text("0\t0.0\t1.0\thello\n0\t2.0\tx\tbad\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["annotate", str(tmp_path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{src / 'a.txt'}:2:" in err and "Traceback" not in err
    assert not out.exists()
    assert main(["annotate", str(tmp_path / "missing"), "-o", str(out)]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    mono = tmp_path / "mono" / "m.wav"
    mono.parent.mkdir()
    sf.write(str(mono), np.zeros(1600, dtype=np.float32), 16000)
    assert main(["annotate", str(mono.parent), "-o", str(out)]) == 2
    assert "not stereo" in capsys.readouterr().err and not out.exists()
