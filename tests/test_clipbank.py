"""The packaged clip bank of the scripted system, and its loader."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.speech._clipbank import KINDS, Clip, ClipBank, ClipBankInvalid, fill_span

CLIPS = Path(__file__).resolve().parents[1] / "src" / "duplexeval" / "speech" / "clips"
RATE = 16_000
FRAME = 160  # 10 ms at 16 kHz


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads((CLIPS / "clips.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def bank() -> ClipBank:
    return ClipBank.load()


def frame_db(audio: np.ndarray) -> np.ndarray:
    """RMS level (dB) of consecutive 10 ms frames, the last one zero-padded."""
    count = -(-len(audio) // FRAME)
    padded = np.zeros(count * FRAME)
    padded[: len(audio)] = audio
    rms = np.sqrt(np.mean(padded.reshape(count, FRAME) ** 2, axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-10))


def is_trimmed(audio: np.ndarray) -> bool:
    """Speech (a frame within 41 dB of the loudest) lies in both the first and last 30 ms.

    The bank was trimmed at 40 dB below the loudest 10 ms frame with a 20 ms margin, so its
    first and last three frames each hold a speech frame; leading or trailing silence fails.
    """
    levels = frame_db(audio)
    floor = levels.max() - 41.0
    return bool(levels[:3].max() >= floor and levels[-3:].max() >= floor)


def test_manifest_and_files_agree(manifest: dict) -> None:
    assert manifest["version"] == 1
    assert manifest["sample_rate"] == RATE
    assert set(manifest["generator"]) == {"en", "ja"}
    ids = [c["id"] for c in manifest["clips"]]
    assert len(ids) == len(set(ids))
    listed = {c["file"] for c in manifest["clips"]}
    assert {p.name for p in CLIPS.glob("*.flac")} == listed
    for entry in manifest["clips"]:
        path = CLIPS / entry["file"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], path.name
        info = sf.info(str(path))
        assert (info.samplerate, info.channels, info.subtype) == (RATE, 1, "PCM_16"), path.name
        assert info.frames == entry["num_samples"], path.name
        assert entry["kind"] in KINDS and entry["text"].strip()
        assert entry["id"].startswith(entry["language"] + "_")


def test_languages_counts_and_size(bank: ClipBank) -> None:
    assert bank.languages() == ["en", "ja"]
    for language in ("en", "ja"):
        assert len(bank.clips(language)) >= 16
        assert len(bank.clips(language, "backchannel")) >= 3
        assert len(bank.clips(language, "utterance")) >= 10
    assert sum(p.stat().st_size for p in CLIPS.iterdir()) < 1_000_000


def test_clips_are_trimmed_and_normalised(bank: ClipBank) -> None:
    for language in bank.languages():
        for clip in bank.clips(language):
            assert clip.audio.dtype == np.float32 and clip.sample_rate == RATE
            assert 0.15 <= clip.duration <= 3.0, clip.id
            assert is_trimmed(clip.audio), clip.id
            peak_db = 20 * np.log10(np.abs(clip.audio).max())
            assert -3.5 <= peak_db <= -2.5, clip.id


def test_trim_check_rejects_silence_at_either_end(bank: ClipBank) -> None:
    audio = bank.get("en_000").audio
    hiss = np.full(int(0.2 * RATE), 1e-4, dtype=np.float32)
    assert not is_trimmed(np.concatenate([hiss, audio]))
    assert not is_trimmed(np.concatenate([audio, hiss]))


def test_tampered_file_is_rejected_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "clips"
    shutil.copytree(CLIPS, folder)
    assert len(ClipBank.load(folder)) == len(ClipBank.load())
    victim = folder / "ja_003.flac"
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(ClipBankInvalid, match=r"ja_003\.flac"):
        ClipBank.load(folder)


def test_missing_file_is_rejected_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "clips"
    shutil.copytree(CLIPS, folder)
    (folder / "en_001.flac").unlink()
    with pytest.raises(ClipBankInvalid, match=r"en_001\.flac"):
        ClipBank.load(folder)


def test_default_bank_is_cached() -> None:
    assert ClipBank.load() is ClipBank.load()


def test_unknown_language_lists_available(bank: ClipBank) -> None:
    with pytest.raises(ValueError, match="available: en, ja"):
        bank.clips("fr")
    with pytest.raises(ValueError, match="available"):
        bank.pick("de", 0)
    with pytest.raises(KeyError):
        bank.get("xx_000")


def test_pick_is_deterministic_and_wraps(bank: ClipBank) -> None:
    for language in ("en", "ja"):
        for kind in KINDS:
            clips = bank.clips(language, kind)
            assert [c.id for c in clips] == sorted(c.id for c in clips)
            assert all(c.kind == kind and c.language == language for c in clips)
            n = len(clips)
            assert [bank.pick(language, i, kind) for i in range(n)] == clips
            assert bank.pick(language, n + 2, kind) is clips[2]
            assert bank.pick(language, -1, kind) is clips[-1]
    assert bank.pick("en", 5) is bank.pick("en", 5, "utterance")


def test_resampled_length_and_cache(bank: ClipBank) -> None:
    clip = bank.get("en_002")
    up = clip.resampled(24_000)
    assert abs(len(up) - round(len(clip.audio) * 24_000 / RATE)) <= 1
    assert up.dtype == np.float32
    assert clip.resampled(24_000) is up
    assert clip.resampled(RATE) is clip.audio
    with pytest.raises(ValueError):
        clip.resampled(0)


def test_audio_is_read_only(bank: ClipBank) -> None:
    clip = bank.get("ja_000")
    with pytest.raises(ValueError):
        clip.audio[0] = 0.0


@pytest.mark.parametrize("seconds", [0.05, 0.7, 2.5, 7.3])
def test_fill_span_exact_length(bank: ClipBank, seconds: float) -> None:
    clip = bank.get("en_007")
    n = int(seconds * RATE)
    out = fill_span(clip.audio, n)
    assert out.shape == (n,) and out.dtype == np.float32
    assert out[0] == 0.0 and out[-1] == 0.0  # faded: no click at either end
    source = np.resize(clip.audio, n)  # the clip repeated back to back, cut to n
    assert np.all(np.abs(out) <= np.abs(source) + 1e-7)  # fades only ever attenuate
    assert np.abs(out).max() <= 1.0
    fade = 80  # 5 ms
    middle = slice(fade, min(n, len(clip.audio)) - fade)
    np.testing.assert_array_equal(out[middle], clip.audio[middle])


def test_fill_span_repeats_without_gap() -> None:
    clip = np.full(1000, 0.5, dtype=np.float32)
    out = fill_span(clip, 2500)
    assert len(out) == 2500
    # the repeats abut: only the 5 ms fades around each joint dip, to one zero sample per side
    silent = np.flatnonzero(out == 0.0)
    assert silent.tolist() == [0, 999, 1000, 1999, 2000, 2499]
    assert out[1500] == pytest.approx(0.5)


def test_fill_span_edge_cases() -> None:
    assert len(fill_span(np.ones(10, dtype=np.float32), 0)) == 0
    assert len(fill_span(np.ones(10, dtype=np.float32), 3)) == 3
    with pytest.raises(ValueError):
        fill_span(np.ones(10, dtype=np.float32), -1)
    with pytest.raises(ValueError):
        fill_span(np.zeros(0, dtype=np.float32), 10)


def test_clip_is_a_frozen_value() -> None:
    clip = Clip("t_000", "en", "hi", "utterance", np.zeros(160, dtype=np.float32), RATE)
    assert clip.duration == pytest.approx(0.01)
    with pytest.raises(AttributeError):
        clip.text = "bye"  # type: ignore[misc]
