"""``moshi-ws`` against moshi's real ``moshi.server`` (moshi 0.2.13) on loopback and the CPU,
serving the tiny random-weight checkpoint, greedy (:mod:`served`)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from served import FRAME, Server, save_checkpoint
from tiny import write_dataset

pytest.importorskip("websockets")
pytest.importorskip("sphn")

from duplexeval.cli import main


@pytest.fixture(scope="module")
def checkpoint(tiny_system: Any, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return save_checkpoint(tiny_system, tmp_path_factory.mktemp("served"))


@pytest.fixture
def server(checkpoint: list[str], tmp_path: Path) -> Iterator[Server]:
    running = Server(checkpoint, tmp_path / "server.log")
    yield running
    running.stop()


def logged_text(log: Path, flushed: bool = False) -> list[tuple[int, str]]:
    """(session sample, piece) of every ``text token`` line of the server's log: the frame is
    the count of ``frame handled`` lines before it since the connection was accepted (the
    server logs a frame's text before its ``frame handled`` line).  ``flushed``: leave out
    each connection's last frame, the lockstep client's flush frame (not the session's)."""
    out: list[tuple[int, str]] = []
    for connection in log.read_text().split("accepted connection")[1:]:
        frame, pieces = 0, []
        for line in connection.splitlines():
            if "frame handled" in line:
                frame += 1
            elif "text token '" in line:
                pieces.append((frame, line.split("'")[1]))
        out += [(f * FRAME, text) for f, text in pieces if not (flushed and f == frame - 1)]
    return out


def run(dataset: Path, out: Path, url: str, protocol: str, *extra: str) -> int:
    return main(["run", "--system", "moshi-ws", "--system-arg", f"url={url}",
                 "--dataset", str(dataset), "--protocol", protocol, "--window", "1.5",
                 "--out", str(out), *extra])


@pytest.mark.slow
@pytest.mark.parametrize(("protocol", "mode"), [("single", "lockstep"),
                                                ("multi-gen", "lockstep"),
                                                ("single", "realtime")])
def test_moshi_ws_runs_against_the_real_server(server: Server, tmp_path: Path,
                                               protocol: str, mode: str) -> None:
    """Every sample completes; the output has the input's length; the server's text tokens
    (its log's ``text token`` lines) reach the trace, in lockstep each on the frame the
    server's log shows it was produced on (frame 0 only initialises the server: no text)."""
    dataset = write_dataset(tmp_path / "data")
    out = tmp_path / "run"
    assert run(dataset, out, server.url, protocol, "--system-arg", f"mode={mode}") == 0
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["samples"] >= 3 and summary["failed"] == 0
    logged = logged_text(server.log, flushed=mode == "lockstep")
    traced: list[tuple[int, str]] = []
    for row in (json.loads(x) for x in (out / "metadata.jsonl").read_text().splitlines()):
        wav, _ = sf.read(str(out / row["output_audio_path"]), dtype="float32")
        record = json.loads((out / row["output_audio_path"]).with_suffix(".json").read_text())
        assert record.get("error") is None
        rate = sf.info(str(out / row["output_audio_path"])).samplerate
        assert wav.shape[0] == round((row["input_end"] - row["input_start"]) * rate)
        assert np.abs(wav[:, row["system_channel"]]).max() > 0
        traced += [(int(e["sample"]), str(e["text"])) for e in record["trace"]["text"]]
    assert logged, "the greedy tiny model said no text: choose another weights_seed"
    assert all(sample >= FRAME for sample, _ in logged)
    if mode == "lockstep":  # every piece, the last frame's too (the flush frame's: none)
        assert Counter(traced) == Counter(logged)
    else:  # on the playout clock, later than made; the last frames' text is still in flight
        pieces = Counter(t for _, t in traced)
        assert pieces and not pieces - Counter(t for _, t in logged)


@pytest.mark.slow
def test_killing_the_server_mid_stream_fails_the_sample_and_a_resume_completes_it(
        checkpoint: list[str], tmp_path: Path) -> None:
    """The server is killed once its second connection has handled 5 frames: that sample
    fails with the reason, the others after it cannot connect; a resume against a new server
    on the same port runs exactly the failed samples."""
    import threading

    dataset = write_dataset(tmp_path / "data")
    out = tmp_path / "run"
    server = Server(checkpoint, tmp_path / "a.log")

    def kill_mid_stream() -> None:
        while server.proc.poll() is None:
            text = server.log.read_text()
            second = text.split("accepted connection")[2:]
            if second and second[0].count("frame handled") >= 5:
                server.stop()
            time.sleep(0.01)

    killer = threading.Thread(target=kill_mid_stream)
    killer.start()
    try:
        assert run(dataset, out, server.url, "single", "--system-arg", "stall_timeout=5",
                   "--system-arg", "connect_timeout=2") == 1
    finally:
        server.stop()
        killer.join()
    records = [json.loads(p.read_text()) for p in sorted((out / "samples").rglob("*.json"))]
    errors = [r["error"] for r in records if r.get("error")]
    assert any("frame" in e and "closed the connection" in e for e in errors)
    summary = json.loads((out / "run_summary.json").read_text())
    failed = summary["failed"]
    assert failed == len(errors) >= 1
    again = Server(checkpoint, tmp_path / "b.log", port=server.port)
    try:
        assert run(dataset, out, again.url, "single", "--system-arg", "stall_timeout=5",
                   "--system-arg", "connect_timeout=2") == 0
    finally:
        again.stop()
    assert again.log.read_text().count("accepted connection") == failed
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0
