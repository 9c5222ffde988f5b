"""Batched continuations (capability ``batch``): the forks of a pass stepped together as batch
rows give byte-identical outputs to one fork at a time, the driver really steps rows together,
a failing row fails its sample alone, and ``--batch-size`` is an option recorded in the run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import Dataset, Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan, split_passes
from duplexeval.runs._driver import DialogueAudio, SampleOutput, run_group
from duplexeval.systems import (
    BatchSession,
    Session,
    SessionSpec,
    StepOutput,
    SystemFailure,
)
from duplexeval.systems.builtin._scripted import ScriptedSystem

ARGS = {"jitter": "0.15"}  # seeds matter: a row that took another row's seed would differ


@pytest.fixture(scope="module")
def voiced(sample_voiced: Path) -> Dataset:
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    return dataset


def run_plan(system: ScriptedSystem, dataset: Dataset, protocol: EvalProtocol, batch_size: int,
             context: float | None = None, errors: list[str] | None = None,
             ) -> tuple[dict[str, SampleOutput], int]:
    """Every sample of the plan through :func:`run_group`; outputs by event id, frames."""
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=protocol, context_max_len=context))
    outputs, frames = {}, 0
    for (did, _), members in plan.groups().items():
        d = dataset.get(did)
        x, sr = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
        on_error = None if errors is None else (lambda s, e: errors.append(s.event_id))
        outs, n = run_group(system, d, DialogueAudio(x, sr), list(members), protocol, 3,
                            on_error=on_error, batch_size=batch_size)
        frames += n
        outputs.update({o.sample.event_id: o for o in outs})
    return outputs, frames


def assert_same(a: SampleOutput, b: SampleOutput) -> None:
    assert a.system.tobytes() == b.system.tobytes() and a.user.tobytes() == b.user.tobytes()
    for x, y in ((a.context_system, b.context_system), (a.context_user, b.context_user)):
        assert (x is None and y is None) or x.tobytes() == y.tobytes()
    assert (a.frames, a.seed, a.start_time) == (b.frames, b.seed, b.start_time)
    assert json.dumps(a.trace, sort_keys=True) == json.dumps(b.trace, sort_keys=True)


def test_scripted_rows_equal_single_forks_frame_by_frame() -> None:
    system = ScriptedSystem(**ARGS)
    session = system.open(SessionSpec(sample_rate=24000, seed=1))
    rng = np.random.default_rng(0)
    speech = lambda: rng.normal(0, 0.1, 480).astype(np.float32)  # noqa: E731
    silence = np.zeros(480, np.float32)
    states = []
    for k in range(60):
        session.step(speech() if k % 25 < 12 else silence)
        if k in (10, 30, 59):
            states.append(session.snapshot())
    before = json.dumps(session.snapshot(), sort_keys=True, default=str)
    seeds = [11, 12, 13]
    batch = session.fork_batch(states, seeds)
    singles = []
    for state, seed in zip(states, seeds, strict=True):
        single = system.open(SessionSpec(sample_rate=24000, seed=0))
        single.restore(state)
        single.reseed(seed)
        singles.append(single)
    assert batch.size == 3
    for t in range(80):
        users = [speech() if t < 5 else silence, silence, None if t >= 40 else silence]
        outs = batch.step(users)
        for row, (user, out) in enumerate(zip(users, outs, strict=True)):
            if user is None:
                assert out is None
                continue
            assert out is not None
            assert out.audio.tobytes() == singles[row].step(user).audio.tobytes()
    assert [batch.trace(i) for i in range(3)] == [s.trace() for s in singles]
    assert batch.trace(2)["frames"] == states[2]["frame"] + 40  # an ended row stands still
    assert json.dumps(session.snapshot(), sort_keys=True, default=str) == before


@pytest.mark.parametrize(("protocol", "context"), [(EvalProtocol.MULTI_GEN, None),
                                                   (EvalProtocol.MULTI_REF, None),
                                                   (EvalProtocol.MULTI_REF, 8.0)])
def test_batched_outputs_are_byte_identical_to_one_fork_at_a_time(
        voiced: Dataset, protocol: EvalProtocol, context: float | None) -> None:
    system = ScriptedSystem(**ARGS)
    assert system.capabilities.batch and system.capabilities.snapshot
    single, frames_single = run_plan(system, voiced, protocol, 1, context)
    for size in (3, 8):
        batched, frames_batched = run_plan(system, voiced, protocol, size, context)
        assert sorted(batched) == sorted(single) and len(single) > 10
        for event_id, out in single.items():
            assert_same(batched[event_id], out)
        assert frames_batched == frames_single  # counted as the single path counts them


class Probe(ScriptedSystem):
    """``scripted`` whose batches log how many rows each step carried, and which rows fail:
    the row of a sample whose seed is in ``Probe.doomed`` fails on its fifth step."""

    batches: ClassVar[list[list[int]]] = []
    """Per batch forked: the number of rows each of its steps carried."""
    doomed: ClassVar[set[int]] = set()

    def open(self, spec: SessionSpec) -> Session:
        inner = super().open(spec)

        class Forking(type(inner)):  # type: ignore[misc]
            def fork_batch(self, states: Sequence[Any], seeds: Sequence[int]) -> BatchSession:
                return ProbeBatch(super().fork_batch(states, seeds), list(seeds))

        inner.__class__ = Forking
        return inner


def crash(user: np.ndarray, force: object = None) -> StepOutput:
    raise SystemFailure("model crashed on this row")


class ProbeBatch(BatchSession):
    def __init__(self, inner: BatchSession, seeds: list[int]) -> None:
        self.inner, self.seeds, self.t = inner, seeds, 0
        Probe.batches.append([])

    @property
    def size(self) -> int:
        return self.inner.size

    def step(self, users: Sequence[np.ndarray | None]) -> list[StepOutput | None]:
        Probe.batches[-1].append(sum(u is not None for u in users))
        self.t += 1
        if self.t == 5:  # the doomed rows' model crashes (PlainStateBatch rows are sessions)
            for i, seed in enumerate(self.seeds):
                if seed in Probe.doomed:
                    self.inner.rows[i].step = crash  # type: ignore[attr-defined]
        return self.inner.step(users)

    def trace(self, row: int) -> dict[str, Any]:
        return self.inner.trace(row)


def test_the_driver_steps_the_rows_of_a_batch_together(voiced: Dataset) -> None:
    plan = build_plan(voiced.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    passes = [p for m in plan.groups().values() for p in split_passes(m)]
    Probe.batches, Probe.doomed = [], set()
    run_plan(Probe(**ARGS), voiced, EvalProtocol.MULTI_GEN, 4)
    # each pass's samples in batches of 4 and a last one of the rest
    expected = [min(4, len(p) - first) for p in passes for first in range(0, len(p), 4)]
    assert [b[0] for b in Probe.batches] == expected and len(expected) > len(passes)
    for steps in Probe.batches:  # rows drop out as they end, and the longest runs to the end
        assert steps == sorted(steps, reverse=True) and steps[-1] >= 1
    Probe.batches = []
    run_plan(Probe(**ARGS), voiced, EvalProtocol.MULTI_GEN, 1)
    assert Probe.batches == []  # batch size 1: the single path, no batch is forked


def test_a_failing_row_fails_its_sample_alone(voiced: Dataset) -> None:
    reference, _ = run_plan(ScriptedSystem(**ARGS), voiced, EvalProtocol.MULTI_GEN, 1)
    victim = sorted(reference)[3]
    Probe.batches, Probe.doomed = [], {reference[victim].seed}
    errors: list[str] = []
    outputs, _ = run_plan(Probe(**ARGS), voiced, EvalProtocol.MULTI_GEN, 8, errors=errors)
    assert errors == [victim]
    assert sorted(outputs) == sorted(set(reference) - {victim})
    for event_id, out in outputs.items():
        assert_same(out, reference[event_id])
    # without on_error the failure is raised
    with pytest.raises(SystemFailure, match="model crashed on this row"):
        run_plan(Probe(**ARGS), voiced, EvalProtocol.MULTI_GEN, 8)


def run_files(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name not in (".lock", "run_summary.json", "config.json"):
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def test_batch_size_option_is_recorded_and_changes_no_output(
        voiced: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--system", "scripted", "--system-arg", "jitter=0.15", "--dataset",
            str(voiced.root), "--protocol", "multi-gen"]
    assert main([*args, "--out", str(tmp_path / "b1"), "--batch-size", "1"]) == 0
    assert main([*args, "--out", str(tmp_path / "b8")]) == 0
    configs = [json.loads((tmp_path / n / "config.json").read_text()) for n in ("b1", "b8")]
    assert [c["batch_size"] for c in configs] == [1, 8]
    assert configs[0]["config_hash"] == configs[1]["config_hash"]
    summaries = [json.loads((tmp_path / n / "run_summary.json").read_text())
                 for n in ("b1", "b8")]
    assert summaries[0]["frames_stepped"] == summaries[1]["frames_stepped"]
    assert run_files(tmp_path / "b1") == run_files(tmp_path / "b8")
    # a resume with another batch size is the same run
    assert main([*args, "--out", str(tmp_path / "b1"), "--batch-size", "3"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:  # argparse's one-line usage error
        main([*args, "--out", str(tmp_path / "b0"), "--batch-size", "0"])
    assert exit_info.value.code == 2
    assert "--batch-size: must be at least 1, got 0" in capsys.readouterr().err
