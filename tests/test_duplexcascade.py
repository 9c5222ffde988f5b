"""``duplexcascade`` against a loopback server speaking the DuplexCascade wire format
(:mod:`fake_duplexcascade`, TLS with a self-signed certificate): a full ``duplexeval run``,
reply onsets where the server produced them, barge-in stops, failures per sample and retry
on resume."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from conftest import ModuleTemp

pytest.importorskip("websockets")

from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.systems import SessionSpec, SystemFailure, load_system
from fake_duplexcascade import FRAME, RATE, FakeDuplexCascade
from tiny_duplex import tiny_dataset
from tls_cert import self_signed
from tone_dataset import has_driver_trace, trace_file

pytestmark = pytest.mark.realtime

FAST = ("--system-arg", "startup_delay=0.1", "--system-arg", "verify=0")


@pytest.fixture(scope="module")
def tls(module_tmp: ModuleTemp) -> tuple[Path, Path]:
    made = self_signed(module_tmp.mktemp("tls"))
    if made is None:
        pytest.skip("openssl is not installed (needed for the self-signed certificate)")
    return made


def run(dataset: Path, out: Path, url: str, *extra: str) -> int:
    return main(["run", "--system", "duplexcascade", "--system-arg", f"url={url}", *FAST,
                 "--dataset", str(dataset), "--protocol", "single", "--window", "1",
                 "--out", str(out), *extra])


def plan_order(dataset: Path) -> list:
    ds, _ = load_dataset(dataset, audio=Need.REQUIRE)
    plan = build_plan(ds.dialogues, PlanOptions(protocol=EvalProtocol.SINGLE, window=1.0))
    return [s for members in plan.groups().values() for s in members]


def onset(x: np.ndarray) -> int | None:
    loud = np.flatnonzero(np.abs(x) > 0.05)
    return None if len(loud) == 0 else int(loud[0])


def test_a_run_hears_each_reply_when_the_server_sent_it(tmp_path: Path,
                                                        tls: tuple[Path, Path]) -> None:
    dataset = tiny_dataset(tmp_path / "ds")
    with FakeDuplexCascade(tls=tls) as server:
        assert run(dataset, tmp_path / "run", server.url) == 0
    samples = plan_order(dataset)
    assert server.connections == len(samples) == 4 and all(server.done)
    for s, produced in zip(samples, server.onsets, strict=True):
        folder = tmp_path / "run" / "samples" / s.sample_id
        x, rate = sf.read(str(folder / f"{s.event_id}.wav"), dtype="float32")
        assert len(produced) == 1
        trace = trace_file(tmp_path / "run", s)
        assert has_driver_trace(trace), trace.keys()
        found = onset(x[:, 1])  # the run's wav is at the dataset's rate (16 kHz)
        assert found is not None
        heard = found * RATE / rate
        assert abs(heard - trace["audio_arrivals"][0]["sample"]) <= 3
        # the reply went out when the server had `produced` input samples; it is heard on
        # arrival: never before, and within one frame plus that frame's send drift
        late = heard - produced[0]
        drift = trace["realtime"]["send_drift_ms"]["max"] / 1000 * RATE
        assert -3 <= late <= FRAME + drift, (late, drift)
        # four 0.25 s chunks sent at once play back to back, without gaps, to the sample's end
        # (|sin| > 0.05 / 0.3 on 89 % of a tone's samples)
        rest = x[found:found + rate, 1]
        assert np.count_nonzero(np.abs(rest) > 0.05) > 0.85 * len(rest)
        assert trace["duplexcascade"]["events"] == {"transcript": 1}
        assert trace["duplexcascade"]["ignored_text"] == 1
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["system"]["capabilities"]["clock"] == "wall"
    assert config["system"]["capabilities"]["sample_rate"] == RATE
    assert config["system"]["args"]["verify"] == "0"


@pytest.mark.slow
def test_failures_are_recorded_per_sample_and_retried_on_resume(
        tmp_path: Path, tls: tuple[Path, Path]) -> None:
    dataset = tiny_dataset(tmp_path / "ds")
    faults = {0: ("disconnect", 3), 1: ("stall", 3), 2: ("garbage", 3)}
    out = tmp_path / "faulty"
    with FakeDuplexCascade(tls=tls, faults=faults, stall_seconds=3.0) as server:
        assert run(dataset, out, server.url, "--system-arg", "stall_timeout=1") == 1
    samples = plan_order(dataset)
    errors = [json.loads((out / "samples" / s.sample_id / f"{s.event_id}.json").read_text())
              .get("error") for s in samples]
    assert "closed the connection" in errors[0]
    assert "stall" in errors[1] and "keepalive" in errors[1]
    assert "garbage" in errors[2] and "7-byte" in errors[2]
    assert errors[3] is None  # the run went on
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 3 and summary["samples"] == 1
    with FakeDuplexCascade(tls=tls, port=server.port) as healthy:
        assert run(dataset, out, healthy.url, "--system-arg", "stall_timeout=1") == 0
    assert healthy.connections == 3  # only the failed samples ran again
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == 4


def test_audio_control_stop_drops_what_was_queued() -> None:
    """User speech 0.2-0.8 s; the reply (2 s, sent at once) starts about 1.12 s; the user
    barges in at 1.6-2.0 s and the server says stop: nothing queued after the stop is heard
    until the server's next reply (to the barge-in, about 2.32 s)."""
    x = np.zeros(4 * RATE, np.float32)
    for a, b in ((0.2, 0.8), (1.6, 2.0)):
        t = np.arange(round((b - a) * RATE)) / RATE
        x[round(a * RATE):round(a * RATE) + len(t)] = 0.2 * np.sin(2 * np.pi * 200 * t)
    with FakeDuplexCascade(reply_chunks=8) as server:
        system = load_system("duplexcascade", {"url": server.url, "startup_delay": "0"})
        session = system.open(SessionSpec(sample_rate=RATE, seed=0))
        y = np.concatenate([session.step(x[k:k + FRAME]).audio for k in range(0, len(x), FRAME)])
        trace = session.trace()
        session.close()
    stop = trace["playout_flushes"][0]
    assert server.stops[0] and stop["reason"] == "audio_control stop"
    assert stop["dropped"] > 0.5 * RATE  # most of the 2 s reply was still queued
    loud = np.flatnonzero(np.abs(y) > 0.05)
    # the chunks of the next reply (placed where they arrive: the queue was emptied)
    following = min(a["sample"] for a in trace["audio_arrivals"]
                    if a["arrival_ms"] * RATE / 1000 > stop["sample"])
    assert following > stop["sample"] + RATE // 4
    silent = loud[(loud >= stop["sample"]) & (loud < following)]
    assert len(silent) == 0 and np.any((loud < stop["sample"]) & (loud > stop["sample"] - 100))
    # the stop came within one frame (plus drift) of the barge-in frame reaching the server
    drift = trace["realtime"]["send_drift_ms"]["max"] / 1000 * RATE
    assert 0 <= stop["sample"] - server.stops[0][0] <= FRAME + drift


def test_arguments_are_checked() -> None:
    with pytest.raises(Exception, match="verify must be"):
        load_system("duplexcascade", {"url": "wss://127.0.0.1:1", "verify": "maybe"})
    with pytest.raises(Exception, match="credentials"):
        load_system("duplexcascade", {"url": "wss://u:p@127.0.0.1:1"})
    system = load_system("duplexcascade", {"url": "ws://127.0.0.1:1", "connect_timeout": "1"})
    with pytest.raises(SystemFailure, match="cannot connect"):
        system.open(SessionSpec(sample_rate=RATE, seed=0))
