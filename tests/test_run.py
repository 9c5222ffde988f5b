"""Running systems: shared-prefix vs replay bit-identity, frame counts, order independence,
muting, run directories, resume after SIGKILL, failures, third-party systems."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from conftest import make_dataset
from duplexeval.cli import main
from duplexeval.data import Dataset, Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs._driver import DialogueAudio, run_group
from duplexeval.systems import (
    Capabilities,
    Forced,
    Session,
    SessionSpec,
    StepOutput,
    System,
    load_system,
)
from frame_oracle import frames_needed


@pytest.fixture(scope="module")
def chat_voiced(sample_voiced: Path) -> Dataset:
    """The bundled sample-en dialogues (QA and chat) voiced with the clip bank: 22 samples under
    the context protocols, every event kind (TURN_SHIFT, TURN_HOLD, BC, BARGE_IN)."""
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    return dataset


def run_all(system: System, dataset: Dataset, protocol: EvalProtocol, snapshot: bool,
            only: set[str] | None = None, seed: int = 7):
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=protocol))
    outputs, frames, passes = {}, 0, 0
    for (did, _), members in plan.groups().items():
        members = [m for m in members if only is None or m.event_id in only]
        if not members:
            continue
        d = dataset.get(did)
        x, sr = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
        outs, n = run_group(system, d, DialogueAudio(x, sr), members, protocol, seed,
                            use_snapshot=snapshot)
        frames += n
        passes += 1
        outputs.update({o.sample.event_id: o for o in outs})
    return plan, outputs, frames, passes


@pytest.mark.parametrize("protocol", [EvalProtocol.MULTI_GEN, EvalProtocol.MULTI_REF])
def test_shared_prefix_is_bit_identical_to_replay(chat_voiced: Dataset,
                                                  protocol: EvalProtocol) -> None:
    system = load_system("scripted", {"jitter": "0.1"})
    plan, shared, frames_shared, passes = run_all(system, chat_voiced, protocol, True)
    _, replay, frames_replay, _ = run_all(system, chat_voiced, protocol, False)
    assert set(shared) == set(replay) == {s.event_id for s in plan.samples}
    for event_id, a in shared.items():
        b = replay[event_id]
        assert np.array_equal(a.system, b.system) and np.array_equal(a.user, b.user)
        assert np.array_equal(a.context_system, b.context_system)
    # frames stepped: exactly the grid count of the plan, and within one frame per pass of the
    # plan's seconds (a pass: a group's prefix, or one sample's continuation)
    caps = system.capabilities
    groups = [list(m) for m in plan.groups().values()]
    rate, size = caps.sample_rate, caps.frame_size
    assert frames_shared == sum(frames_needed(m, protocol, rate, size, True) for m in groups)
    assert frames_replay == sum(frames_needed(m, protocol, rate, size, False) for m in groups)
    frame = caps.frame_seconds
    n = len(plan.samples)
    assert abs(frames_shared * frame - plan.model_seconds_shared_prefix()) <= frame * (passes + n)
    assert abs(frames_replay * frame - plan.model_seconds_per_event()) <= frame * n
    if protocol is EvalProtocol.MULTI_GEN:
        assert frames_replay / frames_shared >= 1.8  # 620.1 vs 338.6 model-s on sample-en


def test_sample_output_does_not_depend_on_other_samples(chat_voiced: Dataset) -> None:
    system = load_system("scripted", {"jitter": "0.2"})
    _, everything, _, _ = run_all(system, chat_voiced, EvalProtocol.MULTI_GEN, True)
    picked = sorted(everything)[1::4]
    _, alone, _, _ = run_all(system, chat_voiced, EvalProtocol.MULTI_GEN, True, only=set(picked))
    for event_id in picked:
        assert np.array_equal(alone[event_id].system, everything[event_id].system)
    _, other_seed, _, _ = run_all(system, chat_voiced, EvalProtocol.MULTI_GEN, True,
                                  only=set(picked), seed=8)
    assert any(not np.array_equal(other_seed[e].system, everything[e].system) for e in picked)


class Recorder(System):
    """Test system: silent, remembers every frame it heard (plain-data snapshot)."""

    name = "recorder"
    capabilities = Capabilities(sample_rate=16000, frame_size=320, snapshot=True,
                                teacher_forcing_audio=True)

    def open(self, spec: SessionSpec) -> Session:
        return _RecorderSession()


class _RecorderSession(Session):
    def __init__(self) -> None:
        self.heard: list[np.ndarray] = []

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        self.heard.append(user.copy())
        return StepOutput(np.zeros_like(user))

    def snapshot(self) -> Any:
        return list(self.heard)

    def restore(self, state: Any) -> None:
        self.heard = list(state)

    def trace(self) -> dict[str, Any]:
        return {"heard": np.concatenate(self.heard).tolist()}


class TextRecorder(System):
    """Test system taking text: remembers the forced audio and text of every frame."""

    name = "text-recorder"
    capabilities = Capabilities(sample_rate=16000, frame_size=320, snapshot=True,
                                teacher_forcing_audio=True, teacher_forcing_text=True)

    def open(self, spec: SessionSpec) -> Session:
        return _TextRecorderSession()


class _TextRecorderSession(_RecorderSession):
    def __init__(self) -> None:
        super().__init__()
        self.forced: list[tuple[np.ndarray, str] | None] = []

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        self.forced.append(None if force is None else (force.audio.copy(), force.text))
        return super().step(user, force)

    def snapshot(self) -> Any:
        return list(self.heard), list(self.forced)

    def restore(self, state: Any) -> None:
        self.heard, self.forced = list(state[0]), list(state[1])

    def trace(self) -> dict[str, Any]:
        return {"forced": self.forced}


def test_multi_ref_forces_reference_audio_and_words_until_the_fork(tmp_path: Path) -> None:
    """Reference words reach the system at the frame holding their start (20 ms frames):

    ch0  hello there             what
         ██████████           ████████
    ch1            ██████████           ██████████
                   hi friend            this
         0        2.5       4.5  5.0   7.0 7.4    9.5 s
    """
    words = [(0, 0.0, 1.0, "hello"), (0, 1.1, 2.5, "there"), (1, 2.53, 3.0, "hi"),
             (1, 3.1, 4.5, "friend"), (0, 5.0, 7.0, "what"), (1, 7.4, 9.5, "this")]
    events = {"0": [("TURN", 0.0, 2.5), ("TURN", 5.0, 7.0), ("TURN_SHIFT", 4.5, 5.0)],
              "1": [("TURN", 2.53, 4.5), ("TURN_SHIFT", 2.5, 2.53), ("TURN", 7.4, 9.5),
                    ("TURN_SHIFT", 7.0, 7.4)]}
    root = make_dataset(tmp_path / "d", events, words, audio_seconds=20.0)
    rng = np.random.default_rng(1)
    stereo = rng.uniform(-0.5, 0.5, (20 * 16000, 2)).astype(np.float32)
    sf.write(str(root / "audio" / "d1.wav"), stereo, 16000, subtype="FLOAT")
    dataset, _ = load_dataset(root, audio=Need.REQUIRE)
    plan, outputs, _, _ = run_all(TextRecorder(), dataset, EvalProtocol.MULTI_REF, True)
    checked: list[int] = []
    for s in plan.samples:
        forced = outputs[s.event_id].trace["forced"]
        t0 = min(x.context_start for x in plan.samples if x.user_channel == s.user_channel)
        fork = math.floor((s.fork_time - t0) * 50 + 1e-9)
        assert all(f is not None for f in forced[:fork]) and all(f is None for f in forced[fork:])
        ref = stereo[round(t0 * 16000):, s.system_channel]
        heard = np.concatenate([f[0] for f in forced[:fork]])
        assert np.array_equal(heard, ref[:len(heard)])
        expect = {math.floor((w0 - t0) * 50 + 1e-9): w for c, w0, _, w in words
                  if c == s.system_channel and t0 <= w0 and w0 - t0 < fork / 50}
        assert {k: f[1] for k, f in enumerate(forced[:fork]) if f[1]} == expect
        checked.append(len(expect))
    assert sorted(checked) == [0, 2, 2]  # words before the 2.5 s, 4.5 s and 7.0 s events


@pytest.mark.parametrize("protocol", list(EvalProtocol))
def test_user_input_is_muted_per_event_kind(chat_voiced: Dataset, protocol: EvalProtocol) -> None:
    plan, outputs, _, _ = run_all(Recorder(), chat_voiced, protocol, True)
    kinds = set()
    for s in plan.samples:
        out = outputs[s.event_id]
        heard = np.asarray(out.trace["heard"], dtype=np.float32)
        t0 = s.input_start if protocol is EvalProtocol.SINGLE else s.context_start
        mute = round((s.mute_start - t0) * 16000)
        assert not heard[mute:].any(), s.event_id  # silent from the mute point on
        # before it the system heard the user channel exactly
        d = chat_voiced.get(s.sample_id)
        x, _ = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
        a = round(t0 * 16000)
        expect = x[a:a + mute, s.user_channel]
        assert np.array_equal(heard[:len(expect)], expect)
        # the saved wav: ch0 is the input as fed over [input_start, input_end]
        i0 = round((s.mute_start - s.input_start) * 16000)
        assert not out.user[i0:].any()
        kinds.add(s.event_type.value)
    expected = {"TURN_SHIFT", "TURN_HOLD"} | ({"BC", "BARGE_IN"} if protocol.uses_context
                                              else set())
    assert kinds == expected


def test_run_directory_config_resume_and_refusal(chat_voiced: Dataset, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["run", "--system", "scripted", "--dataset", str(chat_voiced.root), "--protocol",
            "multi-gen", "--out", str(out), "--seed", "3"]
    n = len(build_plan(chat_voiced.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN)).samples)
    assert n == 22
    assert main(args) == 0
    bar = capsys.readouterr().err  # the progress bar: samples done, rate and ETA
    assert "scripted multi-gen" in bar and f"{n}/{n}" in bar and "sample/s" in bar and "<" in bar
    config = json.loads((out / "config.json").read_text())
    assert config["system"]["name"] == "scripted" and config["seed"] == 3
    assert len(config["config_hash"]) == 64 and config["dataset"]["content_hash"]
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["samples"] == n and summary["failed"] == 0
    meta = [json.loads(line) for line in (out / "metadata.jsonl").read_text().splitlines()]
    assert len(meta) == n and {"event_id", "output_audio_path", "context_audio_path",
                                "trigger_time", "use_context"} <= set(meta[0])
    wav, sr = sf.read(str(out / meta[0]["output_audio_path"]))
    assert wav.shape[1] == 2 and sr == 16000
    before = {p: p.read_bytes() for p in out.glob("samples/*/*.wav")}
    # re-running skips every finished sample
    assert main(args) == 0
    assert f"resumed past {n}" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in out.glob("samples/*/*.wav")} == before
    # another configuration into the same directory is refused
    assert main([*args[:-2], "--seed", "4"]) == 2
    assert "different configuration (changed: seed)" in capsys.readouterr().err


def test_resume_after_sigkill_gives_the_same_outputs(chat_voiced: Dataset,
                                                     tmp_path: Path) -> None:
    base = [sys.executable, "-m", "duplexeval.cli", "run", "--system", "scripted",
            "--system-arg", "jitter=0.1", "--dataset", str(chat_voiced.root),
            "--protocol", "multi-gen", "--seed", "5"]
    clean = tmp_path / "clean"
    subprocess.run([*base, "--out", str(clean)], check=True, capture_output=True)
    killed = tmp_path / "killed"
    n = len(list(clean.glob("samples/*/*.json")))
    rng = np.random.default_rng(0)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    def finished() -> int:
        return len(list(killed.glob("samples/*/*.json")))

    # killed three times mid-run: once the folder holds `target` finished samples, within the
    # next 50 ms (samples are saved a group at a time, so this lands inside a later group's
    # work or inside a save)
    for target in (1, n // 4, n // 2):
        proc = subprocess.Popen([*base, "--out", str(killed)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 120
        while finished() < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(float(rng.uniform(0.0, 0.05)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = finished()
    assert 0 < before < n  # the kills interrupted the run
    last = subprocess.run([*base, "--out", str(killed)], check=True, capture_output=True,
                          text=True)
    assert f"resumed past {before}" in last.stdout
    ours = sorted(p.relative_to(killed) for p in killed.glob("samples/*/*.wav"))
    assert ours == sorted(p.relative_to(clean) for p in clean.glob("samples/*/*.wav"))
    for rel in ours:
        assert (killed / rel).read_bytes() == (clean / rel).read_bytes()
    assert not list(killed.rglob(".*.tmp-*"))  # no temporary file left behind
    assert (killed / "metadata.jsonl").read_text() == (clean / "metadata.jsonl").read_text()


class Flaky(Recorder):
    name = "flaky"

    def open(self, spec: SessionSpec) -> Session:
        if spec.dialogue is not None and spec.dialogue.id.startswith("sample_chat"):
            raise RuntimeError("model crashed on this dialogue")
        return super().open(spec)


def test_failures_are_recorded_and_the_run_goes_on(chat_voiced: Dataset, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "flaky"
    code = main(["run", "--system", "test_run:Flaky", "--dataset", str(chat_voiced.root),
                 "--protocol", "single", "--out", str(out)])
    assert code == 1
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["failed"] > 0 and summary["samples"] > 0
    records = [json.loads(p.read_text()) for p in out.glob("samples/sample_chat*/*.json")]
    assert records and all("model crashed" in r["error"] for r in records)
    assert main(["run", "--system", "test_run:Flaky", "--dataset", str(chat_voiced.root),
                 "--protocol", "single", "--out", str(tmp_path / "ff"), "--fail-fast"]) == 2
    assert "model crashed" in capsys.readouterr().err


def test_unknown_system_lists_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--system", "nope", "--dataset", ".", "--protocol", "single"]) == 2
    err = capsys.readouterr().err
    assert "unknown system 'nope'" in err and "scripted" in err and "silence" in err


class UnforcedSilence(System):
    """A silent system that cannot be teacher-forced (for the multi-ref refusal)."""

    name = "unforced"
    version = "1"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.capabilities = Capabilities(sample_rate=16000, frame_size=320, snapshot=True)

    def open(self, spec: SessionSpec) -> Session:
        return load_system("silence", {"sample_rate": "16000"}).open(spec)


def test_multi_ref_without_teacher_forcing_is_refused_before_anything_is_written(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["run", "--system", "test_run:UnforcedSilence", "--dataset", str(sample_voiced),
                 "--protocol", "multi-ref", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].endswith(
        "system 'unforced': multi-ref needs teacher forcing (capability teacher_forcing_audio), "
        "which it does not declare")
    assert not out.exists()
    assert main(["run", "--system", "test_run:UnforcedSilence", "--dataset", str(sample_voiced),
                 "--protocol", "multi-gen", "--out", str(out)]) == 0


class _Killed(BaseException):
    """Stands for a SIGKILL: nothing catches it, so the pass stops where it is."""


class DiesAtFork(System):
    """``scripted`` (snapshots, no batching) that dies when it restores its ``die_at``-th fork:
    a kill late in one long pass."""

    name = "scripted"
    version = "1"

    def __init__(self, die_at: int) -> None:
        super().__init__()
        self.inner = load_system("scripted", {"jitter": "0.1"})
        self.capabilities = Capabilities(**{**self.inner.capabilities.__dict__, "batch": False})
        self.restores = 0
        self.die_at = die_at

    def open(self, spec: SessionSpec) -> Session:
        inner, owner = self.inner.open(spec), self

        class Counting(Session):
            def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
                return inner.step(user, force)

            def snapshot(self) -> Any:
                return inner.snapshot()

            def restore(self, state: Any) -> None:
                owner.restores += 1
                if owner.restores == owner.die_at:
                    raise _Killed
                inner.restore(state)

            def reseed(self, seed: int) -> None:
                inner.reseed(seed)

            def trace(self) -> dict[str, Any]:
                return inner.trace()

        return Counting()


def test_a_kill_late_in_a_pass_keeps_every_fork_finished_before_it(chat_voiced: Dataset,
                                                                   tmp_path: Path) -> None:
    """Each fork's files are written when that fork finishes, not when its pass returns: a
    kill at the last fork of the first pass leaves every earlier fork of it saved, and the
    rerun gives the files of an uninterrupted run::

        pass    ====prefix====|f1|f2|f3| ... |fn X killed
        saved                  s1 s2 s3  ...  (n - 1 samples; before: none, the pass had
                                               not returned)
    """
    from duplexeval.runs import execute_run
    from duplexeval.runs._units import plan_units

    plan = build_plan(chat_voiced, PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    first = plan_units(plan, chat_voiced)[0]
    n = len(first.samples)
    assert n >= 3
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    execute_run(DiesAtFork(die_at=10 ** 9), chat_voiced, plan, clean, seed=5, progress=False)
    with pytest.raises(_Killed):
        execute_run(DiesAtFork(die_at=n), chat_voiced, plan, killed, seed=5, progress=False)
    saved = sorted(killed.glob("samples/*/*.json"))
    assert {p.stem for p in saved} == {s.event_id for s in first.samples[:n - 1]}
    execute_run(DiesAtFork(die_at=10 ** 9), chat_voiced, plan, killed, seed=5, progress=False)
    ours = sorted(p.relative_to(killed) for p in killed.glob("samples/*/*.wav"))
    assert ours == sorted(p.relative_to(clean) for p in clean.glob("samples/*/*.wav"))
    assert all((killed / rel).read_bytes() == (clean / rel).read_bytes() for rel in ours)
