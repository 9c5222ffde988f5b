"""``freeze-omni`` against a loopback server speaking the Freeze-Omni demo server's Socket.IO
events (:mod:`fake_freeze_omni`): a full ``duplexeval run``, reply onsets where the server
produced them, ``stop_tts``, failures per sample with their reason and retry on resume; and
HTTPS with a self-signed certificate, as Freeze-Omni serves it.

Only the TLS tests run the loopback server over HTTPS; the protocol tests run over plain HTTP.
Both ends of such a connection read its TLS socket in one thread and write it in another
(Engine.IO's read and write loops in the client, simple-websocket's thread and Engine.IO's
writer in the server), and two OpenSSL calls at once on one connection corrupt it now and then:
that was the flaky TLS test ("frame 114: the server closed the connection (transport error)").
The client's socket, and the fake's, serialize their OpenSSL calls
(:mod:`duplexeval.systems.adapters.freeze_omni._tls`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from conftest import ModuleTemp

pytest.importorskip("socketio")
pytest.importorskip("werkzeug")

from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.systems import SessionSpec, SystemFailure, load_system
from fake_freeze_omni import IN_RATE, FakeFreezeOmni
from tiny_duplex import tiny_dataset
from tls_cert import self_signed
from tone_dataset import has_driver_trace, trace_file

pytestmark = pytest.mark.realtime

FRAME = 256


@pytest.fixture(scope="module")
def tls(module_tmp: ModuleTemp) -> tuple[Path, Path]:
    made = self_signed(module_tmp.mktemp("tls"))
    if made is None:
        pytest.skip("openssl is not installed (needed for the self-signed certificate)")
    return made


def run(dataset: Path, out: Path, url: str, *extra: str) -> int:
    return main(["run", "--system", "freeze-omni", "--system-arg", f"url={url}",
                 "--system-arg", "verify=0", "--dataset", str(dataset), "--protocol", "single",
                 "--window", "1", "--out", str(out), *extra])


def plan_order(dataset: Path) -> list:
    ds, _ = load_dataset(dataset, audio=Need.REQUIRE)
    plan = build_plan(ds.dialogues, PlanOptions(protocol=EvalProtocol.SINGLE, window=1.0))
    return [s for members in plan.groups().values() for s in members]


def test_a_run_hears_each_reply_when_the_server_sent_it(tmp_path: Path) -> None:
    dataset = tiny_dataset(tmp_path / "ds")
    with FakeFreezeOmni(None) as server:
        assert run(dataset, tmp_path / "run", server.url, "--system-arg",
                   "prompt=You are a test.") == 0
    samples = plan_order(dataset)
    assert server.connections == len(samples) == 4
    assert server.prompts == ["You are a test."] * 4
    # recording-started, then recording-stopped and a disconnect at the end (handled in
    # threads of their own, so the last two may land in either order)
    assert all(e[:2] == ["connect", "reset"] and "disconnect" in e for e in server.events), \
        server.events
    for s, produced in zip(samples, server.onsets, strict=True):
        folder = tmp_path / "run" / "samples" / s.sample_id
        x, rate = sf.read(str(folder / f"{s.event_id}.wav"), dtype="float32")
        assert rate == IN_RATE and len(produced) == 1
        trace = trace_file(tmp_path / "run", s)
        assert has_driver_trace(trace), trace.keys()
        loud = np.flatnonzero(np.abs(x[:, 1]) > 0.05)
        assert len(loud) and abs(loud[0] - trace["audio_arrivals"][0]["sample"]) <= 2
        # the chunk answered the message ending at input sample `produced`, sent at that
        # sample's deadline (+ drift); it is heard on arrival, one acknowledged round trip on
        facts = trace["freeze_omni"]
        slack = (trace["realtime"]["send_drift_ms"]["max"]
                 + facts["ack_round_trip_ms"]["max"]) / 1000
        assert 0 <= loud[0] - produced[0] <= FRAME + slack * IN_RATE, (loud[0], produced, facts)
        # one 0.25 s chunk per incoming message: the 24 kHz chunks play back to back
        assert all(a["samples"] == IN_RATE // 4 for a in trace["audio_arrivals"])
        rest = x[loud[0]:, 1]
        assert np.count_nonzero(np.abs(rest) > 0.05) > 0.85 * len(rest)
        assert facts["events_before_start"] == {"prompt_success": 1, "stop_tts": 2}
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["system"]["capabilities"]["clock"] == "wall"
    assert config["system"]["capabilities"]["frame_size"] == FRAME


@pytest.mark.slow
def test_failures_are_recorded_per_sample_and_retried_on_resume(tmp_path: Path) -> None:
    dataset = tiny_dataset(tmp_path / "ds")
    faults = {0: ("disconnect", 20), 1: ("stall", 20), 2: ("garbage", 20)}
    out = tmp_path / "faulty"
    with FakeFreezeOmni(None, faults=faults) as server:
        assert run(dataset, out, server.url, "--system-arg", "stall_timeout=1") == 1
    samples = plan_order(dataset)
    errors = [json.loads((out / "samples" / s.sample_id / f"{s.event_id}.json").read_text())
              .get("error") for s in samples]
    assert "closed the connection" in errors[0]
    assert "stall" in errors[1] and "acknowledged no message for 1 s" in errors[1]
    assert "garbage" in errors[2] and "str" in errors[2]
    assert errors[3] is None  # the run went on
    with FakeFreezeOmni(None, port=server.port) as healthy:
        assert run(dataset, out, healthy.url, "--system-arg", "stall_timeout=1") == 0
    assert healthy.connections == 3  # only the failed samples ran again
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == 4


def talk(server: FakeFreezeOmni, x: np.ndarray, **args: str) -> tuple[np.ndarray, dict]:
    system = load_system("freeze-omni", {"url": server.url, "verify": "0", **args})
    session = system.open(SessionSpec(sample_rate=IN_RATE, seed=0))
    y = np.concatenate([session.step(x[k:k + FRAME]).audio for k in range(0, len(x), FRAME)])
    trace = session.trace()
    session.close()
    return y, trace


def barge_in() -> np.ndarray:
    """User speech 0.2-0.8 s, then again 1.6-2.0 s over the 2 s reply (from about 1.3 s)."""
    x = np.zeros(3 * IN_RATE, np.float32)
    for a, b in ((0.2, 0.8), (1.6, 2.0)):
        t = np.arange(round((b - a) * IN_RATE)) / IN_RATE
        x[round(a * IN_RATE):round(a * IN_RATE) + len(t)] = 0.2 * np.sin(2 * np.pi * 200 * t)
    return x


def test_stop_tts_drops_the_queued_reply_or_is_ignored() -> None:
    """The server answers the barge-in with a new reply, interrupting the first one with
    ``stop_tts`` (about 2.3 s): what was still queued of the first reply is never heard, and the
    new reply starts after its synthesis, a block (160 ms) later."""
    with FakeFreezeOmni(None, reply_chunks=8) as server:
        y, trace = talk(server, barge_in())
        kept, kept_trace = talk(server, barge_in(), on_stop="ignore")
    facts = trace["freeze_omni"]
    assert len(server.interrupts[0]) == 1 and facts["stop_tts"] == 1
    stop = trace["playout_flushes"][0]
    assert stop["reason"] == "stop_tts" and stop["dropped"] > 0.3 * IN_RATE
    slack = (trace["realtime"]["send_drift_ms"]["max"]
             + facts["ack_round_trip_ms"]["max"]) / 1000
    assert 0 <= stop["sample"] - server.interrupts[0][0] <= 3 * FRAME + slack * IN_RATE
    loud = np.flatnonzero(np.abs(y) > 0.05)
    new_reply = min(a["sample"] for a in trace["audio_arrivals"]
                    if a["arrival_ms"] * IN_RATE / 1000 > stop["sample"])
    assert new_reply - stop["sample"] > 0.1 * IN_RATE
    assert not np.any((loud >= stop["sample"] + 2) & (loud < new_reply))
    assert np.any((loud < stop["sample"]) & (loud > stop["sample"] - 100))
    # ignored, the first reply plays to its end and the new one queues behind it
    assert kept_trace["playout_flushes"] == [] and kept_trace["freeze_omni"]["stop_tts"] == 1
    assert np.count_nonzero(np.abs(kept) > 0.05) > len(loud) + 0.3 * IN_RATE * 0.85


def test_https_with_a_self_signed_certificate(tls: tuple[Path, Path]) -> None:
    x = np.zeros(round(2.5 * IN_RATE), np.float32)
    x[1600:8000] = 0.2 * np.sin(2 * np.pi * 200 * np.arange(6400) / IN_RATE)
    with FakeFreezeOmni(tls) as server:
        assert server.url.startswith("https://")
        y, trace = talk(server, x)
        with pytest.raises(SystemFailure, match=r"cannot connect.*CERTIFICATE_VERIFY_FAILED"):
            talk(server, x[:FRAME], verify="1")
    loud = np.flatnonzero(np.abs(y) > 0.05)
    assert len(server.onsets[0]) == 1 and len(loud) and loud[0] >= server.onsets[0][0]
    assert trace["freeze_omni"]["events_before_start"] == {"stop_tts": 2}


def test_a_full_server_an_idle_timeout_and_bad_arguments_fail_clearly() -> None:
    with FakeFreezeOmni(None, max_users=0) as server, \
            pytest.raises(SystemFailure, match="too_many_users"):
        talk(server, np.zeros(FRAME * 4, np.float32))
    with FakeFreezeOmni(None, faults={0: ("out_time", 3)}) as server, \
            pytest.raises(SystemFailure, match=r"frame [3-9].*out_time"):
        talk(server, np.zeros(FRAME * 40, np.float32))
    for args, message in (({"verify": "maybe"}, "verify must be"),
                          ({"on_stop": "later"}, "on_stop must be"),
                          ({"url": "wss://127.0.0.1:1"}, "url must be"),
                          ({"url": "https://127.0.0.1:1/socket.io"}, "root")):
        with pytest.raises(Exception, match=message):
            load_system("freeze-omni", {"url": "https://127.0.0.1:1", **args})


def test_messages_are_handled_in_wire_order_in_the_reading_thread() -> None:
    """Engine.IO's threaded client hands each message to a new thread; the link makes it call
    the handler inline, so events and acknowledgements are seen in the order they arrived (the
    race behind a reset's ``stop_tts`` counted after the acknowledgement that follows it)."""
    import threading

    import socketio

    from duplexeval.systems.adapters.freeze_omni._link import _in_wire_order

    client = socketio.Client(reconnection=False, handle_sigint=False)
    seen: list[tuple[int, threading.Thread]] = []
    client.eio.on("message", lambda data: seen.append((data, threading.current_thread())))
    _in_wire_order(client)
    for n in range(50):
        client.eio._trigger_event("message", n, run_async=True)  # as _receive_packet does
    assert [n for n, _ in seen] == list(range(50))
    assert all(thread is threading.current_thread() for _, thread in seen)


def test_a_server_disconnect_handled_inline_closes_the_link_without_an_error(
        caplog: pytest.LogCaptureFixture) -> None:
    """The server drops the client (its Socket.IO ``disconnect``), which the link handles in
    the reading thread: Engine.IO's ``disconnect`` used to join that thread from itself there
    ("message handler error ... RuntimeError: cannot join current thread", logged with its
    traceback), leaving the connection half closed (``disconnecting``) and the writing thread
    waiting 30 s to log "packet queue is empty".  Now nothing is logged, and the connection and
    both its threads are closed before the link is."""
    import logging
    import time

    from duplexeval.systems.adapters.freeze_omni._link import SocketIOLink
    from duplexeval.systems.adapters.freeze_omni._wire import audio_payload

    with caplog.at_level(logging.ERROR), \
            FakeFreezeOmni(None, faults={0: ("disconnect", 1)}) as server:
        link = SocketIOLink(server.url, True, 5.0, {})
        eio = link._sio.eio
        loops = (eio.read_loop_task, eio.write_loop_task)  # a thread clears its own at its end
        link.emit("recording-started")
        with pytest.raises(SystemFailure, match="closed the connection"):
            for _ in range(20):
                link.emit("audio", audio_payload(np.zeros(FRAME * 10, np.float32)))
                time.sleep(0.05)
        deadline = time.monotonic() + 5
        while (got := link.receive(0.1)) is None or got[0][0] != "disconnect":
            assert time.monotonic() < deadline, "no disconnect event"
        for thread in loops:  # the writing thread waited out its 30-s queue timeout before
            thread.join(timeout=5)
        assert not any(t.is_alive() for t in loops) and eio.state == "disconnected"
        link.close()
    client_errors = [r for r in caplog.records if r.name.startswith(("engineio.client",
                                                                     "socketio.client"))]
    assert client_errors == []


def test_the_client_tls_socket_makes_one_openssl_call_at_a_time(
        tls: tuple[Path, Path]) -> None:
    """Engine.IO's read loop and write loop share the WebSocket: over TLS its socket must be the
    serialized one (two OpenSSL calls at once on one connection corrupt it: the flaky TLS test,
    a lost connection about one session in thirty under load)."""
    from duplexeval.systems.adapters.freeze_omni._link import SocketIOLink
    from duplexeval.systems.adapters.freeze_omni._tls import SerializedTLS

    with FakeFreezeOmni(tls) as server:
        link = SocketIOLink(server.url, verify=False, connect_timeout=10)
        try:
            assert isinstance(link._sio.eio.ws.sock, SerializedTLS)
            assert link._sio.eio.ws.sock.gettimeout() == link._sio.eio.ws.gettimeout() > 0
        finally:
            link.close()
