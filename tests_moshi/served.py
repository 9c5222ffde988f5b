"""moshi's real ``moshi.server`` (moshi 0.2.13) serving the tiny random-weight checkpoint on
loopback and the CPU: the checkpoint saved to the files the server loads (safetensors weights,
the LM config with ``mimi_config_name`` = ``file://`` + the tiny Mimi config, the tokenizer),
greedy; the server started through :mod:`moshi_server_cpu` (its warm-up calls
``torch.cuda.synchronize()``), with ``NO_TORCH_COMPILE=1`` (moshi would otherwise compile its
kernels with a C++ compiler on the CPU, minutes on 2 cores) and, when asked, its probe."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
    """A running ``moshi.server`` subprocess, its stdout in ``log``; with ``probe``, the
    records of :mod:`moshi_server_cpu`'s probe go to that file."""

    def __init__(self, checkpoint: list[str], log: Path, port: int | None = None,
                 probe: Path | None = None) -> None:
        self.port = free_port() if port is None else port
        self.log = log
        env = {**os.environ, "NO_TORCH_COMPILE": "1", "NO_CUDA_GRAPH": "1",
               "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
        if probe is not None:
            env["DUPLEXEVAL_MOSHI_PROBE"] = str(probe)
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
