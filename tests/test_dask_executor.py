"""The Dask executor (``duplexeval run --executor dask``): work units, byte-identical outputs
against the local executor, a worker killed mid-run, worker resources, an unreachable
scheduler.  Local clusters here have one or two worker processes of one thread each."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import needs_extra
from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan, split_passes
from duplexeval.runs._units import SystemRef, plan_units
from duplexeval.systems import Session, SessionSpec
from duplexeval.systems.builtin._scripted import ScriptedSystem
from run_files import RUN, run_files

pytestmark = needs_extra("dask")



def test_units_keep_passes_together_and_single_samples_apart(sample_voiced: Path) -> None:
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    for protocol, context in ((EvalProtocol.MULTI_GEN, None), (EvalProtocol.MULTI_REF, 8.0),
                              (EvalProtocol.SINGLE, None)):
        plan = build_plan(dataset.dialogues, PlanOptions(protocol=protocol,
                                                         context_max_len=context))
        units = plan_units(plan, dataset)
        assert sorted(s.event_id for u in units for s in u.samples) == \
            sorted(s.event_id for s in plan.samples)
        assert len({u.key for u in units}) == len(units)
        if protocol is EvalProtocol.SINGLE:
            assert all(len(u.samples) == 1 for u in units)
        else:
            passes = [p for m in plan.groups().values() for p in split_passes(m)]
            assert [list(u.samples) for u in units] == passes
            assert any(len(u.samples) > 1 for u in units)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A two-worker LocalCluster (processes, loopback, one thread each) shared by the module."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.CRITICAL) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize(("protocol", "extra"), [("multi-gen", []),
                                                 ("multi-gen", ["--batch-size", "2"]),
                                                 ("multi-ref", ["--context-max-len", "8"]),
                                                 ("single", [])])
def test_dask_run_is_byte_identical_to_a_local_run(sample_voiced: Path, tmp_path: Path,
                                                   scheduler: str, protocol: str,
                                                   extra: list[str]) -> None:
    args = [*RUN, "--dataset", str(sample_voiced), "--protocol", protocol, *extra]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    assert main([*args, "--out", str(tmp_path / "dask"), "--executor", "dask",
                 "--scheduler", scheduler]) == 0
    local, dask = run_files(tmp_path / "local"), run_files(tmp_path / "dask")
    assert any(name.endswith(".wav") for name in local)
    assert local == dask


def test_batched_dask_run_equals_an_unbatched_local_run(sample_voiced: Path, tmp_path: Path,
                                                         scheduler: str) -> None:
    args = [*RUN, "--dataset", str(sample_voiced), "--protocol", "multi-gen"]
    assert main([*args, "--out", str(tmp_path / "local"), "--batch-size", "1"]) == 0
    assert main([*args, "--out", str(tmp_path / "dask"), "--batch-size", "3", "--executor",
                 "dask", "--scheduler", scheduler]) == 0
    local, dask = run_files(tmp_path / "local"), run_files(tmp_path / "dask")
    configs = [json.loads(files.pop("config.json")) for files in (local, dask)]
    assert [c.pop("batch_size") for c in configs] == [1, 3] and configs[0] == configs[1]
    assert local == dask


class KillOnce(ScriptedSystem):
    """``scripted`` that SIGKILLs its own process at its second session in that process, once
    per run (the marker file ``$DUPLEXEVAL_TEST_KILL_MARKER``, which lists the finished records
    of ``$DUPLEXEVAL_TEST_KILL_RUN`` and their files' mtimes at that moment)."""

    name = "killonce"
    opened = 0

    def open(self, spec: SessionSpec) -> Session:
        marker = os.environ.get("DUPLEXEVAL_TEST_KILL_MARKER")
        KillOnce.opened += 1
        if marker and KillOnce.opened == 2 and not Path(marker).exists():
            Path(marker).write_text(json.dumps(_finished_files(
                Path(os.environ["DUPLEXEVAL_TEST_KILL_RUN"]))))
            os.kill(os.getpid(), signal.SIGKILL)
        return super().open(spec)


def _finished_files(run: Path) -> dict[str, int]:
    found: dict[str, int] = {}
    for record in run.glob("samples/*/*.json"):
        data: dict[str, Any] = json.loads(record.read_text())
        if data["status"] == "ok":
            for path in (record, run / data["output_audio_path"]):
                found[str(path)] = path.stat().st_mtime_ns
    return found


def test_a_worker_killed_mid_run_loses_no_finished_sample(sample_voiced: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    args = ["run", "--system", "test_dask_executor:KillOnce", "--system-arg", "jitter=0.1",
            "--dataset", str(sample_voiced), "--protocol", "multi-gen"]
    assert main([*args, "--out", str(tmp_path / "local")]) == 0
    marker, out = tmp_path / "killed.json", tmp_path / "dask"
    monkeypatch.setenv("DUPLEXEVAL_TEST_KILL_MARKER", str(marker))
    monkeypatch.setenv("DUPLEXEVAL_TEST_KILL_RUN", str(out))
    # 4 units (one pass per dialogue and user channel) on 2 workers: some worker opens twice
    assert main([*args, "--out", str(out), "--executor", "dask", "--workers", "2"]) == 0
    before = json.loads(marker.read_text())  # the kill happened, after a finished unit
    assert before
    # what was finished when the worker died was kept, not written again
    assert {p: Path(p).stat().st_mtime_ns for p in before} == before
    assert run_files(out) == run_files(tmp_path / "local")
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == len(list(out.glob("samples/*/*.json")))


class ChatCrash(ScriptedSystem):
    """``scripted`` that fails on the chat dialogue: by raising, or, with
    ``$DUPLEXEVAL_TEST_KILL_ALWAYS`` set, by SIGKILLing its process every time."""

    name = "chatcrash"

    def open(self, spec: SessionSpec) -> Session:
        if spec.dialogue is not None and spec.dialogue.id.startswith("sample_chat"):
            if os.environ.get("DUPLEXEVAL_TEST_KILL_ALWAYS"):
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("model crashed on this dialogue")
        return super().open(spec)


def test_failed_samples_are_recorded_by_the_workers(sample_voiced: Path, tmp_path: Path,
                                                     scheduler: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--system", "test_dask_executor:ChatCrash", "--dataset", str(sample_voiced),
            "--protocol", "single", "--executor", "dask", "--scheduler", scheduler]
    assert main([*args, "--out", str(tmp_path / "run")]) == 1
    summary = json.loads((tmp_path / "run" / "run_summary.json").read_text())
    assert summary["failed"] > 0 and summary["samples"] > 0
    records = [json.loads(p.read_text()) for p in (tmp_path / "run").glob("samples/*/*.json")]
    assert {r["status"] for r in records if "chat" in r["sample"]["sample_id"]} == {"failed"}
    assert all("model crashed" in r["error"] for r in records if r["status"] == "failed")
    assert main([*args, "--out", str(tmp_path / "ff"), "--fail-fast"]) == 2
    assert "model crashed" in capsys.readouterr().err


def test_a_unit_that_keeps_killing_its_workers_is_recorded_failed(
        sample_voiced: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dask

    monkeypatch.setenv("DUPLEXEVAL_TEST_KILL_ALWAYS", "1")
    out = tmp_path / "run"
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        assert main(["run", "--system", "test_dask_executor:ChatCrash", "--dataset",
                     str(sample_voiced), "--protocol", "multi-gen", "--out", str(out),
                     "--executor", "dask", "--workers", "2"]) == 1
    records = [json.loads(p.read_text()) for p in out.glob("samples/*/*.json")]
    failed = [r for r in records if r["status"] == "failed"]
    assert failed and all("chat" in r["sample"]["sample_id"] for r in failed)
    assert all(r["error"].startswith("KilledWorker: ") for r in failed)
    assert any(r["status"] == "ok" for r in records)  # the QA dialogue's units ran
    assert not list(out.rglob(".*.tmp-*"))


def test_units_ask_for_worker_resources(sample_voiced: Path, tmp_path: Path, scheduler: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    args = [*RUN, "--dataset", str(sample_voiced), "--protocol", "single", "--channels", "0",
            "--executor", "dask", "--unit-resources", "GPU=1"]
    # the shared cluster's workers declare no GPU: refused at once, nothing written
    assert main([*args, "--out", str(tmp_path / "none"), "--scheduler", scheduler]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "declares the resources GPU=1" in err
    assert not (tmp_path / "none").exists()
    # a local cluster's workers declare the units' resources
    assert main([*args, "--out", str(tmp_path / "gpu"), "--workers", "1"]) == 0
    assert main([*RUN, "--dataset", str(sample_voiced), "--protocol", "single", "--channels",
                 "0", "--out", str(tmp_path / "local")]) == 0
    assert run_files(tmp_path / "gpu") == run_files(tmp_path / "local")


def test_an_unreachable_scheduler_is_one_line_and_exit_2(sample_voiced: Path,
                                                         tmp_path: Path) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "duplexeval.cli", *RUN, "--dataset", str(sample_voiced),
         "--protocol", "multi-gen", "--out", str(tmp_path / "run"), "--executor", "dask",
         "--scheduler", "tcp://127.0.0.1:1"], capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "cannot reach the Dask scheduler at " \
        "tcp://127.0.0.1:1" in proc.stderr
    assert elapsed < 10
    assert not (tmp_path / "run").exists()


def test_a_port_that_is_no_scheduler_is_one_line_and_exit_2(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer() -> None:  # an HTTP server's refusal, then hang up
        for _ in range(2):  # the TCP probe, then the Dask handshake
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    started = time.monotonic()
    code = main([*RUN, "--dataset", str(sample_voiced), "--protocol", "multi-gen", "--out",
                 str(tmp_path / "run"), "--executor", "dask", "--scheduler",
                 f"tcp://127.0.0.1:{port}"])
    server.close()
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: " in err
    assert time.monotonic() - started < 10 and not (tmp_path / "run").exists()


@pytest.mark.parametrize("extra", [["--scheduler", "tcp://127.0.0.1:1"], ["--workers", "2"],
                                   ["--unit-resources", "GPU=1"]])
def test_dask_options_need_the_dask_executor(extra: list[str], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*RUN, "--dataset", str(tmp_path), "--protocol", "single", *extra]) == 2
    assert "needs --executor dask" in capsys.readouterr().err


def test_a_system_class_workers_cannot_import_is_refused() -> None:
    class Local(ScriptedSystem):
        name = "local"

    with pytest.raises(Exception, match="cannot be imported by name"):
        SystemRef.of(Local())
    assert SystemRef.of(ScriptedSystem(jitter="0.1")).load().args == {"jitter": "0.1"}
