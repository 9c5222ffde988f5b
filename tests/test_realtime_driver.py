"""The real-time driver (:mod:`duplexeval.systems.realtime._driver`) on a fake clock:
absolute-deadline pacing without drift, the playout rule and the flush on an interrupt (hand-drawn
timelines), the trace's statistics; then one short loopback run through ``duplexeval run`` whose
trace file is written beside the sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from conftest import ModuleTemp
from duplexeval.systems import SystemFailure
from duplexeval.systems.realtime._driver import RealtimeDriver, jitter_stats

pytestmark = pytest.mark.realtime


class FakeTime:
    """A monotonic clock that only moves when waited on (``recv``) or spent (``send``).

    ``wake_late`` (s) is added to every wait that times out (a scheduler waking the driver
    late); ``hiccups`` {frame: s} stalls one wait by that much more; ``send_cost`` (s) is the
    time a send takes; ``messages`` are (arrival s, payload) handed over in order."""

    def __init__(self, start: float = 100.0, wake_late: float = 0.0, send_cost: float = 0.0,
                 hiccups: dict[int, float] | None = None,
                 messages: list[tuple[float, Any]] | None = None) -> None:
        self.now = start
        self.wake_late, self.send_cost = wake_late, send_cost
        self.hiccups = hiccups or {}
        self.messages = sorted(messages or [], key=lambda m: m[0])
        self.sends: list[float] = []

    def clock(self) -> float:
        return self.now

    def recv(self, timeout: float) -> tuple[Any, float] | None:
        if self.messages and self.messages[0][0] <= self.now + timeout:
            at, payload = self.messages.pop(0)
            self.now = max(self.now, at)
            return payload, self.now
        self.now += timeout + self.wake_late + self.hiccups.pop(len(self.sends), 0.0)
        return None

    def send(self) -> float:
        self.now += self.send_cost
        self.sends.append(self.now)
        return self.now


def ignore(message: Any, arrival: float) -> None:
    """A handler for runs that receive nothing."""


def test_sends_on_absolute_deadlines_so_lateness_never_accumulates() -> None:
    # 80 ms frames at 24 kHz; each wait wakes 3 ms late and each send takes 1 ms: a client that
    # slept 80 ms after each send would fall 4 ms further behind every frame (40 s after 10000
    # frames); on absolute deadlines every frame is 4 ms late, the 10000th too.
    t = FakeTime(wake_late=0.003, send_cost=0.001)
    driver = RealtimeDriver(24000, 1920, t.clock)
    for _ in range(10_000):
        driver.step(t.send, t.recv, ignore)
    assert driver.t0 == 100.0
    assert t.sends[-1] == pytest.approx(100.0 + 10_000 * 0.08 + 0.004, abs=1e-6)
    drift = driver.trace()["realtime"]["send_drift_ms"]
    assert drift["max"] == pytest.approx(4.0, abs=1e-3) and drift["mean"] == \
        pytest.approx(4.0, abs=1e-3)
    assert len(drift["series"]) == 10_000


def test_a_late_frame_is_caught_up_at_once() -> None:
    # frame 5's wait stalls 130 ms: frames 5 and 6 go out late, and frame 7's deadline
    # (t0 + 640 ms) is still ahead, so the drift is back to 0 from there on
    #
    #   deadlines  ...  d5=480   d6=560   d7=640 ms
    #   sends           s5=610   s6=610   s7=640
    t = FakeTime(hiccups={5: 0.130})
    driver = RealtimeDriver(24000, 1920, t.clock)
    for _ in range(10):
        driver.step(t.send, t.recv, ignore)
    series = driver.trace()["realtime"]["send_drift_ms"]["series"]
    assert series == pytest.approx([0, 0, 0, 0, 0, 130, 50, 0, 0, 0], abs=1e-3)


def test_playout_rule_a_chunk_starts_at_its_arrival_or_after_the_audio_before_it() -> None:
    # rate 1000 Hz (1 sample = 1 ms), t0 = 100 s, 10-sample frames:
    #
    #   arrival (ms)   2     4                  20
    #   chunks         A(5)  B(5)               C(3)
    #   played out     ..AAAAABBBBB........CCC..      A at 2, B at max(4, 7) = 7,
    #   sample         0 2    7    12      20 23      C at max(20, 12) = 20 (a gap is silence)
    a, b, c = (np.full(n, v, np.float32) for n, v in ((5, 0.1), (5, 0.2), (3, 0.3)))
    t = FakeTime(messages=[(100.002, a), (100.004, b), (100.020, c)])
    driver = RealtimeDriver(1000, 10, t.clock)
    placed: list[int] = []
    out = np.concatenate([driver.step(t.send, t.recv, lambda m, at: placed.append(
        driver.place(m, at))) for _ in range(4)])
    assert placed == [2, 7, 20]
    expected = np.zeros(40, np.float32)
    expected[2:7], expected[7:12], expected[20:23] = 0.1, 0.2, 0.3
    assert np.array_equal(out, expected)
    trace = driver.trace()
    assert trace["realtime"]["initial_silence_ms"] == 2.0
    assert [e["sample"] for e in trace["audio_arrivals"]] == [2, 7, 20]
    assert [e["arrival_ms"] for e in trace["audio_arrivals"]] == [2.0, 4.0, 20.0]


def test_an_interrupt_flushes_what_was_queued_beyond_now() -> None:
    # a 30-sample reply arrives at once at 1 ms; the user interrupts at 11 ms: what was played
    # (samples 1-10) stays, the rest is never heard, and a chunk arriving at 15 ms starts there
    #
    #   played out   .RRRRRRRRRR....NNN....     R: the reply, cut at 11; N at 15
    reply, after = np.full(30, 0.5, np.float32), np.full(3, 0.7, np.float32)
    t = FakeTime(messages=[(100.001, ("audio", reply)), (100.011, ("interrupt", None)),
                           (100.015, ("audio", after))])
    driver = RealtimeDriver(1000, 10, t.clock)

    def handle(message: tuple[str, Any], arrival: float) -> None:
        kind, pcm = message
        if kind == "audio":
            driver.place(pcm, arrival)
        else:
            driver.log("speech_started", arrival)
            assert driver.interrupt(arrival, "barge_in") == 20

    out = np.concatenate([driver.step(t.send, t.recv, handle) for _ in range(4)])
    expected = np.zeros(40, np.float32)
    expected[1:11], expected[15:18] = 0.5, 0.7
    assert np.array_equal(out, expected)
    trace = driver.trace()
    assert trace["playout_flushes"] == [{"sample": 11, "dropped": 20, "reason": "barge_in"}]
    assert trace["server_events"] == [{"sample": 11, "type": "speech_started",
                                       "arrival_ms": 11.0}]


def test_arrival_jitter_is_the_transit_difference_of_consecutive_chunks() -> None:
    # 20 ms chunks of stream "a" arriving at 0, 25 and 40 ms: D = 25 - 20 = 5 ms, then
    # 15 - 20 = -5 ms; RFC 3550: J = 5/16 = 0.3125, then 0.3125 + (5 - 0.3125)/16 = 0.60546875
    # ms.  Stream "b" starts 3 s later: the silence before it is not jitter.
    stats = jitter_stats([(0.0, 480, "a"), (0.025, 480, "a"), (0.040, 480, "a"),
                          (3.0, 480, "b")], 24000)
    assert stats == {"mean_abs": 5.0, "p95_abs": 5.0, "max_abs": 5.0, "rfc3550": 0.605}
    assert jitter_stats([(0.0, 480, "a"), (1.0, 480, "b")], 24000)["rfc3550"] is None


def test_no_audio_for_longer_than_the_stall_timeout_fails_the_session() -> None:
    t = FakeTime(messages=[(100.05, np.ones(10, np.float32))])
    driver = RealtimeDriver(24000, 1920, t.clock, stall_timeout=0.5)
    with pytest.raises(SystemFailure, match=r"stall: no audio from the server for 0\.5 s"):
        for _ in range(20):
            driver.step(t.send, t.recv, lambda m, at: driver.place(m, at))
    assert 6 <= driver.frames_sent <= 8  # failed within one frame of 0.05 + 0.5 s


@pytest.fixture(scope="module")
def realtime_run(module_tmp: ModuleTemp) -> Path:
    """``duplexeval run`` of ``moshi-ws`` in real time against the loopback Moshi server, on
    one TURN_SHIFT sample (a 200 Hz burst at 0.2-1.0 s, a 1 s window: about 2 s of wall
    time)."""
    pytest.importorskip("sphn")
    pytest.importorskip("websockets")
    from conftest import make_dataset
    from duplexeval.cli import main
    from fake_moshi import FakeMoshiServer

    tmp_path = module_tmp.mktemp("realtime")
    words = [(0, 0.2, 1.0, "hello"), (1, 1.3, 2.0, "hi")]
    root = make_dataset(tmp_path / "ds", {"0": [("TURN", 0.2, 1.0)],
                                          "1": [("TURN_SHIFT", 1.0, 1.3), ("TURN", 1.3, 2.0)]},
                        words, audio_seconds=3.0)
    x, rate = sf.read(str(root / "audio" / "d1.wav"), always_2d=True)
    n = np.arange(round(0.8 * rate))
    x[round(0.2 * rate):round(0.2 * rate) + len(n), 0] = 0.2 * np.sin(2 * np.pi * 200 * n / rate)
    sf.write(str(root / "audio" / "d1.wav"), x, rate)
    with FakeMoshiServer(reply_after=2) as server:
        assert main(["run", "--system", "moshi-ws", "--system-arg", f"url={server.url}",
                     "--system-arg", "mode=realtime", "--dataset", str(root), "--protocol",
                     "single", "--window", "1", "--out", str(tmp_path / "run")]) == 0
    return tmp_path / "run"


def test_a_wall_clock_run_writes_its_trace_file_beside_the_sample(realtime_run: Path) -> None:
    from duplexeval.runs import open_run

    run = open_run(realtime_run)
    row = next(r for r in run.read_metadata() if r.event_type == "TURN_SHIFT")
    record = run.read_record(row.sample_id, row.event_id)
    assert record is not None and record.trace_path
    trace = json.loads((run.root / record.trace_path).read_text())
    assert trace == run.read_trace(row.sample_id, row.event_id)
    rt = trace["realtime"]
    assert rt["frames_sent"] == record.frames == len(rt["send_drift_ms"]["series"])
    assert 0 <= rt["send_drift_ms"]["max"] < 200  # generous: a loaded CI machine
    assert rt["send_drift_ms"]["max"] == max(abs(d) for d in rt["send_drift_ms"]["series"])
    arrivals = trace["audio_arrivals"]
    assert sum(a["samples"] for a in arrivals) == rt["received_samples"] > 0
    assert rt["initial_silence_ms"] == pytest.approx(arrivals[0]["sample"] / 24, abs=1e-3)
    start = float(row.input_start)
    for a in arrivals:  # dialogue time: the session's t0 is the sample's input start
        assert a["time"] == pytest.approx(start + a["sample"] / 24000, abs=1e-6)
        assert a["sample"] >= round(a["arrival_ms"] * 24) - 1  # never before it arrived
    # the record keeps the summary, not the series
    assert "series" not in record.trace["realtime"]["send_drift_ms"]
    assert "audio_arrivals" not in record.trace


def test_the_html_event_view_shows_the_real_time_trace(realtime_run: Path) -> None:
    from duplexeval.cli import main
    from duplexeval.report._event_cases import event_cases
    from duplexeval.report._html_parts import case_html
    from duplexeval.results import load_scored

    assert main(["score", str(realtime_run), "--vad", "energy", "--asr", "none"]) == 0
    cases = event_cases(load_scored(realtime_run), "moshi-ws")
    case = next(c for c in cases if c.result.event_type == "TURN_SHIFT")
    trace = json.loads(next(realtime_run.rglob("*.trace.json")).read_text())
    assert case.realtime is not None
    assert case.realtime.frames_sent == trace["realtime"]["frames_sent"]
    assert case.realtime.frame_ms == 80.0
    assert case.realtime.drift_max == trace["realtime"]["send_drift_ms"]["max"]
    html = case_html(case, "", None)
    assert "<summary>real-time trace</summary>" in html
    assert f"{case.realtime.frames_sent} frames of 80 ms sent on absolute deadlines" in html
    assert f"send drift max {case.realtime.drift_max:.1f} ms" in html
    # the latency says where its interval starts and ends
    assert case.origins["latency ↓"][0].startswith("the user's turn end")
    assert '<b title="from the user&#x27;s turn end (event_start, annotated) in the input ' \
        'channel' in html


def test_objects_from_before_the_session_are_frozen_while_it_streams() -> None:
    """... and threads hand the GIL over every 0.5 ms; both are restored by ``close``."""
    import gc
    import sys

    gc.unfreeze()  # drivers of earlier tests that were never closed
    sys.setswitchinterval(0.005)
    t = FakeTime()
    driver = RealtimeDriver(24000, 1920, t.clock)
    driver.step(t.send, t.recv, ignore)
    assert gc.get_freeze_count() > 0  # a full collection now skips them
    assert sys.getswitchinterval() == pytest.approx(0.0005)
    driver.close()
    driver.close()
    assert gc.get_freeze_count() == 0
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_releasing_played_audio_changes_nothing_that_is_still_heard() -> None:
    """Random arrivals and flushes, frame by frame: a buffer that forgets each frame once it
    is returned (what the driver does) returns what one that keeps everything returns."""
    from duplexeval.systems.realtime._playout import Playout

    rng = np.random.default_rng(1)
    for _ in range(100):
        released, kept = Playout(1000, 0.0), Playout(1000, 0.0)
        heard, reference = [], []
        for k in range(30):
            for _ in range(rng.integers(0, 3)):
                pcm = rng.standard_normal(int(rng.integers(1, 40))).astype(np.float32)
                arrival = (k * 10 + int(rng.integers(0, 10))) / 1000
                assert released.place(pcm, arrival) == kept.place(pcm, arrival)
            if rng.random() < 0.1:
                at = k * 10 + int(rng.integers(0, 10))
                assert released.flush_from(at) == kept.flush_from(at)
            heard.append(released.frame(k * 10, 10))
            released.release((k + 1) * 10)
            reference.append(kept.frame(k * 10, 10))
        assert np.array_equal(np.concatenate(heard), np.concatenate(reference))
        assert released.base == 300  # every returned frame was forgotten
    # a long stream (10 000 frames of 80 ms, one chunk each) holds a few frames, not 13 min
    long = Playout(24000, 0.0)
    for k in range(10_000):
        long.place(np.ones(1920, np.float32), (k + 0.5) * 0.08)
        long.frame(k * 1920, 1920)
        long.release((k + 1) * 1920)
    assert len(long._audio) <= 4 * 1920
