"""Median F0 (YIN), and ``data voices``: each spec speaker gets the bundled voice closest in
median F0 and guessed gender to a reference speaker drawn deterministically."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import AudioInfo, Dialogue, Word, write_dataset
from duplexeval.events import Event, EventKind
from duplexeval.speech._pitch import gender_of, median_f0
from duplexeval.synth._voice_choice import Profile, assign_voices, closest_voice

RATE = 16_000


def _voice(f0: float, seconds: float = 2.0, seed: int = 0) -> np.ndarray:
    """A harmonic tone with a little vibrato and noise: a crude voiced sound at ``f0`` Hz."""
    t = np.arange(int(seconds * RATE)) / RATE
    phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.02 * np.sin(2 * np.pi * 5 * t))) / RATE
    x = sum(np.sin(k * phase) / k for k in range(1, 8))
    noise = 0.02 * np.random.default_rng(seed).standard_normal(len(t))
    return (0.2 * x / np.abs(x).max() + noise).astype(np.float32)


@pytest.mark.parametrize("f0", [85.0, 120.0, 210.0, 330.0, 480.0])
def test_median_f0_of_harmonic_voices(f0: float) -> None:
    assert median_f0(_voice(f0), RATE) == pytest.approx(f0, rel=0.01)


def test_silence_has_no_f0_and_the_gender_boundary() -> None:
    assert median_f0(np.zeros(RATE, np.float32), RATE) is None
    assert gender_of(120.0) == "male" and gender_of(165.0) == "female"


VOICES = [Profile("deep", 95.0, "male"), Profile("mid", 230.0, "female"),
          Profile("high", 330.0, "female")]


def test_closest_voice_prefers_the_same_gender_then_log_f0() -> None:
    assert closest_voice(150.0, VOICES).name == "deep"  # male: nearer "mid" in Hz, not gender
    assert closest_voice(260.0, VOICES).name == "mid"
    assert closest_voice(260.0, VOICES, avoid="mid").name == "high"
    assert closest_voice(120.0, VOICES[1:]).name == "mid"  # no male voice: all voices


def test_assignment_is_deterministic_and_distinct_within_a_spec() -> None:
    speakers = [Profile("c:A", 110.0, "male"), Profile("c:B", 250.0, "female"),
                Profile("c:C", 240.0, "female")]
    specs = [{"id": f"topiocqa_dev_{i:04d}", "language": "ja",
              "speakers": [{"id": "user", "channel": 1}, {"id": "system", "channel": 0}],
              "turns": [{"speaker": "user", "text": "はい"}]} for i in range(1, 9)]
    out, records = assign_voices(specs, speakers, VOICES)
    again, _ = assign_voices(list(reversed(specs)), speakers, VOICES)
    assert [s["speakers"] for s in out] == [s["speakers"] for s in reversed(again)]
    assert "voice" not in specs[0]["speakers"][0]  # the input is not modified
    for spec in out:
        refs = [r["reference"]["name"] for r in records if r["spec"] == spec["id"]]
        assert len(set(refs)) == 2  # two reference speakers per spec
        by_ref = {r["reference"]["name"]: r["voice"]["name"] for r in records
                  if r["spec"] == spec["id"]}
        if "c:A" in by_ref:
            assert by_ref["c:A"] == "deep"
    assert {r["voice"]["name"] for r in records} >= {"deep", "mid"}


def _reference(root: Path, tmp: Path) -> None:
    """Two dialogues, speakers M (120 Hz) and F (250 Hz) on channels 0 and 1, words aligned
    over the tone (and silence around it)."""
    dialogues = []
    for n in range(2):
        tone_m, tone_f = _voice(120.0, seed=n), _voice(250.0, seed=10 + n)
        pad = np.zeros(RATE // 2, np.float32)
        ch0 = np.concatenate([tone_m, pad, np.zeros_like(tone_f)])
        ch1 = np.concatenate([np.zeros_like(tone_m), pad, tone_f])
        path = tmp / f"r{n}.wav"
        sf.write(path, np.stack([ch0, ch1], axis=1), RATE)
        dialogues.append(Dialogue(
            id=f"r{n}", audio=AudioInfo(path, RATE, len(ch0), 2),
            words=(Word(0, 0.0, 2.0, "aa"), Word(1, 2.5, 4.5, "ee")),
            events=(Event(EventKind.TURN, 0, 0.0, 2.0), Event(EventKind.TURN, 1, 2.5, 4.5)),
            extra={"source": {"corpus": "ref", "id": f"r{n}", "speakers": ["M", "F"]}}))
    write_dataset(root, "test", dialogues)


def test_voices_command_with_the_japanese_engine(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyopenjtalk")
    ref, specs, out = tmp_path / "ref", tmp_path / "specs", tmp_path / "out"
    _reference(ref, tmp_path)
    specs.mkdir()
    for i in range(1, 4):
        (specs / f"d{i}.json").write_text(json.dumps({
            "id": f"d{i}", "language": "ja", "domain": "task",
            "speakers": [{"id": "user", "channel": 1}, {"id": "system", "channel": 0}],
            "turns": [{"speaker": "user", "text": "こんにちは。"},
                      {"speaker": "system", "text": "こんにちは。"}]}, ensure_ascii=False))
    assert main(["data", "voices", str(specs), "--reference", str(ref), "-o", str(out)]) == 0
    report = json.loads((out / "voices.json").read_text())
    assert report["engine"] == "openjtalk"
    f0 = {s["name"]: s["f0_hz"] for s in report["speakers"]}
    assert f0["ref:M"] == pytest.approx(120, rel=0.03) and f0["ref:F"] == pytest.approx(
        250, rel=0.03)
    voices = {v["name"]: v["f0_hz"] for v in report["voices"]}
    assert voices["mei-low"] < voices["mei"] < voices["mei-high"]
    for spec_file in sorted(out.glob("d*.json")):
        spec = json.loads(spec_file.read_text())
        chosen = [s["voice"] for s in spec["speakers"]]
        assert len(set(chosen)) == 2 and set(chosen) <= set(voices)
    # the female reference speaker (250 Hz) gets the lowest Mei, nearest in log F0
    assert {r["voice"]["name"] for r in report["assignments"]
            if r["reference"]["name"] == "ref:F"} <= {"mei-low", "mei"}
    assert "voices of openjtalk used" in capsys.readouterr().out
