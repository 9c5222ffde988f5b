"""``moshi-ws`` against a loopback server speaking the Moshi ``/api/chat`` protocol
(:mod:`fake_moshi`): runs through ``duplexeval run``, reply onsets on the input timeline,
per-sample failures with reasons, retry on resume, credentials never written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("sphn")
pytest.importorskip("websockets")

from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.systems import SessionSpec, SystemFailure, load_system
from fake_moshi import FRAME, RATE, FakeMoshiServer

WINDOW = "2"
"""Seconds of muted window per sample: short samples keep the loopback runs quick."""


def run(dataset: Path, out: Path, url: str, *extra: str) -> int:
    return main(["run", "--system", "moshi-ws", "--system-arg", f"url={url}",
                 "--dataset", str(dataset), "--protocol", "single", "--window", WINDOW,
                 "--out", str(out), *extra])


def plan_order(dataset: Path) -> list:
    """The samples in the order the runner opens their sessions (one connection each)."""
    ds, _ = load_dataset(dataset, audio=Need.REQUIRE)
    plan = build_plan(ds.dialogues, PlanOptions(protocol=EvalProtocol.SINGLE, window=float(WINDOW)))
    return [s for members in plan.groups().values() for s in members]


def onset(x: np.ndarray, rate: int) -> float | None:
    loud = np.flatnonzero(np.abs(x) > 0.05)
    return None if len(loud) == 0 else loud[0] / rate


def test_lockstep_run_places_each_reply_where_the_server_produced_it(
        sample_voiced: Path, tmp_path: Path) -> None:
    with FakeMoshiServer() as server:
        assert run(sample_voiced, tmp_path / "a", server.url) == 0
    samples = plan_order(sample_voiced)
    assert server.connections == len(samples)
    checked = 0
    for s, onsets in zip(samples, server.onsets, strict=True):
        x, rate = sf.read(str(tmp_path / "a" / "samples" / s.sample_id / f"{s.event_id}.wav"))
        heard = onset(x[:, 1], rate)
        if not onsets:
            assert heard is None
            continue
        # input frame i's answer lands on frame i: within one frame of where it was produced
        assert heard is not None and abs(heard - onsets[0] * FRAME / RATE) <= FRAME / RATE
        record = json.loads((tmp_path / "a" / "samples" / s.sample_id /
                             f"{s.event_id}.json").read_text())
        hello = [e for e in record["trace"]["text"] if e["text"] == "hello"]
        assert hello[0]["sample"] == onsets[0] * FRAME
        assert record["trace"]["moshi_ws"]["mode"] == "lockstep"
        checked += 1
    assert checked >= 3
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert config["system"]["capabilities"]["clock"] == "input"
    with FakeMoshiServer() as again:  # lockstep is deterministic: the same audio again
        assert run(sample_voiced, tmp_path / "b", again.url) == 0
    for s in samples[:4]:
        rel = Path("samples") / s.sample_id / f"{s.event_id}.wav"
        assert np.array_equal(sf.read(str(tmp_path / "a" / rel))[0],
                              sf.read(str(tmp_path / "b" / rel))[0])


def test_disconnects_stalls_and_garbage_fail_their_sample_and_resume_retries_them(
        sample_voiced: Path, tmp_path: Path) -> None:
    faults = {1: ("disconnect", 5), 2: ("stall", 5), 3: ("garbage", 5), 4: ("kind", 3)}
    out = tmp_path / "faulty"
    with FakeMoshiServer(faults=faults) as server:
        assert run(sample_voiced, out, server.url, "--system-arg", "stall_timeout=1") == 1
    samples = plan_order(sample_voiced)
    errors = {}
    for s in samples:
        record = json.loads((out / "samples" / s.sample_id / f"{s.event_id}.json").read_text())
        errors[s.event_id] = record.get("error")
    got = [errors[samples[i].event_id] for i in range(5)]
    assert got[0] is None
    assert "closed the connection" in got[1]
    assert "stall" in got[2] and "within 1 s" in got[2]
    assert "garbage" in got[3] and "Ogg-Opus" in got[3]
    assert "garbage" in got[4] and "unknown message kind 0x09" in got[4]
    assert all(e is None for e in list(errors.values())[5:])  # the run went on
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 4 and summary["samples"] == len(samples) - 4
    # resume (the same URL): only the failed samples run again
    with FakeMoshiServer(port=server.port) as healthy:
        assert run(sample_voiced, out, healthy.url, "--system-arg", "stall_timeout=1") == 0
        assert healthy.connections == 4
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == len(samples)



def test_lockstep_keeps_the_text_of_the_last_frame() -> None:
    """The server sends a frame's text after its audio, so the last frame's piece is still in
    flight when its audio is returned; ``trace`` sends a flush frame and reads up to its audio.
    Input frames 1-3 voiced (the Opus look-ahead of 156 samples carries the voice into frame
    4 as the server hears it); with ``reply_after`` 3 the reply ("hello" on its first frame,
    " there" on its second) starts on input frame 7, the last one stepped::

        input frame   0     1  2  3  4   5  6  7        flush (8)
        voiced (sent)       ========
        voiced (heard)      ==========
        server out    init  .  .  .  .   .  .  tone     tone
        text                                   "hello"  " there"  (not the session's)
    """
    x = np.zeros(FRAME * 8, np.float32)
    t = np.arange(FRAME * 3) / RATE
    x[FRAME:FRAME * 4] = 0.2 * np.sin(2 * np.pi * 200 * t)
    with FakeMoshiServer(reply_after=3) as server:
        session = load_system("moshi-ws", {"url": server.url}).open(
            SessionSpec(sample_rate=RATE, seed=0))
        y = np.concatenate([session.step(x[k * FRAME:(k + 1) * FRAME]).audio
                            for k in range(8)])
        trace = session.trace()
        assert trace["text"] == [{"sample": 7 * FRAME, "text": "hello"}]
        assert session.trace()["text"] == trace["text"]  # once: trace is idempotent
        with pytest.raises(RuntimeError, match="ended"):
            session.step(x[:FRAME])
        session.close()
    assert server.onsets == [[7]]
    assert trace["moshi_ws"]["frames_sent"] == 8 and trace["moshi_ws"]["flush_frames"] == 1
    assert server.frames == [9]
    assert len(y) == 8 * FRAME and np.abs(y[7 * FRAME:]).max() > 0.1


SENTINEL = "sk-duplexeval-SENTINEL-0123456789"


def test_the_api_key_comes_from_the_environment_and_is_never_written(
        sample_voiced: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MOSHI_TEST_API_KEY", SENTINEL)
    out = tmp_path / "keyed"
    # connection 2 answers with a server error that quotes the key back
    with FakeMoshiServer(require_key=SENTINEL, faults={2: ("echo", 3)}) as server:
        code = run(sample_voiced, out, server.url, "--system-arg",
                   "api_key_env=MOSHI_TEST_API_KEY")
    assert code == 1  # the echoed error
    assert server.headers_seen[0]["Authorization"] == f"Bearer {SENTINEL}"
    echoed = [json.loads(p.read_text()).get("error") for p in (out / "samples").rglob("*.json")]
    echoed = [e for e in echoed if e]
    assert len(echoed) == 1 and "server reported an error" in echoed[0] and "***" in echoed[0]
    monkeypatch.setenv("MOSHI_TEST_API_KEY", SENTINEL + "-wrong")
    with FakeMoshiServer(require_key=SENTINEL) as server:
        assert run(sample_voiced, tmp_path / "refused", server.url, "--system-arg",
                   "api_key_env=MOSHI_TEST_API_KEY") == 1
    refused = [json.loads(p.read_text()) for p in (tmp_path / "refused").rglob("*.json")
               if p.parent.parent.name == "samples"]
    assert refused and all("401" in r["error"] for r in refused)
    printed = capsys.readouterr()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path
    assert SENTINEL not in printed.out + printed.err
    monkeypatch.delenv("MOSHI_TEST_API_KEY")
    with FakeMoshiServer() as server:
        assert run(sample_voiced, tmp_path / "unset", server.url, "--system-arg",
                   "api_key_env=MOSHI_TEST_API_KEY") == 1
    record = next(p for p in (tmp_path / "unset" / "samples").rglob("*.json"))
    assert "MOSHI_TEST_API_KEY" in json.loads(record.read_text())["error"]


def test_server_errors_are_redacted() -> None:
    system = load_system("moshi-ws", {"url": "ws://127.0.0.1:1/api/chat",
                                      "connect_timeout": "2"})
    with pytest.raises(SystemFailure, match="cannot connect"):
        system.open(SessionSpec(sample_rate=RATE, seed=0))
    with pytest.raises(Exception, match="credentials"):
        load_system("moshi-ws", {"url": "ws://user:secret@127.0.0.1:1/api/chat"})
    with pytest.raises(Exception, match="mode must be"):
        load_system("moshi-ws", {"url": "ws://127.0.0.1:1/api/chat", "mode": "fast"})


@pytest.mark.realtime
def test_realtime_mode_paces_on_deadlines_and_plays_out_on_arrival() -> None:
    x = np.zeros(FRAME * 30, np.float32)
    t = np.arange(FRAME * 8) / RATE
    x[FRAME * 4:FRAME * 12] = 0.2 * np.sin(2 * np.pi * 200 * t)
    with FakeMoshiServer(reply_after=3) as server:
        system = load_system("moshi-ws", {"url": server.url, "mode": "realtime"})
        assert system.capabilities.clock.value == "wall"
        session = system.open(SessionSpec(sample_rate=RATE, seed=0))
        y = np.concatenate([session.step(x[k * FRAME:(k + 1) * FRAME]).audio
                            for k in range(30)])
        trace = session.trace()
        session.close()
    produced = server.onsets[0][0] * FRAME / RATE
    heard = onset(y, RATE)
    # sent one frame after it was "recorded", answered on arrival: a frame later than
    # lockstep, plus the loopback and compute time (generous: CI machines are loaded)
    assert heard is not None and produced + FRAME / RATE <= heard + 0.02
    assert heard <= produced + FRAME / RATE + 0.5
    assert trace["moshi_ws"]["mode"] == "realtime"
    assert trace["moshi_ws"]["send_drift_ms"]["mean"] < 100
    arrival = trace["audio_arrivals"][0]
    assert arrival["sample"] >= round(arrival["arrival_ms"] * RATE / 1000) - 1
    assert trace["audio_arrivals"][0]["samples"] == FRAME


def test_systems_lists_the_adapters_with_their_extra(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["systems"]) == 0
    out = capsys.readouterr().out
    rows = {row.split()[0]: row for row in out.splitlines() if row.strip()}
    assert "servers" in rows["moshi-ws"] and "clock input" in rows["moshi-ws"]
    assert "servers" in rows["openai-realtime"] and "clock wall" in rows["openai-realtime"]
    assert "clock file" in rows["command"] and " - " in rows["command"]
