"""``moshi-ws`` against moshi's real ``moshi.server`` (moshi 0.2.13) on loopback and the CPU,
serving the tiny random-weight checkpoint saved to the files the server loads (safetensors
weights, the LM config with ``mimi_config_name`` = ``file://`` + the tiny Mimi config, the
tokenizer), greedy.  The server starts through :mod:`moshi_server_cpu` (its warm-up calls
``torch.cuda.synchronize()``), with ``NO_TORCH_COMPILE=1`` (moshi would otherwise compile
its kernels with a C++ compiler on the CPU, minutes on 2 cores)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from tiny import write_dataset

pytest.importorskip("websockets")
pytest.importorskip("sphn")

from duplexeval.cli import main

HERE = Path(__file__).parent
FRAME = 1920


def save_checkpoint(tiny_system: Any, folder: Path) -> list[str]:
    """The tiny checkpoint's weights in safetensors files and a server config; the server's
    checkpoint arguments."""
    from safetensors.torch import save_file

    models = tiny_system.models()
    args = tiny_system.settings
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in models.lm.state_dict().items()},
              str(folder / "lm.safetensors"))
    save_file({k: v.contiguous() for k, v in models.mimi.state_dict().items()},
              str(folder / "mimi.safetensors"))
    config = json.loads(Path(str(args.config)).read_text())
    config["mimi_config_name"] = "file://" + str(args.mimi_config)
    config["lm_gen_config"] = {"use_sampling": False}
    (folder / "server.json").write_text(json.dumps(config))
    return ["--moshi-weight", str(folder / "lm.safetensors"),
            "--mimi-weight", str(folder / "mimi.safetensors"),
            "--tokenizer", str(args.tokenizer), "--config-path", str(folder / "server.json")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A running ``moshi.server`` subprocess, its stdout in ``log``."""

    def __init__(self, checkpoint: list[str], log: Path, port: int | None = None) -> None:
        self.port = free_port() if port is None else port
        self.log = log
        env = {**os.environ, "NO_TORCH_COMPILE": "1", "NO_CUDA_GRAPH": "1",
               "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "moshi_server_cpu.py"), "--host", "127.0.0.1",
             "--port", str(self.port), "--static", "none", "--device", "cpu", *checkpoint],
            stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 120
        while "Running on" not in log.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"moshi.server did not start:\n{log.read_text()}")
            time.sleep(0.2)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/api/chat"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture(scope="module")
def checkpoint(tiny_system: Any, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return save_checkpoint(tiny_system, tmp_path_factory.mktemp("served"))


@pytest.fixture
def server(checkpoint: list[str], tmp_path: Path) -> Iterator[Server]:
    running = Server(checkpoint, tmp_path / "server.log")
    yield running
    running.stop()


def logged_text(log: Path) -> list[tuple[int, str]]:
    """(session sample, piece) of every ``text token`` line of the server's log: the frame is
    the count of ``frame handled`` lines before it since the connection was accepted."""
    out: list[tuple[int, str]] = []
    frame = 0
    for line in log.read_text().splitlines():
        if "accepted connection" in line:
            frame = 0
        elif "frame handled" in line:
            frame += 1
        elif "text token '" in line:
            out.append((frame * FRAME, line.split("'")[1]))
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
    logged = logged_text(server.log)
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
    if mode == "lockstep":
        # the server sends a frame's text after its audio, so the text of the last frame
        # arrives after the session has returned it (and closed): found here, not fixed yet
        missing = Counter(logged) - Counter(traced)
        assert not Counter(traced) - Counter(logged)
        assert sum(missing.values()) <= summary["samples"]
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
