"""DNSMOS (speechmos's ONNX models, numpy features), ``data quality`` and ``data split
--dnsmos``: clean clip-bank speech is rated above the same speech with noise, the report
names what it does not compute, and the selection is deterministic and speaker-disjoint."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import AudioInfo, Dialogue, Word, load_dataset, write_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.events import Event, EventKind
from duplexeval.speech import _dnsmos as dnsmos
from duplexeval.speech._clipbank import ClipBank
from duplexeval.synth._data_quality import NOT_COMPUTED, quality_table

RATE = 16_000


def _speech(seconds: float = 9.5) -> np.ndarray:
    """English clip-bank utterances end to end with 0.3 s pauses, ``seconds`` long."""
    bank = ClipBank.load()
    parts: list[np.ndarray] = []
    k = 0
    while sum(len(p) for p in parts) < seconds * RATE:
        parts += [bank.pick("en", k).resampled(RATE), np.zeros(int(0.3 * RATE), np.float32)]
        k += 1
    return np.concatenate(parts)[: int(seconds * RATE)]


def _noisy(x: np.ndarray, snr_db: float = 0.0, seed: int = 0) -> np.ndarray:
    noise = np.random.default_rng(seed).standard_normal(len(x)).astype(np.float32)
    gain = np.sqrt(np.mean(x**2) / np.mean(noise**2) / 10 ** (snr_db / 10))
    return np.clip(x + gain * noise, -1, 1).astype(np.float32)


@pytest.fixture(scope="module")
def model() -> dnsmos.Dnsmos:
    return dnsmos.Dnsmos()


def test_mel_features_match_librosa_golden_values() -> None:
    """Values computed once with librosa 0.10.2 (``melspectrogram(..., pad_mode="reflect")``
    and ``power_to_db(ref=np.max)``) on this signal; the numpy features agree to 3.4e-6."""
    t = np.arange(144000) / 16000
    noise = 0.05 * np.random.default_rng(1).standard_normal(len(t))
    x = (0.3 * np.sin(2 * np.pi * (200 + 300 * t) * t) + noise).astype(np.float32)
    feats = dnsmos.mel_db(x)
    assert feats.shape == (900, 120)
    assert feats.mean() == pytest.approx(0.0023155335802584887, abs=1e-5)
    assert feats[0, 5] == pytest.approx(0.9305688738822937, abs=1e-4)
    assert feats[450, 60] == pytest.approx(0.053011514246463776, abs=1e-4)
    assert feats[-1, 100] == pytest.approx(0.03659496456384659, abs=1e-4)


def test_dnsmos_rates_clean_speech_above_noisy_speech(model: dnsmos.Dnsmos) -> None:
    clean = _speech()
    good = model.score(clean, RATE)
    bad = model.score(_noisy(clean), RATE)
    assert good.windows == bad.windows == 1
    assert good.ovrl > bad.ovrl + 0.3 and good.bak > bad.bak + 0.5
    assert good.p808 > bad.p808
    assert all(1.0 <= v <= 5.0 for v in (good.sig, good.bak, good.ovrl, good.p808))
    assert model.score(clean, RATE) == good  # deterministic


def test_a_changed_model_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(dnsmos.MODEL_SHA256, "model_v8.onnx", "0" * 64)
    with pytest.raises(DuplexevalError, match="SHA-256"):
        dnsmos.Dnsmos()


def _dataset(root: Path, tmp: Path) -> None:
    """Three two-speaker dialogues of 9.5 s: ``good`` clean, ``bad`` noisy on both channels,
    ``mix`` noisy on one; ``good`` and ``mix`` share speaker B."""
    clean = _speech()
    silence = np.zeros_like(clean)
    audio = {"good": (clean, silence), "bad": (_noisy(clean, seed=1), _noisy(silence + 1e-3)),
             "mix": (clean, _noisy(silence + 1e-3, seed=2))}
    speakers = {"good": ["A", "B"], "bad": ["C", "D"], "mix": ["E", "B"]}
    dialogues = []
    for name, (ch0, ch1) in audio.items():
        path = tmp / f"{name}.wav"
        sf.write(path, np.stack([ch0, ch1], axis=1), RATE)
        dialogues.append(Dialogue(
            id=name, audio=AudioInfo(path, RATE, len(ch0), 2),
            words=(Word(0, 0.0, 1.0, "hello"),),
            events=(Event(EventKind.TURN, 0, 0.0, 1.0),),
            extra={"source": {"corpus": "test", "id": name, "speakers": speakers[name]}}))
    write_dataset(root, "all", dialogues)


def test_quality_and_dnsmos_split_commands(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ds"
    _dataset(root, tmp_path)
    assert main(["data", "quality", str(root), "--split", "all", "--no-asr", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    per = report["dnsmos"]["dialogues"]
    assert per["good"]["ovrl"] > per["mix"]["ovrl"] > per["bad"]["ovrl"]
    assert [len(per[i]["channels"]) for i in per] == [2, 2, 2]
    assert report["table2"]["DNSMOS"] == pytest.approx(
        np.mean([per[i]["ovrl"] for i in per]), abs=1e-4)
    assert report["table2"]["SQ-STOI"] is None
    assert set(NOT_COMPUTED) <= set(report["not_computed"])
    assert "ASR round trip" in report["not_computed"]
    assert report["dnsmos"]["model"]["models"] == dnsmos.MODEL_SHA256
    scores = json.loads((root / "dnsmos_scores.json").read_text())
    assert scores == {i: per[i]["ovrl"] for i in per}

    assert main(["data", "split", str(root), "--hours", str(9 / 3600), "--dnsmos"]) == 0
    first = json.loads((root / "split.json").read_text())
    assert first["test"] == ["good"] and first["dev"] == ["bad"]
    assert first["dropped"] == ["mix"]  # shares speaker B with the test set
    assert main(["data", "split", str(root), "--hours", str(9 / 3600), "--force",
                 "--scores", str(root / "dnsmos_scores.json")]) == 0
    again = json.loads((root / "split.json").read_text())
    assert (again["test"], again["dev"], again["dropped"]) == (
        first["test"], first["dev"], first["dropped"])


def test_quality_report_with_a_round_trip_and_without_dnsmos(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    _dataset(root, tmp_path)
    dataset, _ = load_dataset(root, "all")

    class Echo:  # hears exactly the aligned word, in each channel given regions
        def transcribe_many(self, items: list[tuple[np.ndarray, int, list]],
                            language: str) -> list[list[Word]]:
            return [[Word(0, 0.0, 1.0, "hello")] if regions else [] for _, _, regions in items]

    report = quality_table(dataset, dnsmos=False, transcriber=Echo())
    assert report["asr"]["metric"] == "wer" and report["asr"]["value"] == 0.0
    assert report["table2"]["DNSMOS"] is None and "DNSMOS" in report["not_computed"]


def test_quality_text_report_names_what_is_not_computed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ds"
    _dataset(root, tmp_path)
    assert main(["data", "quality", str(root), "--split", "all", "--no-asr",
                 "--no-dnsmos"]) == 0
    text = capsys.readouterr().out
    assert "3 dialogue(s)" in text and "SQ-STOI" in text and "not computed:" in text
    assert "DNSMOS (skipped (--no-dnsmos))" in text
    assert json.loads((root / "data_quality.json").read_text())["table2"]["DNSMOS"] is None
    assert not (root / "dnsmos_scores.json").exists()
