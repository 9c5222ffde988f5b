"""``openai-realtime`` against a loopback server speaking the Realtime API's events
(:mod:`fake_realtime`): session settings, deadline pacing, playout of faster-than-real-time
audio, barge-in with cancel and truncate of the amount actually played, keys never recorded."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("websockets")

from duplexeval.systems import SessionSpec, SystemFailure, load_system
from fake_realtime import RATE, FakeRealtimeServer

pytestmark = pytest.mark.realtime

KEY = "sk-realtime-SENTINEL-9876543210"
FRAME = 480


def user_audio() -> np.ndarray:
    """Speech (a 200 Hz tone) at 0.5-1.5 s, then a barge-in at 2.6-3.4 s; 5 s in all."""
    x = np.zeros(5 * RATE, np.float32)
    for a, b in ((0.5, 1.5), (2.6, 3.4)):
        t = np.arange(round((b - a) * RATE)) / RATE
        x[round(a * RATE):round(a * RATE) + len(t)] = 0.2 * np.sin(2 * np.pi * 200 * t)
    return x


def converse(server: FakeRealtimeServer, **args: str) -> tuple[np.ndarray, dict]:
    system = load_system("openai-realtime", {"url": server.url, "api_key_env": "RT_TEST_KEY",
                                             "silence_duration_ms": "300", **args})
    session = system.open(SessionSpec(sample_rate=RATE, seed=0))
    x = user_audio()
    y = np.concatenate([session.step(x[k:k + FRAME]).audio for k in range(0, len(x), FRAME)])
    trace = session.trace()
    session.close()
    return y, trace


def loud(y: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.abs(y) > 0.05)


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RT_TEST_KEY", KEY)


def test_barge_in_flushes_playout_and_truncates_what_was_played() -> None:
    with FakeRealtimeServer(KEY) as server:
        y, trace = converse(server)
    update = next(e for e in server.received if e["type"] == "session.update")
    vad = update["session"]["audio"]["input"]["turn_detection"]
    assert vad == {"type": "server_vad", "create_response": True, "interrupt_response": True,
                   "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 300}
    assert update["session"]["audio"]["output"]["voice"] == "marin"
    assert "model=gpt-realtime" in server.paths[0]
    # the reply starts after the user's 1.5 s + 300 ms of silence, at arrival time (a loaded
    # machine adds its scheduling delay: the bounds are generous, the truncate check exact)
    on = loud(y)
    assert 1.8 <= on[0] / RATE <= 1.8 + 0.6
    # the user barges in at 2.6 s: what was queued beyond that is never heard
    first_reply_end = on[on < 3.5 * RATE][-1] / RATE
    assert 2.6 <= first_reply_end <= 2.6 + 0.6
    barge = next(e for e in trace["server_events"] if e["type"] == "barge_in")
    assert len(server.truncates) == 1
    truncate = server.truncates[0]
    assert truncate["item_id"] == barge["item_id"] and truncate["content_index"] == 0
    # audio_end_ms is what was actually played of that item
    played_ms = (first_reply_end - on[0] / RATE) * 1000
    assert abs(truncate["audio_end_ms"] - played_ms) <= 25
    kinds = [e["type"] for e in server.received]
    assert kinds.index("response.cancel") < kinds.index("conversation.item.truncate")
    # the second turn is answered again, after the barge-in speech ends (3.4 s + 300 ms)
    assert np.any(on > 3.7 * RATE)
    assert trace["realtime"]["server_session"]["audio"]["input"]["turn_detection"]["type"] \
        == "server_vad"
    assert trace["realtime"]["send_drift_ms"]["mean"] < 100
    assert KEY not in json.dumps(trace)


def test_models_without_truncate_never_get_cancel_or_truncate() -> None:
    with FakeRealtimeServer(KEY) as server:
        _, trace = converse(server, truncate="false", reasoning_effort="low")
    kinds = {e["type"] for e in server.received}
    assert "conversation.item.truncate" not in kinds and "response.cancel" not in kinds
    barge = next(e for e in trace["server_events"] if e["type"] == "barge_in")
    assert barge["sent_truncate"] is False
    update = next(e for e in server.received if e["type"] == "session.update")
    assert update["session"]["reasoning"] == {"effort": "low"}


def test_settings_are_recorded_and_errors_are_redacted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    system = load_system("openai-realtime", {"voice": "cedar"})
    assert system.args["voice"] == "cedar" and system.args["vad"] == "server_vad"
    assert system.args["silence_duration_ms"] == "500"  # defaults land in the run config
    assert system.args["api_key_env"] == "OPENAI_API_KEY"
    with FakeRealtimeServer(KEY, fault="error") as server, \
            pytest.raises(SystemFailure, match="the server reported an error") as caught:
        converse(server)
    assert KEY not in str(caught.value) and "***" in str(caught.value)
    with FakeRealtimeServer(KEY, fault="garbage") as server, \
            pytest.raises(SystemFailure, match="not JSON"):
        converse(server)
    monkeypatch.setenv("RT_TEST_KEY", "wrong-key-000000")
    with FakeRealtimeServer(KEY) as server, pytest.raises(SystemFailure, match="401"):
        converse(server)
    monkeypatch.delenv("RT_TEST_KEY")
    with FakeRealtimeServer(KEY) as server, pytest.raises(SystemFailure, match="RT_TEST_KEY"):
        converse(server)
