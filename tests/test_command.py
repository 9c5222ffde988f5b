"""The ``command`` system: an offline inference command per sample, on the sample's whole input
(the window, or context plus window), with its declared rate and channel layout; bad outputs
fail their sample with a reason; resume retries them."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval._cache import cache_root
from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.systems import SessionSpec, SystemFailure, load_system

DELAY = 0.5
"""Seconds the fake model delays its echo of the user."""

MODEL = '''
import json, os, sys
import numpy as np, soundfile as sf
src, dst = sys.argv[1], sys.argv[2]
mode = os.environ.get("FAKE_MODEL_MODE", "echo")
x, rate = sf.read(src, dtype="float32", always_2d=True)
log = os.environ.get("FAKE_MODEL_LOG")
if log:
    nz = np.flatnonzero(x[:, 1]) if x.shape[1] > 1 else []
    with open(log, "a") as f:
        f.write(json.dumps({"samples": len(x), "rate": rate, "channels": x.shape[1],
                            "ch1_last": int(nz[-1]) if len(nz) else -1,
                            "input": src}) + "\\n")
if mode == "flaky":
    count = os.environ["FAKE_MODEL_COUNT"]
    n = int(open(count).read()) if os.path.exists(count) else 0
    open(count, "w").write(str(n + 1))
    mode = ["echo", "fail", "missing"][n % 3]
if mode == "fail":
    print("CUDA out of memory (pretend)", file=sys.stderr)
    sys.exit(3)
if mode == "missing":
    sys.exit(0)
if mode == "empty":
    sf.write(dst, np.zeros(0, np.float32), rate)
    sys.exit(0)
delay = int(float(sys.argv[3]) * rate)
y = np.concatenate([np.zeros(delay, np.float32), x[:, 0]])
if mode == "long":
    y = np.concatenate([y, np.full(rate, 0.5, np.float32)])
sf.write(dst, y, rate if mode != "rate" else 22050, subtype="FLOAT")
'''


@pytest.fixture()
def model(tmp_path: Path) -> str:
    script = tmp_path / "infer.py"
    script.write_text(MODEL)
    return f"{sys.executable} {script} {{input_wav}} {{output_wav}} {DELAY}"


def run(dataset: Path, out: Path, cmd: str, protocol: str = "single", *extra: str) -> int:
    return main(["run", "--system", "command", "--system-arg", f"cmd={cmd}",
                 "--dataset", str(dataset), "--protocol", protocol, "--window", "2",
                 "--out", str(out), *extra])


def test_a_run_echoes_each_window_through_the_command(sample_voiced: Path, tmp_path: Path,
                                                      model: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    assert run(sample_voiced, tmp_path / "run", model) == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls and all(c["rate"] == 16000 and c["channels"] == 1 for c in calls)
    # the command's files live in a scratch folder of the cache, gone once the sample is done
    scratch = cache_root() / "scratch"
    assert all(Path(c["input"]).parent.parent == scratch for c in calls)
    assert not any(Path(c["input"]).parent.exists() for c in calls)
    assert list(system_temp.iterdir()) == []
    wavs = sorted((tmp_path / "run" / "samples").rglob("*.wav"))
    assert len(wavs) == len(calls)
    for path in wavs:
        x, rate = sf.read(str(path), dtype="float32")
        d = round(DELAY * rate)
        # the system channel is the user channel half a second later, cut to the input length
        assert np.allclose(x[d:, 1], x[:-d, 0], atol=1e-4)
        assert np.all(x[:d, 1] == 0)
    record = json.loads(next((tmp_path / "run" / "samples").rglob("*.json")).read_text())
    assert record["trace"]["command"]["trimmed"] == round(DELAY * 16000)
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["system"]["capabilities"]["clock"] == "file"


def test_multi_turn_inputs_are_context_plus_window_and_forcing_is_a_channel(
        sample_voiced: Path, tmp_path: Path, model: str,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ds, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    log = tmp_path / "gen.jsonl"
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    assert run(sample_voiced, tmp_path / "gen", model, "multi-gen") == 0
    plan = build_plan(ds.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN, window=2.0))
    order = [s for members in plan.groups().values() for s in members]
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    frame = 16000 // 50
    for s, call in zip(order, calls, strict=True):
        wanted = (s.input_end - s.context_start) * 16000
        assert wanted <= call["samples"] < wanted + frame
    assert any(s.input_start - s.context_start > 5 for s in order)
    log = tmp_path / "ref.jsonl"
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    assert run(sample_voiced, tmp_path / "ref", model, "multi-ref", "--system-arg",
               "channels=user+system") == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    plan = build_plan(ds.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_REF, window=2.0))
    order = [s for members in plan.groups().values() for s in members]
    for s, call in zip(order, calls, strict=True):
        assert call["channels"] == 2
        assert call["ch1_last"] < (s.fork_time - s.context_start) * 16000 + 1
    assert max(c["ch1_last"] for c in calls) > 0  # the reference system is in channel 1
    # mono input: no forcing; refused in one line before anything is written
    assert run(sample_voiced, tmp_path / "no", model, "multi-ref") == 2
    assert "multi-ref needs teacher forcing" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize(("mode", "reason"), [
    ("fail", "exited with status 3: CUDA out of memory"),
    ("missing", "wrote no output file"),
    ("empty", "is empty"),
    ("rate", "at 22050 Hz, expected 16000 Hz"),
])
def test_bad_outputs_fail_with_a_reason(model: str, mode: str, reason: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_MODE", mode)
    session = load_system("command", {"cmd": model}).open(SessionSpec(16000, 0))
    with pytest.raises(SystemFailure, match=reason):
        session.load_input(np.zeros(16000, np.float32))


def test_rates_lengths_and_arguments(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_MODE", "rate")  # the model writes 22.05 kHz: declared
    session = load_system("command", {"cmd": model, "out_rate": "22050"}).open(
        SessionSpec(16000, 0))
    session.load_input(np.zeros(8000, np.float32))
    assert len(session.step(np.zeros(320, np.float32)).audio) == 320
    monkeypatch.setenv("FAKE_MODEL_MODE", "long")  # longer than its input: trimmed
    session = load_system("command", {"cmd": model}).open(SessionSpec(16000, 0))
    session.load_input(np.zeros(16000, np.float32))
    assert session.trace()["command"]["trimmed"] == 16000 + round(DELAY * 16000)
    with pytest.raises(Exception, match="input_wav"):
        load_system("command", {"cmd": "python infer.py --out {output_wav}"})
    with pytest.raises(SystemFailure, match="command not found"):
        load_system("command", {"cmd": "no-such-program-xyz {input_wav} {output_wav}"}).open(
            SessionSpec(16000, 0)).load_input(np.zeros(160, np.float32))


def test_failed_samples_are_recorded_and_retried_on_resume(
        sample_voiced: Path, tmp_path: Path, model: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_MODE", "flaky")
    monkeypatch.setenv("FAKE_MODEL_COUNT", str(tmp_path / "count"))
    monkeypatch.setenv("MY_SERVICE_API_KEY", "sentinel-key-0123456789")
    out = tmp_path / "flaky"
    assert run(sample_voiced, out, model) == 1
    errors = [json.loads(p.read_text()).get("error") for p in (out / "samples").rglob("*.json")]
    failed = [e for e in errors if e]
    assert failed and len(failed) < len(errors)
    assert any("CUDA out of memory" in e for e in failed)
    assert any("no output file" in e for e in failed)
    monkeypatch.setenv("FAKE_MODEL_MODE", "echo")
    assert run(sample_voiced, out, model) == 0
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] == 0 and summary["samples"] == len(errors)
    for path in out.rglob("*"):
        assert not path.is_file() or b"sentinel-key-0123456789" not in path.read_bytes()
