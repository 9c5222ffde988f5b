"""Packet loss and jitter in the real-time driver: the Gilbert chain's realised loss rate and
mean burst length on a long synthetic stream, lost frames never sent, late frames sent after
their delay without reordering (a fake clock), and a loopback run whose sample wav is silent
where frames were lost."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.conditions import parse_condition
from duplexeval.conditions._network import NetworkSpec, burst_lengths, gilbert_losses
from duplexeval.systems.realtime._driver import RealtimeDriver
from test_realtime_driver import FakeTime, ignore


@pytest.mark.parametrize(("loss", "burst"), [(0.1, 4.0), (0.02, 1.0), (0.3, 10.0)])
def test_the_realised_loss_rate_and_burst_length_are_the_asked_ones(loss: float,
                                                                     burst: float) -> None:
    """400 000 frames: the lost fraction within 10 % of ``loss`` (relative) and the mean run
    of consecutive lost frames within 5 % of ``burst``."""
    lost = gilbert_losses(NetworkSpec(loss, burst, 0.0, seed=7), 400_000)
    assert abs(lost.mean() / loss - 1) < 0.1
    assert abs(burst_lengths(lost).mean() / burst - 1) < 0.05


def test_bursts_are_runs_of_lost_frames() -> None:
    """``..XXX.X..XX`` has bursts 3, 1, 2."""
    lost = np.array([c == "X" for c in "..XXX.X..XX"])
    assert burst_lengths(lost).tolist() == [3, 1, 2]


def test_the_same_seed_loses_the_same_frames() -> None:
    spec = NetworkSpec(0.1, 3.0, 20.0, seed=1)
    assert np.array_equal(gilbert_losses(spec, 5000), gilbert_losses(spec, 5000))
    other = NetworkSpec(0.1, 3.0, 20.0, seed=2)
    assert not np.array_equal(gilbert_losses(spec, 5000), gilbert_losses(other, 5000))


def _driven(spec: NetworkSpec, frames: int) -> tuple[RealtimeDriver, FakeTime]:
    t = FakeTime()
    driver = RealtimeDriver(1000, 20, t.clock)
    driver.network = spec.link()
    for _ in range(frames):
        driver.step(t.send, t.recv, ignore)
    return driver, t


def test_lost_frames_are_never_sent_and_are_traced() -> None:
    """20 ms frames at 1 kHz, loss 0.2 in bursts of 3: every frame is stepped, the lost
    ones are not sent; the trace lists them with the realised rate and mean burst."""
    driver, t = _driven(NetworkSpec(0.2, 3.0, 0.0, seed=3), 2000)
    net = driver.trace()["realtime"]["network"]
    assert driver.frames_sent == 2000
    assert len(t.sends) == 2000 - len(net["lost_frames"]) == len(driver.drift_ms)
    lost = np.zeros(2000, dtype=bool)
    lost[net["lost_frames"]] = True
    assert net["loss_rate"] == pytest.approx(lost.mean())
    assert net["mean_burst"] == pytest.approx(burst_lengths(lost).mean())
    assert 0.15 < net["loss_rate"] < 0.25
    assert (net["loss"], net["burst"], net["jitter_ms"], net["seed"]) == (0.2, 3.0, 0.0, 3)
    sent = [k for k in range(2000) if not lost[k]]
    for k, at in zip(sent, t.sends, strict=True):  # each sent at its own deadline
        assert at == pytest.approx(driver.deadline(k), abs=1e-9)


def test_jitter_delays_each_send_uniformly_without_reordering() -> None:
    """Jitter 30 ms on 20 ms frames: frame ``k`` goes out at ``max(deadline_k + delay_k,
    previous send)``; the delays average 15 ms (uniform on [0, 30]) and the sends are in
    order."""
    driver, t = _driven(NetworkSpec(0.0, 1.0, 30.0, seed=4), 3000)
    delays = np.asarray(driver.send_delays)
    assert len(delays) == len(t.sends) == 3000
    assert delays.min() >= 0 and delays.max() <= 0.030
    assert delays.mean() == pytest.approx(0.015, abs=0.001)
    sends = np.asarray(t.sends)
    assert np.all(np.diff(sends) >= 0)
    floor = -np.inf
    for k, at in enumerate(sends):
        expected = max(driver.deadline(k) + delays[k], floor)
        assert at == pytest.approx(expected, abs=1e-9)
        floor = at
    net = driver.trace()["realtime"]["network"]
    assert net["send_delay_ms"]["mean"] == pytest.approx(delays.mean() * 1000, abs=1e-3)
    assert net["lost_frames"] == [] and net["mean_burst"] is None


def test_a_driver_without_a_link_traces_no_network() -> None:
    t = FakeTime()
    driver = RealtimeDriver(1000, 20, t.clock)
    driver.step(t.send, t.recv, ignore)
    assert "network" not in driver.trace()["realtime"]


def test_the_condition_gives_the_link_its_parameters() -> None:
    spec = NetworkSpec.of(parse_condition("network:loss=0.05,burst=2,jitter=10"), 9)
    assert (spec.loss, spec.burst, spec.jitter_ms, spec.seed) == (0.05, 2.0, 10.0, 9)
    q, r = spec.transitions()
    assert r == 0.5 and q / (q + r) == pytest.approx(0.05)


@pytest.mark.realtime
def test_a_wall_clock_run_hears_silence_where_frames_were_lost(tmp_path: Path) -> None:
    """``moshi-ws`` in real time against the loopback server under
    ``network:loss=0.3,burst=3``: the trace file lists the lost frames, the sample wav's user
    channel is silent over each of them and is the dataset's elsewhere, and config.json
    records the condition."""
    pytest.importorskip("sphn")
    pytest.importorskip("websockets")
    from conftest import make_dataset
    from duplexeval.cli import main
    from duplexeval.runs import open_run
    from fake_moshi import FakeMoshiServer

    words = [(0, 0.2, 1.0, "hello"), (1, 1.3, 2.0, "hi")]
    root = make_dataset(tmp_path / "ds", {"0": [("TURN", 0.2, 1.0)],
                                          "1": [("TURN_SHIFT", 1.0, 1.3), ("TURN", 1.3, 2.0)]},
                        words, audio_seconds=3.0)
    x, rate = sf.read(str(root / "audio" / "d1.wav"), always_2d=True)
    x[:, 0] = 0.2 * np.sin(2 * np.pi * 200 * np.arange(len(x)) / rate)
    sf.write(str(root / "audio" / "d1.wav"), x, rate)
    base = ["run", "--system", "moshi-ws", "--system-arg", "mode=realtime", "--dataset",
            str(root), "--protocol", "single", "--window", "1"]
    out, clean_out = tmp_path / "run", tmp_path / "clean"
    with FakeMoshiServer(reply_after=2) as server:
        url = ["--system-arg", f"url={server.url}"]
        assert main([*base, *url, "--out", str(clean_out)]) == 0
        assert main([*base, *url, "--out", str(out), "--condition",
                     "network:loss=0.3,burst=3"]) == 0
    config = json.loads((out / "config.json").read_text())["config"]
    assert config["conditions"] == [{"kind": "network", "loss": 0.3, "burst": 3.0,
                                     "jitter": 0.0}]
    run = open_run(out)
    row = next(r for r in run.read_metadata() if r.event_type == "TURN_SHIFT")
    net = run.read_trace(row.sample_id, row.event_id)["realtime"]["network"]
    heard, wav_rate = sf.read(str(out / row.output_audio_path), dtype="float32")
    clean, _ = sf.read(str(clean_out / row.output_audio_path), dtype="float32")
    frame = round(1920 * wav_rate / 24000)  # moshi-ws: 80 ms frames
    lost = set(net["lost_frames"])
    assert lost and len(lost) < len(heard) // frame
    checked = 0
    for k in range(len(heard) // frame):  # away from the resampler's edges
        part = slice(k * frame + 8, (k + 1) * frame - 8)
        if k in lost:
            assert np.max(np.abs(heard[part, 0])) < 0.02
            checked += np.max(np.abs(clean[part, 0])) > 0.1  # a frame the user was heard in
        elif k - 1 not in lost and k + 1 not in lost:
            assert np.max(np.abs(heard[part, 0] - clean[part, 0])) < 0.02
    assert checked
