"""``vllm-omni-duplex`` against a loopback server speaking vLLM-Omni's full-duplex Realtime contract
(:mod:`fake_vllm_omni`): ``duplexeval run`` with reply onsets where the server produced them,
continuous playback acknowledgements (and the server refusing late ones), session resume after a
dropped transport, per-sample failures retried on resume, keys never written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("websockets")

from duplexeval.cli import main
from duplexeval.systems import SessionSpec, SystemFailure, load_system
from fake_vllm_omni import FakeVllmOmniServer
from tone_dataset import (
    has_driver_trace,
    loud_onset,
    sample_record,
    single_samples,
    tone_dataset,
    tone_turns,
    trace_file,
)

pytestmark = pytest.mark.realtime

RATE, FRAME = 24000, 480
WINDOW = "2.2"
"""Seconds after each 0.3 s user turn: the fake model answers at its unit 1 (2.03 s)."""


def samples(dataset: Path) -> list:
    return single_samples(dataset, float(WINDOW))


def sample_errors(out: Path, dataset: Path) -> list[str | None]:
    """Each sample's recorded error, in plan order."""
    return [sample_record(out, s).get("error") for s in samples(dataset)]


def run(dataset: Path, out: Path, url: str, *extra: str) -> int:
    return main(["run", "--system", "vllm-omni-duplex", "--system-arg", f"url={url}",
                 "--system-arg", "model=openbmb/MiniCPM-o-4_5", "--dataset", str(dataset),
                 "--protocol", "single", "--window", WINDOW, "--out", str(out), *extra])


def test_a_run_hears_each_reply_where_the_server_produced_it(tmp_path: Path) -> None:
    dataset = tone_dataset(tmp_path / "data", tone_turns(2), 8.0)
    with FakeVllmOmniServer() as server:
        assert run(dataset, tmp_path / "run", server.url) == 0
    plan = samples(dataset)
    assert len(plan) == 2 and server.count == 2 and server.closed == [0, 1]
    for number, s in enumerate(plan):
        x, rate = sf.read(str(tmp_path / "run" / "samples" / s.sample_id / f"{s.event_id}.wav"))
        assert len(x) == round((s.input_end - s.input_start) * rate)  # trimmed to the input
        trace = sample_record(tmp_path / "run", s)["trace"]
        assert has_driver_trace(trace_file(tmp_path / "run", s))
        [(sent_at, input_ms)] = server.onsets[number]
        assert input_ms == 2030  # the unit closing at 2.03 s of input
        produced = sent_at - trace["realtime"]["t0_monotonic"]
        heard = loud_onset(x[:, 1], rate)
        # heard within one frame of when the server sent it (the step that picks it up comes
        # at most a frame later), plus the step lateness the loaded machine added (traced)
        late = trace["realtime"]["send_drift_ms"]["max"] / 1000
        assert heard is not None and 0 <= heard - produced <= FRAME / RATE + late
        # when the frame holding 2.03 s of input reached it (its deadline 2.04 s)
        assert 2.03 <= produced <= 2.04 + 0.05 + late
        info = trace["vllm_omni"]
        assert info["decisions"] == {"listen": 1, "speak": 1}
        assert info["acks"]["refused"] == 0 and info["acks"]["accepted"] >= 3
        assert trace["text"][0]["text"] == "hello"
    # acks went out continuously, each response's played time growing up to what was heard
    played = [a["played_ms"] for a in server.acks if a["session"] == 0]
    # the first on the step the reply arrived: within a frame of its start, plus that step's
    # lateness on a loaded machine
    late = sample_record(tmp_path / "run", plan[0])["trace"]["realtime"]["send_drift_ms"]["max"]
    assert played[0] <= 1000 * FRAME / RATE + late + 2
    assert played == sorted(played) and played[-1] >= 100
    assert all(a["item_id"] == f"item_{a['response_id']}" for a in server.acks)
    update = server.updates[0]["session"]
    assert update["model"] == "openbmb/MiniCPM-o-4_5" and update["turn_detection"] is None
    assert update["sample_rate_hz"] == 16000 and update["input_audio_format"] == "pcm16"
    assert update["audio"]["output"] == {"sample_rate_hz": 24000}
    # the MiniCPM-o 4.5 preset of vllm-omni's client
    assert update["extra_body"] == {"auto_response": True, "native_duplex": True,
                                    "force_listen_count": 0}
    assert update["playback_commit_policy"] == "ack_only"
    assert "duplex=1" in server.paths[0] and "autostart=0" in server.paths[0]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["system"]["capabilities"]["clock"] == "wall"
    assert config["system"]["args"]["ack_interval_ms"] == "100"
    assert config["system"]["args"]["model"] == "openbmb/MiniCPM-o-4_5"


def user_turns(seconds: float, *starts: float) -> np.ndarray:
    """0.3 s user turns (a 200 Hz tone) at ``starts`` in ``seconds`` of session audio."""
    x = np.zeros(round(seconds * RATE), np.float32)
    for a in starts:
        t = np.arange(round(0.3 * RATE)) / RATE
        x[round(a * RATE):round(a * RATE) + len(t)] = 0.2 * np.sin(2 * np.pi * 200 * t)
    return x


def test_the_server_refuses_a_first_ack_sent_after_a_later_commit() -> None:
    """The loopback server's rule, driven unpaced by a bare client: the server's model units
    follow the appended audio, not the clock."""
    from websockets.sync.client import connect

    from duplexeval.systems.realtime._pcm import encode_pcm16

    def append(ws, seconds: float, voiced: bool) -> None:
        n = round(seconds * 16000)
        x = 0.2 * np.sin(2 * np.pi * 200 * np.arange(n) / 16000) if voiced else np.zeros(n)
        ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": encode_pcm16(x),
                            "sample_rate_hz": 16000}))

    def ack(ws, rid: str) -> None:
        ws.send(json.dumps({"type": "playback.ack", "response_id": rid,
                            "item_id": f"item_{rid}", "played_ms": 40, "committed_ms": 40}))

    with FakeVllmOmniServer() as server, connect(server.url + "?duplex=1") as ws:
        ws.send(json.dumps({"type": "session.update", "session": {"model": "m"}}))
        assert json.loads(ws.recv(timeout=5))["type"] == "session.created"
        append(ws, 1.03, True)   # unit 0: heard
        append(ws, 1.0, False)   # unit 1: silent, commit 1, resp_0_0
        ack(ws, "resp_0_0")      # in time: reserves its history slot
        append(ws, 1.0, True)    # unit 2 (resp_0_0 speaking: 1.5 s) and unit 3: heard
        append(ws, 1.0, True)
        append(ws, 1.0, False)   # unit 4: commit 2, resp_0_1
        ack(ws, "resp_0_0")      # late, but its slot is reserved: accepted
        ack(ws, "resp_0_1")
        append(ws, 1.0, False)
        append(ws, 1.0, True)
        append(ws, 1.0, False)   # commit 3, resp_0_2 ... and resp_0_1's first ack came in time
        ws.send(json.dumps({"type": "session.update", "session": {"model": "m"}}))
        ack(ws, "resp_0_1")
        ws.send(json.dumps({"type": "playback.ack", "response_id": "resp_0_2",
                            "item_id": "item_x", "played_ms": 1}))
        ws.send(json.dumps({"type": "session.close"}))
        while json.loads(ws.recv(timeout=5))["type"] != "session.closed":
            pass
    assert [a["response_id"] for a in server.acks] == ["resp_0_0", "resp_0_0", "resp_0_1",
                                                       "resp_0_1"]
    assert [r["code"] for r in server.refused] == ["playback_item_mismatch"]
    with FakeVllmOmniServer() as server, connect(server.url + "?duplex=1") as ws:
        ws.send(json.dumps({"type": "session.update", "session": {"model": "m"}}))
        ws.recv(timeout=5)
        for seconds, voiced in ((1.03, True), (1.0, False), (1.0, True), (1.0, True),
                                (1.0, False)):
            append(ws, seconds, voiced)
        ack(ws, "resp_0_0")      # its first ack, after the second commit: refused
        ws.send(json.dumps({"type": "session.close"}))
        events = []
        while (event := json.loads(ws.recv(timeout=5)))["type"] != "session.closed":
            events.append(event)
    assert [r["code"] for r in server.refused] == ["playback_ack_too_late"]
    assert any(e["type"] == "error" and e["error"]["code"] == "playback_ack_too_late"
               for e in events)


def test_continuous_acks_are_never_refused_and_a_refusal_is_recorded_not_fatal() -> None:
    with FakeVllmOmniServer() as server:
        system = load_system("vllm-omni-duplex", {"url": server.url, "model": "m"})
        session = system.open(SessionSpec(sample_rate=RATE, seed=0))
        x = user_turns(6.6, 0.2, 3.2)  # replies committed at 2.03 s and 5.03 s
        y = np.concatenate([session.step(x[k:k + FRAME]).audio
                            for k in range(0, len(x), FRAME)])
        assert not server.refused and session.trace()["vllm_omni"]["acks"]["refused"] == 0
        first = [a["played_ms"] for a in server.acks if a["response_id"] == "resp_0_0"]
        assert first[-1] == 1500  # fully played, acknowledged once more when done
        on = np.flatnonzero(np.abs(y) > 0.05) / RATE
        late = session.trace()["realtime"]["send_drift_ms"]["max"] / 1000
        assert 2.03 <= on[0] <= 2.04 + 0.05 + late and np.any(on > 5.03)
        session._dispatch({"type": "error", "error": {"code": "playback_ack_too_late"}}, 0.0)
        assert session.trace()["vllm_omni"]["acks"]["refused"] == 1
        with pytest.raises(SystemFailure, match="bad_audio"):
            session._dispatch({"type": "error", "error": {"code": "bad_audio"}}, 0.0)
        session.close()


def test_a_dropped_transport_is_resumed_and_the_replay_is_heard() -> None:
    # the transport drops as the reply is decided (unit 1, 2.03 s): the resume replays it
    with FakeVllmOmniServer(faults={0: ("drop", 1)}) as server:
        system = load_system("vllm-omni-duplex", {"url": server.url, "model": "m"})
        session = system.open(SessionSpec(sample_rate=RATE, seed=0))
        x = user_turns(3.0, 0.2)
        y = np.concatenate([session.step(x[k:k + FRAME]).audio
                            for k in range(0, len(x), FRAME)])
        trace = session.trace()
        session.close()
    assert server.resumed == [0] and trace["vllm_omni"]["resumes"] == 1
    assert "resume=1" in server.paths[1] and "resume=1" not in server.paths[0]
    resumed = next(e for e in trace["server_events"] if e["type"] == "session.resumed")
    assert resumed["incarnation"] == 1
    [(sent_at, _)] = server.onsets[0]
    produced = sent_at - trace["realtime"]["t0_monotonic"]
    heard = loud_onset(y, RATE)
    # heard when the replay arrived: after it was produced, by the reconnect's time
    first = trace["audio_arrivals"][0]
    assert heard is not None and 0 <= heard - first["sample"] / RATE <= 0.001  # tone ramp
    assert produced <= heard <= produced + 0.5
    assert trace["vllm_omni"]["decisions"] == {"listen": 1, "speak": 1}  # nothing twice


def test_the_personaplex_preset_sends_float32_at_24_khz() -> None:
    with FakeVllmOmniServer() as server:
        system = load_system("vllm-omni-duplex", {"url": server.url, "model": "nvidia/personaplex",
                                                  "preset": "personaplex", "heartbeat_s": "1",
                                                  "instructions": "You are a teacher."})
        session = system.open(SessionSpec(sample_rate=RATE, seed=0))
        x = user_turns(2.5, 0.2)
        y = np.concatenate([session.step(x[k:k + FRAME]).audio
                            for k in range(0, len(x), FRAME)])
        trace = session.trace()
        session.close()
    update = server.updates[0]["session"]
    assert update["input_audio_format"] == "pcm_f32le" and update["sample_rate_hz"] == 24000
    assert update["voice"] == "NATF2.pt" and update["instructions"] == "You are a teacher."
    assert "native_duplex" not in update["extra_body"]
    assert server.heartbeats == [0, 0] and trace["vllm_omni"]["heartbeats"] == 2  # 1 s, 2 s
    # 24 kHz went up as it was (no resampling): the unit closed at 2.03 s of input, and every
    # append matched the session's format (the server answers others with bad_audio)
    [(sent_at, input_ms)] = server.onsets[0]
    assert input_ms == 2030 and trace["vllm_omni"]["input_sent_ms"] == 2500
    heard = loud_onset(y, RATE)
    late = trace["realtime"]["send_drift_ms"]["max"] / 1000
    assert heard is not None and 0 <= heard - (sent_at - trace["realtime"]["t0_monotonic"]) <= \
        FRAME / RATE + late
    with pytest.raises(Exception, match="preset must be one of"):
        load_system("vllm-omni-duplex", {"preset": "qwen"})


@pytest.mark.slow
def test_failures_are_recorded_per_sample_and_resume_retries_them(tmp_path: Path) -> None:
    dataset = tone_dataset(tmp_path / "data", tone_turns(4), 16.0)
    faults = {1: ("disconnect", 0), 2: ("stall", 0), 3: ("garbage", 0)}
    out = tmp_path / "faulty"
    with FakeVllmOmniServer(faults=faults) as server:
        assert run(dataset, out, server.url, "--system-arg", "stall_timeout=2") == 1
    errors = sample_errors(out, dataset)
    assert errors[0] is None
    assert "closed the connection" in errors[1] and "invalid_resume_token" in errors[1]
    assert "stall" in errors[2] and "2 s" in errors[2]  # units come 1 s apart
    assert "garbage" in errors[3] and "not JSON" in errors[3]
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 3
    # one resume try for the forgotten session (its refusal is final); the stalled session
    # was closed by the client, freeing the server's slot
    assert sum("resume=1" in p for p in server.paths) == 1
    assert server.closed == [0, 2]
    with FakeVllmOmniServer(port=server.port) as healthy:
        assert run(dataset, out, healthy.url, "--system-arg", "stall_timeout=2") == 0
        assert healthy.count == 3  # only the failed samples ran again
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == 4


SENTINEL = "sk-vllm-SENTINEL-0123456789"


def test_the_key_comes_from_the_environment_and_is_never_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("VLLM_TEST_KEY", SENTINEL)
    dataset = tone_dataset(tmp_path / "data", tone_turns(2), 8.0)
    with FakeVllmOmniServer(require_key=SENTINEL, faults={1: ("echo", 0)}) as server:
        assert run(dataset, tmp_path / "keyed", server.url,
                   "--system-arg", "api_key_env=VLLM_TEST_KEY") == 1
    assert server.headers_seen[0]["Authorization"] == f"Bearer {SENTINEL}"
    errors = sample_errors(tmp_path / "keyed", dataset)
    assert errors[0] is None and "***" in errors[1] and "runtime_open_failed" in errors[1]
    monkeypatch.delenv("VLLM_TEST_KEY")
    assert run(dataset, tmp_path / "unset", server.url,
               "--system-arg", "api_key_env=VLLM_TEST_KEY") == 1
    assert "VLLM_TEST_KEY" in sample_errors(tmp_path / "unset", dataset)[0]
    printed = capsys.readouterr()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path
    assert SENTINEL not in printed.out + printed.err


def test_bad_settings_are_refused() -> None:
    with pytest.raises(Exception, match="credentials"):
        load_system("vllm-omni-duplex", {"url": "ws://u:p@127.0.0.1:1/v1/realtime"})
    system = load_system("vllm-omni-duplex", {"url": "ws://127.0.0.1:1/v1/realtime"})
    with pytest.raises(ValueError, match="model=NAME"):
        system.open(SessionSpec(sample_rate=RATE, seed=0))
    system = load_system("vllm-omni-duplex", {"url": "ws://127.0.0.1:1/v1/realtime",
                                              "model": "m", "connect_timeout": "2"})
    with pytest.raises(SystemFailure, match="cannot connect"):
        system.open(SessionSpec(sample_rate=RATE, seed=0))
    with FakeVllmOmniServer(mute=True) as server:
        system = load_system("vllm-omni-duplex", {"url": server.url, "model": "m",
                                                  "handshake_timeout": "0.5"})
        with pytest.raises(SystemFailure, match=r"no session\.created .* within 0\.5 s"):
            system.open(SessionSpec(sample_rate=RATE, seed=0))
