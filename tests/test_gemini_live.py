"""``gemini-live`` against a loopback server speaking the Live API's ``BidiGenerateContent``
messages (:mod:`fake_gemini`): ``duplexeval run`` with reply onsets where the server produced
them, barge-in through ``interrupted``, session resumption after ``goAway``, per-sample failures
retried on resume, the setup recorded, keys never written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("websockets")

from duplexeval.cli import main
from duplexeval.systems import SessionSpec, SystemFailure, load_system
from fake_gemini import FakeGeminiServer
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
KEY = "AIza-gemini-SENTINEL-0123456789"
WINDOW = "2.2"


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


def samples(dataset: Path) -> list:
    return single_samples(dataset, float(WINDOW))


def sample_errors(out: Path, dataset: Path) -> list[str | None]:
    """Each sample's recorded error, in plan order."""
    return [sample_record(out, s).get("error") for s in samples(dataset)]


def run(dataset: Path, out: Path, url: str, *extra: str) -> int:
    return main(["run", "--system", "gemini-live", "--system-arg", f"url={url}",
                 "--system-arg", "voice=Puck", "--dataset", str(dataset),
                 "--protocol", "single", "--window", WINDOW, "--out", str(out), *extra])


def user_turns(seconds: float, *spans: tuple[float, float]) -> np.ndarray:
    x = np.zeros(round(seconds * RATE), np.float32)
    for a, b in spans:
        t = np.arange(round((b - a) * RATE)) / RATE
        x[round(a * RATE):round(a * RATE) + len(t)] = 0.2 * np.sin(2 * np.pi * 200 * t)
    return x


def converse(server: FakeGeminiServer, x: np.ndarray, **args: str) -> tuple[np.ndarray, dict]:
    system = load_system("gemini-live", {"url": server.url, **args})
    session = system.open(SessionSpec(sample_rate=RATE, seed=0))
    y = np.concatenate([session.step(x[k:k + FRAME]).audio for k in range(0, len(x), FRAME)])
    trace = session.trace()
    session.close()
    return y, trace


def test_a_run_hears_each_reply_where_the_server_produced_it(tmp_path: Path) -> None:
    dataset = tone_dataset(tmp_path / "data", tone_turns(2), 8.0)
    with FakeGeminiServer(KEY) as server:
        assert run(dataset, tmp_path / "run", server.url) == 0
    plan = samples(dataset)
    assert server.count == 2
    for number, s in enumerate(plan):
        x, rate = sf.read(str(tmp_path / "run" / "samples" / s.sample_id / f"{s.event_id}.wav"))
        assert len(x) == round((s.input_end - s.input_start) * rate)  # trimmed to the input
        trace = sample_record(tmp_path / "run", s)["trace"]
        assert has_driver_trace(trace_file(tmp_path / "run", s))
        [(sent_at, input_ms)] = server.replies[number]
        # 0.3 s of speech, then the default 500 ms of silence: the server's end of speech
        assert input_ms == 800
        produced = sent_at - trace["realtime"]["t0_monotonic"]
        heard = loud_onset(x[:, 1], rate)
        # heard within one frame of when the server sent it (the step that picks it up comes
        # at most a frame later), plus the step lateness the loaded machine added (traced)
        late = trace["realtime"]["send_drift_ms"]["max"] / 1000
        assert heard is not None and 0 <= heard - produced <= FRAME / RATE + late
        # when the frame holding 0.8 s of input reached it (its deadline 0.82 s)
        assert 0.8 <= produced <= 0.82 + 0.05 + late
        assert trace["text"][0]["text"] == "hello"
        assert trace["gemini_live"]["interruptions"] == 0
    setup = server.setups[0]
    assert setup["model"] == "models/gemini-2.5-flash-native-audio-preview-12-2025"
    assert setup["generationConfig"] == {"responseModalities": ["AUDIO"], "speechConfig": {
        "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Puck"}}}}
    assert setup["realtimeInputConfig"] == {
        "automaticActivityDetection": {"disabled": False},
        "activityHandling": "START_OF_ACTIVITY_INTERRUPTS"}
    assert server.headers_seen[0]["x-goog-api-key"] == KEY and "key=" not in server.paths[0]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["system"]["capabilities"]["clock"] == "wall"
    args = config["system"]["args"]
    assert args["voice"] == "Puck" and args["activity_handling"] == "START_OF_ACTIVITY_INTERRUPTS"
    assert args["model"] == setup["model"]


def test_interrupted_flushes_what_was_not_yet_played() -> None:
    # speech 0.3-0.9 s; reply from 1.2 s (300 ms of silence), 2 s long, generated at twice
    # real time; the user barges in at 2.2 s
    x = user_turns(4.5, (0.3, 0.9), (2.2, 2.8))
    with FakeGeminiServer(KEY) as server:
        y, trace = converse(server, x, silence_duration_ms="300")
    assert server.setups[0]["realtimeInputConfig"]["automaticActivityDetection"] == {
        "disabled": False, "silenceDurationMs": 300}
    assert server.interrupts[0] == [2200]
    on = np.flatnonzero(np.abs(y) > 0.05) / RATE
    first = on[on < 3.0]
    late = trace["realtime"]["send_drift_ms"]["max"] / 1000  # the loaded machine's step lateness
    assert 1.2 <= first[0] <= 1.22 + 0.05 + late
    # what was queued beyond the moment "interrupted" arrived is never heard
    event = next(e for e in trace["server_events"] if e["type"] == "interrupted")
    assert event["dropped"] > 0
    assert abs(first[-1] - event["sample"] / RATE) <= 0.001
    assert 2.2 <= event["sample"] / RATE <= 2.22 + 0.05 + late
    assert trace["gemini_live"]["interruptions"] == 1
    # the barge-in is answered in turn: 2.8 s + 300 ms
    assert 3.1 <= on[on > 3.0][0] <= 3.12 + 0.05 + late


def test_no_interruption_plays_the_reply_through() -> None:
    x = user_turns(4.5, (0.3, 0.9), (2.2, 2.8))
    with FakeGeminiServer(KEY) as server:
        y, trace = converse(server, x, silence_duration_ms="300",
                            activity_handling="NO_INTERRUPTION")
    assert server.interrupts[0] == [] and trace["gemini_live"]["interruptions"] == 0
    on = np.flatnonzero(np.abs(y) > 0.05) / RATE
    assert on[-1] >= 1.2 + 2.0 - 0.1  # the whole 2 s reply was heard


def test_go_away_then_resumption_carries_the_session_on() -> None:
    x = user_turns(2.6, (0.3, 0.6))
    with FakeGeminiServer(KEY, faults={0: ("goaway", 400)}) as server:
        y, trace = converse(server, x)
    assert server.resumed == [0] and trace["gemini_live"]["resumes"] == 1
    assert [e["type"] for e in trace["server_events"]][:2] == ["goAway", "resumed"]
    [(sent_at, input_ms)] = server.replies[0]
    heard = loud_onset(y, RATE)
    assert input_ms == 1100 and heard is not None
    late = trace["realtime"]["send_drift_ms"]["max"] / 1000
    assert 0 <= heard - (sent_at - trace["realtime"]["t0_monotonic"]) <= FRAME / RATE + late


@pytest.mark.slow
def test_failures_are_recorded_per_sample_and_resume_retries_them(tmp_path: Path) -> None:
    dataset = tone_dataset(tmp_path / "data", tone_turns(4), 16.0)
    faults = {1: ("disconnect", 400), 2: ("stall", 900), 3: ("garbage", 400)}
    out = tmp_path / "faulty"
    with FakeGeminiServer(KEY, faults=faults) as server:
        assert run(dataset, out, server.url, "--system-arg", "stall_timeout=1.2") == 1
    errors = sample_errors(out, dataset)
    assert errors[0] is None
    assert "closed the connection" in errors[1] and "invalid session resumption handle" \
        in errors[1]
    assert "stall" in errors[2] and "1.2 s" in errors[2]
    assert "garbage" in errors[3] and "not JSON" in errors[3]
    assert json.loads((out / "run_summary.json").read_text())["failed"] == 3
    with FakeGeminiServer(KEY, port=server.port) as healthy:
        assert run(dataset, out, healthy.url, "--system-arg", "stall_timeout=1.2") == 0
        assert healthy.count == 3
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == 4


def test_the_key_comes_from_the_environment_and_is_never_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    dataset = tone_dataset(tmp_path / "data", tone_turns(2), 8.0)
    with FakeGeminiServer(KEY, faults={1: ("echo", 200)}) as server:
        assert run(dataset, tmp_path / "keyed", server.url) == 1
        errors = sample_errors(tmp_path / "keyed", dataset)
        assert errors[0] is None and "***" in errors[1] and "has expired" in errors[1]
        monkeypatch.delenv("GEMINI_API_KEY")
        monkeypatch.setenv("GOOGLE_API_KEY", KEY)  # the second place a key is looked for
        assert run(dataset, tmp_path / "google", server.url) == 0
        monkeypatch.setenv("GOOGLE_API_KEY", "AIza-wrong-key-000")
        assert run(dataset, tmp_path / "wrong", server.url) == 1
        monkeypatch.delenv("GOOGLE_API_KEY")
        assert run(dataset, tmp_path / "unset", server.url) == 1
    assert "403" in sample_errors(tmp_path / "wrong", dataset)[0]
    assert "GEMINI_API_KEY" in sample_errors(tmp_path / "unset", dataset)[0]
    printed = capsys.readouterr()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in printed.out + printed.err


def test_bad_settings_are_refused() -> None:
    with pytest.raises(Exception, match="credentials"):
        load_system("gemini-live", {"url": "wss://u:p@example.com/ws"})
    with pytest.raises(Exception, match="end_sensitivity"):
        load_system("gemini-live", {"end_sensitivity": "LOUD"})
    with pytest.raises(Exception, match="activity_handling"):
        load_system("gemini-live", {"activity_handling": "SOMETIMES"})
    system = load_system("gemini-live", {"url": "ws://127.0.0.1:1/ws", "connect_timeout": "2"})
    with pytest.raises(SystemFailure, match="cannot connect"):
        system.open(SessionSpec(sample_rate=RATE, seed=0))
    with FakeGeminiServer(KEY, mute=True) as server:
        system = load_system("gemini-live", {"url": server.url, "setup_timeout": "0.5"})
        with pytest.raises(SystemFailure, match=r"no setupComplete from the server within 0\.5 s"):
            system.open(SessionSpec(sample_rate=RATE, seed=0))


def test_systems_lists_both_wall_clock_adapters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["systems"]) == 0
    rows = {row.split()[0]: row for row in capsys.readouterr().out.splitlines() if row.strip()}
    for name in ("gemini-live", "vllm-omni-duplex"):
        assert "servers" in rows[name] and "clock wall" in rows[name]
