"""The channel-stage conditions measured on synthetic signals: babble at its SNR with several
talkers at once, reverberation at its RT60 (Schroeder backward integration of the response the
channel was convolved with), speed perturbation's duration ratio anchored at each onset, and
the order they compose in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from duplexeval.conditions import apply_conditions, parse_condition
from duplexeval.conditions._apply import APPLY_ORDER, channel_stage, mic_stage, ordered
from duplexeval.conditions._babble import babble_tracks
from duplexeval.errors import DuplexevalError

RATE = 16000


def _tone(n: int = 3 * RATE) -> np.ndarray:
    return (0.3 * np.sin(2 * np.pi * 440 * np.arange(n) / RATE)).astype(np.float32)


def _snr(clean: np.ndarray, noisy: np.ndarray) -> float:
    noise = noisy.astype(np.float64) - clean
    return float(10 * np.log10(np.mean(clean.astype(np.float64) ** 2) / np.mean(noise ** 2)))


@pytest.mark.parametrize("snr", [20.0, 5.0, 0.0])
def test_babble_is_added_at_the_asked_snr(snr: float) -> None:
    x = _tone()
    y = apply_conditions(x, [parse_condition(f"babble:snr={snr:g}")], seed=3, rate=RATE)
    assert abs(_snr(x, y) - snr) < 0.5


def test_babble_is_several_talkers_at_once() -> None:
    """Per 20 ms frame, a talker is active when its frame RMS is within 35 dB of its loudest
    frame: with 6 talkers over 10 s, at least two speak at once in 90 % of the frames and on
    average more than three."""
    tracks = babble_tracks(10 * RATE, RATE, 6, np.random.default_rng(0))
    frames = tracks.reshape(6, -1, 320)
    rms = np.sqrt((frames ** 2).mean(axis=-1))
    active = rms > rms.max(axis=1, keepdims=True) * 10 ** (-35 / 20)
    concurrent = active.sum(axis=0)
    assert (concurrent >= 2).mean() > 0.9
    assert concurrent.mean() > 3
    assert not np.allclose(tracks[0], tracks[1])  # different talkers, not one copied


def test_babble_is_seeded() -> None:
    c = [parse_condition("babble:snr=10,talkers=3")]
    x = _tone()
    assert np.array_equal(apply_conditions(x, c, 5, rate=RATE),
                          apply_conditions(x, c, 5, rate=RATE))
    assert not np.array_equal(apply_conditions(x, c, 5, rate=RATE),
                              apply_conditions(x, c, 6, rate=RATE))


@pytest.mark.parametrize("rt60", [0.15, 0.3, 0.6, 1.2])
def test_reverb_applies_a_response_of_the_asked_rt60(rt60: float) -> None:
    """An impulse through the condition gives back the response it was convolved with; its
    RT60 by Schroeder backward integration (pyroomacoustics' measure_rt60, T30) is within
    20 % of the requested value."""
    pra = pytest.importorskip("pyroomacoustics")
    impulse = np.zeros(2 * RATE, dtype=np.float32)
    impulse[100] = 1.0
    y = apply_conditions(impulse, [parse_condition(f"reverb:rt60={rt60:g}")], 0, rate=RATE)
    response = y[100:].astype(np.float64)
    assert int(np.argmax(np.abs(response))) == 0  # the direct path where the impulse was
    measured = pra.experimental.measure_rt60(response, fs=RATE, decay_db=30)
    assert abs(measured / rt60 - 1) < 0.2, measured
    assert np.mean(y.astype(np.float64) ** 2) == pytest.approx(
        np.mean(impulse.astype(np.float64) ** 2), rel=1e-4)  # the level is kept


@pytest.mark.parametrize("factor", [0.8, 1.25, 1.5])
def test_speed_scales_each_segment_from_its_onset(factor: float) -> None:
    """Two tone bursts of 1 s at 0.5 s and 2.5 s (the segments); after ``speed:factor=f``
    each starts where it did and lasts 1/f s (within 2 ms); the pause between them is
    untouched::

        before  ..|====1 s====|.......|====1 s====|....
        after   ..|==1/f==|...........|==1/f==|........
    """
    x = np.zeros(4 * RATE, dtype=np.float32)
    segments = [(RATE // 2, 3 * RATE // 2), (5 * RATE // 2, 7 * RATE // 2)]
    for a, b in segments:
        x[a:b] = 0.3 * np.sin(2 * np.pi * 300 * np.arange(b - a) / RATE)
    y = apply_conditions(x, [parse_condition(f"speed:factor={factor:g}")], 0, rate=RATE,
                         segments=segments)
    assert len(y) == len(x)
    for a, b in segments:
        nearby = np.abs(y[a - 800:a + 2 * RATE]) > 0.01
        loud = np.flatnonzero(nearby)
        start, length = a - 800 + loud[0], loud[-1] - loud[0] + 1
        assert abs(start - a) <= 32
        assert abs(length / RATE - 1 / factor) < 0.002 + 1 / RATE * 64
        assert abs((b - a) / length - factor) < 0.01


def test_speed_changes_the_pitch_with_the_tempo() -> None:
    """A resampler plays the 300 Hz tone at 1.25x as 375 Hz (the spectrum's peak)."""
    x = (0.3 * np.sin(2 * np.pi * 300 * np.arange(2 * RATE) / RATE)).astype(np.float32)
    y = apply_conditions(x, [parse_condition("speed:factor=1.25")], 0, rate=RATE)
    part = y[:RATE]
    peak = np.fft.rfftfreq(len(part), 1 / RATE)[np.argmax(np.abs(np.fft.rfft(part)))]
    assert peak == pytest.approx(375, abs=2)


def test_the_order_is_talker_room_microphone_converter_transport() -> None:
    given = [parse_condition(t) for t in ("network:loss=0.1", "clip:level=0.5", "gain:db=-3",
                                          "echo:gain=-20", "babble:snr=10", "noise:snr=20",
                                          "reverb:rt60=0.3", "speed:factor=1.1")]
    assert [c.kind for c in ordered(given)] == list(APPLY_ORDER) == [
        "speed", "reverb", "noise", "babble", "echo", "gain", "clip", "network"]
    # with an echo, gain and clip act on each heard frame, after the echo
    assert [c.kind for c in channel_stage(given)] == ["speed", "reverb", "noise", "babble"]
    assert [c.kind for c in mic_stage(given)] == ["gain", "clip"]
    without = [c for c in given if c.kind != "echo"]
    assert [c.kind for c in channel_stage(without)] == [
        "speed", "reverb", "noise", "babble", "gain", "clip"]
    assert mic_stage(without) == ()


def test_gain_before_noise_on_the_command_line_still_scales_the_noise() -> None:
    """noise then gain: the SNR is the asked one whatever the command line's order, and the
    level is the gain's (gain last among them)."""
    x = _tone()
    a = apply_conditions(x, [parse_condition("gain:db=-6"), parse_condition("noise:snr=10")], 1)
    b = apply_conditions(x, [parse_condition("noise:snr=10"), parse_condition("gain:db=-6")], 1)
    assert np.array_equal(a, b)
    assert abs(_snr(x * 10 ** (-6 / 20), a) - 10) < 0.5


@pytest.mark.parametrize(("text", "why"), [
    ("babble:snr=10,talkers=2.5", "talkers must be a whole number, got 2.5"),
    ("babble:snr=10,talkers=1", "talkers must be a finite number in [2, 16], got 1"),
    ("reverb:rt60=3", "rt60 must be a finite number in [0.15, 1.2], got 3"),
    ("reverb:rt60=inf", "rt60 must be a finite number"),
    ("speed:factor=0", "factor must be a finite number in [0.5, 2], got 0"),
    ("echo:delay=0.1", "missing gain"),
    ("echo:gain=6", "gain must be a finite number in [-60, 0], got 6"),
    ("echo:gain=-20,delay=-1", "delay must be a finite number in [0, 2], got -1"),
    ("network:loss=0.7", "loss must be a finite number in [0, 0.5], got 0.7"),
    ("network:burst=0.5", "burst must be a finite number in [1, 50], got 0.5"),
    ("network:jitter=nan", "jitter must be a finite number"),
])
def test_bad_values_of_the_new_kinds_are_one_line(text: str, why: str) -> None:
    with pytest.raises(DuplexevalError, match=why.replace("[", r"\[")) as info:
        parse_condition(text)
    assert "\n" not in str(info.value)


def test_defaults_are_filled_in_and_recorded() -> None:
    assert parse_condition("echo:gain=-20").to_json() == {"kind": "echo", "gain": -20.0,
                                                          "delay": 0.1}
    assert parse_condition("network:loss=0.05").to_json() == {
        "kind": "network", "loss": 0.05, "burst": 1.0, "jitter": 0.0}
    assert parse_condition("babble:snr=5").spec() == "babble:snr=5,talkers=6"


def test_speed_segments_are_the_channels_ipus_merged(tmp_path: Path) -> None:
    """Channel 0 has a TURN over [1.0, 2.0] s and a BC over [1.5, 2.5] s (overlapping: one
    segment) and a TURN over [4.0, 4.5] s; channel 1's TURN and channel 0's TURN_SHIFT are not
    its speech (inclusive ends: the end's sample is in)::

        ch0  |TURN 1.0-2.0|
                  |BC 1.5-2.5|        |TURN 4.0-4.5|
        ->   [16000, 40001)           [64000, 72001)
    """
    from conftest import make_dataset
    from duplexeval.data import Need, load_dataset
    from duplexeval.runs._units import speech_segments

    root = make_dataset(tmp_path / "ds", {
        "0": [("TURN", 1.0, 2.0), ("BC", 1.5, 2.5), ("TURN", 4.0, 4.5)],
        "1": [("TURN_SHIFT", 2.5, 3.0), ("TURN", 3.0, 3.8)]}, audio_seconds=6.0)
    dataset, _ = load_dataset(root, audio=Need.REQUIRE)
    dialogue = dataset.dialogues[0]
    assert speech_segments(dialogue, 0, RATE) == [(16000, 40001), (64000, 72001)]
    assert speech_segments(dialogue, 1, RATE) == [(48000, 60801)]


def test_a_run_under_speed_and_reverb_records_them_in_their_order(
        sample_voiced: Path, tmp_path: Path) -> None:
    """Given as reverb then speed, config.json records speed first (the order they
    compose in), and the user channel of a sample differs from the clean run's."""
    import json

    import soundfile as sf

    from duplexeval.cli import main

    pytest.importorskip("pyroomacoustics")
    base = ["run", "--system", "scripted", "--dataset", str(sample_voiced), "--protocol",
            "single"]
    clean, changed = tmp_path / "clean", tmp_path / "changed"
    assert main([*base, "--out", str(clean)]) == 0
    assert main([*base, "--out", str(changed), "--condition", "reverb:rt60=0.4",
                 "--condition", "speed:factor=1.2"]) == 0
    config = json.loads((changed / "config.json").read_text())["config"]
    assert config["conditions"] == [{"kind": "speed", "factor": 1.2},
                                    {"kind": "reverb", "rt60": 0.4}]
    row = json.loads((changed / "metadata.jsonl").read_text().splitlines()[0])
    a, _ = sf.read(str(clean / row["output_audio_path"]))
    b, _ = sf.read(str(changed / row["output_audio_path"]))
    assert np.max(np.abs(a[:, 0] - b[:, 0])) > 0.01
