"""``duplexeval rtcheck``: the gates on hand-drawn played-out channels, the in-process timing on
``scripted`` (live, and not live with an artificial compute delay), and concurrent sessions on
the loopback Realtime server (a debounced one passes; one without debounce cancels on the 60 ms
transient; one slower than real time stalls)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from duplexeval.app.rtcheck._sessions import _Script, _stalls, analyse_session
from duplexeval.cli import main
from fake_realtime import FakeRealtimeServer

KEY = "rt-key"
RATE, FRAME = 1000, 10  # 10 ms frames at 1 kHz: one sample per millisecond


def _played(spans: list[tuple[float, float]], seconds: float = 8.0) -> np.ndarray:
    """A played-out channel: a 0.3-amplitude tone over each ``[start, end)`` (s)."""
    y = np.zeros(round(seconds * RATE), np.float32)
    t = np.arange(len(y)) / RATE
    for a, b in spans:
        on = (t >= a) & (t < b)
        y[on] = 0.3 * np.sin(2 * np.pi * 100 * t[on])
    return y


def _script() -> _Script:
    script = _Script(RATE, FRAME)
    script.heard = 2000  # the system was first heard at 2.0 s: transient 2.3 s, barge-in 3.0 s
    return script


TRACE = {"audio_arrivals": [{"sample": 2000, "arrival_ms": 1900.0, "samples": 500,
                             "stream": "r1"}], "realtime": {"send_drift_ms": {"max": 1.5,
                                                                              "p95": 0.9}}}


@pytest.mark.parametrize(("reply", "gates", "cancel"), [
    # system |=== 2.0 ... 3.2 ===|         stops 200 ms after the edge at 3.0: every gate passes
    ([(2.0, 3.2)], {"cancel": True, "transient": True, "realtime": True}, 0.2),
    # stops 300 ms after the edge: the cancel gate fails
    ([(2.0, 3.3)], {"cancel": False, "transient": True, "realtime": True}, 0.3),
    # falls silent 2.32-2.6 after the transient at 2.3, then speaks on: transient gate fails
    ([(2.0, 2.32), (2.6, 3.1)], {"cancel": True, "transient": False, "realtime": True}, 0.1),
    # stops at 3.1 but speaks again 3.5-3.8 while the barge-in (3.0-4.5) lasts: stale audio
    ([(2.0, 3.1), (3.5, 3.8)], {"cancel": False, "transient": True, "realtime": True}, 0.1),
    # the reply ended at 2.8, before the barge-in: neither gate can pass (on the played-out
    # channel an end is a stop; the gates need a reply of more than 1.1 s)
    ([(2.0, 2.8)], {"cancel": False, "transient": False, "realtime": True}, None),
])
def test_gates_on_hand_drawn_channels(reply: list[tuple[float, float]], gates: dict[str, bool],
                                      cancel: float | None) -> None:
    """Session seconds; the user's turn ends at 1.4 s, the first audio arrives at 1.9 s::

        user    |== turn 0.2-1.4 ==|          |t| 2.3-2.36     |== barge-in 3.0-4.5 ==|
        system                          |== reply from 2.0 (see each case) ==
    """
    check = analyse_session(_played(reply), TRACE, _script())
    assert check.gates == gates
    assert check.ttfa == pytest.approx(1.9 - 1.4)
    assert check.heard_at == 2.0 and check.drift_max_ms == 1.5
    if cancel is None:
        assert check.cancel_latency is None or not check.gates["cancel"]
    else:
        assert check.cancel_latency == pytest.approx(cancel, abs=1e-9)
    assert check.passed == all(gates.values()) and (check.problems == []) == check.passed


def test_stalls_are_gaps_inside_one_reply() -> None:
    """Playout samples at 1 kHz::

        r1  [0,100)  [100,200)  gap 50  [250,350)       one stall of 50 ms
        r2                                  [900,1000)  another reply: not a stall
        r1  flushed at 1200, then [1300, 1400): across a flush: not a stall
    """
    trace = {"audio_arrivals": [
        {"sample": 0, "samples": 100, "stream": "r1"},
        {"sample": 100, "samples": 100, "stream": "r1"},
        {"sample": 250, "samples": 100, "stream": "r1"},
        {"sample": 900, "samples": 100, "stream": "r2"},
        {"sample": 1000, "samples": 300, "stream": "r3"},
        {"sample": 1300, "samples": 100, "stream": "r3"},
        {"sample": 1600, "samples": 100, "stream": "r3"}],
        "playout_flushes": [{"sample": 1200, "dropped": 100, "reason": "barge_in"}]}
    count, seconds = _stalls(trace, RATE)
    assert count == 2 and seconds == pytest.approx(0.05 + 0.2)  # 250-200 and 1600-1400


def test_in_process_scripted_is_live_and_a_slow_one_is_not(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scripted`` steps in well under its 20 ms frame; with ``compute_seconds=0.03`` each step
    sleeps 30 ms: p50 above the frame, NOT live, exit 1; both write strict JSON."""
    out = tmp_path / "fast.json"
    assert main(["rtcheck", "--system", "scripted", "--seconds", "2", "--rows", "2",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "unbatched" in printed and "batch of 2" in printed and "could run live" in printed
    assert "time.perf_counter" in printed
    record = json.loads(out.read_text())
    assert record["live"] and [m["mode"] for m in record["modes"]] == ["unbatched", "batch of 2"]
    assert record["modes"][0]["frames"] == 100 - 5 and "perf_counter" in record[
        "measurement_origin"]
    slow = tmp_path / "slow.json"
    assert main(["rtcheck", "--system", "scripted", "--system-arg", "compute_seconds=0.03",
                 "--seconds", "0.5", "--rows", "1", "--json", str(slow)]) == 1
    assert "NOT live" in capsys.readouterr().out
    record = json.loads(slow.read_text())
    (mode,) = record["modes"]
    assert not record["live"] and mode["step_seconds"]["p50"] >= 0.03
    assert mode["rtf"]["p50"] >= 1.5


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RT_TEST_KEY", KEY)


def _server_args(server: FakeRealtimeServer, levels: str) -> list[str]:
    return ["rtcheck", "--system", "openai-realtime", "--system-arg", f"url={server.url}",
            "--system-arg", "api_key_env=RT_TEST_KEY", "--system-arg",
            "silence_duration_ms=300", "--levels", levels]


def test_loopback_server_passes_the_gates(key: None, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A debounced server (speech after 100 ms) twice as fast as real time: 1 and 2 sessions
    pass every gate; the table and the JSON name each figure's origin."""
    out = tmp_path / "rt.json"
    with FakeRealtimeServer(KEY, min_speech_ms=100) as server:
        assert main([*_server_args(server, "1,2"), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "TTFA p50 ms" in printed and printed.count("PASS") == 2
    assert "cancel: from the barge-in onset" in printed
    record = json.loads(out.read_text())
    assert record["passed"] and [lv["sessions"] for lv in record["levels"]] == [1, 2]
    for level in record["levels"]:
        assert level["stalls"] == 0 and level["cancel_max_s"] <= 0.25
        assert 0 < level["ttfa_p50_s"] < 1.0
        assert level["gates"] == {"cancel": level["sessions"], "realtime": level["sessions"],
                                  "transient": level["sessions"]}


@pytest.mark.parametrize(("options", "failed", "problem"), [
    ({"min_speech_ms": 100, "audio_ms": 10}, "realtime 0/1", None),  # half real time: stalls
    ({}, "transient 0/1", "after the 60 ms transient"),  # no debounce: the transient cancels
])
def test_a_slow_or_jumpy_server_fails_the_gate(key: None, capsys: pytest.CaptureFixture[str],
                                               options: dict[str, int], failed: str,
                                               problem: str | None) -> None:
    with FakeRealtimeServer(KEY, **options) as server:
        assert main(_server_args(server, "1")) == 1
    printed = capsys.readouterr().out
    assert "FAIL" in printed and failed in printed
    if problem is not None:
        assert problem in printed


@pytest.mark.parametrize(("args", "message"), [
    (["--levels", "0"], "levels must be session counts"),
    (["--levels", "1,x"], "levels must be session counts"),
    (["--seconds", "nan"], "--seconds"),
])
def test_bad_options_are_one_line(args: list[str], message: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["rtcheck", "--system", "scripted", *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_server_with_a_dataset_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rtcheck", "--system", "openai-realtime", "--dataset", "x"]) == 2
    assert "--dataset is for in-process systems" in capsys.readouterr().err
