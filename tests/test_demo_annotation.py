"""The demo's annotation check compares events annotated from the voiced audio with the events
from the word alignments, so it fails when the audio does not carry the annotated timing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.app._demo import annotation_check, bundled_dataset
from duplexeval.data import Dataset, Need, load_dataset
from duplexeval.data._voice_bursts import voice_bursts


def _voiced(tmp_path: Path) -> Dataset:
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, tmp_path / "data", 16000)
    dataset, _ = load_dataset(tmp_path / "data", audio=Need.REQUIRE)
    return dataset


def test_audio_voiced_at_the_word_times_recovers_the_events(tmp_path: Path) -> None:
    dataset = _voiced(tmp_path)
    check = annotation_check(dataset)
    total = sum(n for _, n in check.recovered.values())
    assert total == sum(len(d.events) for d in dataset.dialogues) == 49
    found, shifts = check.recovered["TURN_SHIFT"]
    assert shifts > 0 and found >= 0.9 * shifts
    assert sum(f for f, _ in check.recovered.values()) >= 0.8 * total
    assert check.line().startswith("TURN ")


def test_audio_that_does_not_match_the_alignments_fails_the_check(tmp_path: Path) -> None:
    dataset = _voiced(tmp_path)
    before = annotation_check(dataset)
    # delay the system channel by 0.5 s in every dialogue: the words say otherwise
    for d in dataset.dialogues:
        assert d.audio is not None
        x, rate = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
        shift = rate // 2
        x[:, 1] = np.concatenate([np.zeros(shift, np.float32), x[:-shift, 1]])
        sf.write(str(d.audio.path), x, rate, subtype="PCM_16")
    after = annotation_check(dataset)
    found_before, shifts = before.recovered["TURN_SHIFT"]
    found_after, _ = after.recovered["TURN_SHIFT"]
    assert found_after <= shifts // 4 < found_before
    assert sum(after.spurious.values()) > sum(before.spurious.values())


@pytest.mark.slow
@pytest.mark.parametrize("suite", ["m3-chat-ja", "m3-qa-ja"])
def test_the_voiced_japanese_suites_carry_their_bc_and_barge_ins(suite: str) -> None:
    """A Japanese M3 suite's quick subset as the synthesizer makes it, annotated from its audio
    (Silero), recovers at least 90 % of its BC and of its BARGE_IN events within 100 ms
    (m3-chat-ja before the synthesizer joined short first words and the specs dropped the lone
    うん: 2 of 9 BCs and 0 of 4 barge-ins), and has at least 9 of each (issue 32: 11-12 in
    m3-chat-ja's, 9 BC and 12 barge-ins in m3-qa-ja's; before, 9 and 4, and m3-qa-ja had no
    barge-in).  Synthesized, not decoded from the shipped pack: the pack's Opus coding is lossy
    (``perf/quick_pack_fidelity.py``), and m3-qa-ja's pack loses a 0.29 s へえ whose Silero
    probability peaks at 0.52 as synthesized and at 0.40 decoded (8 of 9 BCs)."""
    from duplexeval.suites import build_suite

    dataset, _ = load_dataset(build_suite(suite, progress=False, limit="quick", synthesize=True),
                              audio=Need.REQUIRE)
    check = annotation_check(dataset)
    for kind in ("BC", "BARGE_IN"):
        found, total = check.recovered[kind]
        assert total >= 9 and found >= 0.9 * total, (kind, found, total)
