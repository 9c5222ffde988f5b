"""Work units: the pieces a run is cut into, and what running one writes.

A unit keeps a shared prefix together: under the multi-turn protocols it is one continuous pass
(a dialogue, a user channel and a context start, :func:`~duplexeval.plan._samples.split_passes`)
with all its forks; under ``single`` it is one sample.  A unit's outputs do not depend on which
other units ran, where or in which order (seeds derive from the run seed and the pass or sample
key, :mod:`duplexeval.runs._driver`), so the local executor and the Dask executor
(:mod:`duplexeval.runs._dask_executor`) write byte-identical files.

:func:`run_unit` is the whole of a unit's work: it skips the unit's finished samples (a retried
unit repeats only what its lost worker had not saved), runs the rest and writes each sample's
wavs and record atomically through :class:`~duplexeval.runs._directory.RunDir`, where it runs
(in the client process locally, on a worker under Dask), as soon as that sample's fork (or
batch of forks) finishes: a kill late in a long pass loses the forks in flight and the prefix
the rerun steps again, never the forks already done.  The run's metadata and summary are
written by the client alone, after the last unit (:mod:`duplexeval.runs._execution`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from duplexeval._audio import read_audio
from duplexeval.conditions import Condition, apply_conditions
from duplexeval.conditions._apply import channel_stage
from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.errors import DuplexevalError
from duplexeval.events import EventKind
from duplexeval.plan._samples import EvalProtocol, Plan, Sample, split_passes
from duplexeval.runs._directory import RunDir, SampleRecord, Trace
from duplexeval.runs._driver import (
    DEFAULT_BATCH_SIZE,
    DialogueAudio,
    SampleOutput,
    derive_seed,
    run_group,
)
from duplexeval.systems._base import System
from duplexeval.systems._registry import load_system, resolve_system_class

__all__ = ["SystemRef", "UnitReport", "UnitTask", "WorkUnit", "conditioned_audio",
           "load_dialogue_audio", "output_problem", "plan_units", "record_lost", "run_unit",
           "run_unit_on_worker", "speech_segments"]


@dataclass(frozen=True)
class WorkUnit:
    """One pass with its forks (multi-turn protocols) or one sample (``single``)."""

    dialogue: Dialogue
    samples: tuple[Sample, ...]

    @property
    def key(self) -> str:
        """A readable, unique name: ``{dialogue}/ch{user}@{context_start}`` for a pass, the
        event id for a single sample."""
        first = self.samples[0]
        if len(self.samples) == 1 and first.context_start == first.context_end == 0:
            return first.event_id
        return f"{first.sample_id}/ch{first.user_channel}@{first.context_start:.6f}"


def plan_units(plan: Plan, dataset: Dataset) -> list[WorkUnit]:
    """The plan's units, in plan order of their first sample."""
    units: list[WorkUnit] = []
    for (dialogue_id, _user), members in plan.groups().items():
        dialogue = dataset.get(dialogue_id)
        if plan.options.protocol is EvalProtocol.SINGLE:
            units += [WorkUnit(dialogue, (s,)) for s in members]
        else:
            units += [WorkUnit(dialogue, tuple(p)) for p in split_passes(members)]
    return units


@dataclass(frozen=True)
class UnitTask:
    """Everything a process needs to run one unit into the run directory (picklable)."""

    run_root: Path
    unit: WorkUnit
    protocol: EvalProtocol
    seed: int
    use_snapshot: bool | None = None
    fail_fast: bool = False
    batch_size: int = DEFAULT_BATCH_SIZE
    """Rows of continuations stepped together (systems with the ``batch`` capability)."""
    conditions: tuple[Condition, ...] = ()
    """Acoustic conditions applied to the user channels this unit feeds
    (:func:`conditioned_audio`)."""


@dataclass
class UnitReport:
    """What running a unit did."""

    ran: int = 0
    """Samples of the unit that were not finished when it started."""
    ok: int = 0
    failed: int = 0
    frames: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SystemRef:
    """A system as its class (``module:Class``) and arguments: how a worker process rebuilds
    the client's system (``cls(**args)``, as ``--system``/``--system-arg`` do), once per
    process, instead of receiving a pickled one (models, locks and sockets do not pickle)."""

    target: str
    args: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, system: System) -> SystemRef:
        """The reference of ``system``; :class:`DuplexevalError` when its class cannot be
        imported by name (defined inside a function, say)."""
        kind = type(system)
        target = f"{kind.__module__}:{kind.__qualname__}"
        try:
            found = resolve_system_class(target)
        except DuplexevalError:
            found = None
        if found is not kind:
            raise DuplexevalError(f"system {system.name!r}: its class {target} cannot be "
                                  "imported by name, so workers cannot rebuild it; define it "
                                  "at module level")
        return cls(target, tuple(sorted(system.args.items())))

    def load(self) -> System:
        """The system, built once per process."""
        if self not in _SYSTEMS:
            _SYSTEMS[self] = load_system(self.target, dict(self.args))
        return _SYSTEMS[self]


_SYSTEMS: dict[SystemRef, System] = {}
_AUDIO: dict[tuple[str, int, int], DialogueAudio] = {}


def load_dialogue_audio(d: Dialogue) -> DialogueAudio:
    """The dialogue's audio; the last one read is kept (consecutive units of a dialogue read
    and resample it once)."""
    if d.audio is None:
        raise DuplexevalError(f"dialogue {d.id}: audio file missing; `duplexeval data "
                              "voice-bursts` makes audio from annotations")
    stat = Path(d.audio.path).stat()
    key = (str(d.audio.path), stat.st_mtime_ns, stat.st_size)
    if key not in _AUDIO:
        x, rate = read_audio(d.audio.path)
        bad = int(np.count_nonzero(~np.isfinite(x)))
        if bad:  # a float wav of NaN/inf: no system can be fed it
            raise DuplexevalError(f"{d.audio.path}: {bad} non-finite sample(s) (NaN or inf); "
                                  "a dataset's audio must be finite")
        _AUDIO.clear()
        _AUDIO[key] = DialogueAudio(x, rate)
    return _AUDIO[key]


def speech_segments(dialogue: Dialogue, channel: int, rate: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` sample spans of the channel's IPUs (its TURN and BC events, the
    inclusive end's sample included), overlapping ones merged, in order: what ``speed``
    perturbs, anchored at each onset."""
    spans = sorted((round(e.start * rate), round(e.end * rate) + 1) for e in dialogue.events
                   if e.channel == channel and e.kind in (EventKind.TURN, EventKind.BC)
                   and e.start <= e.end)
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def conditioned_audio(audio: DialogueAudio, dialogue: Dialogue, channels: set[int],
                      conditions: tuple[Condition, ...], seed: int) -> DialogueAudio:
    """``audio`` with each channel in ``channels`` under the channel stage of ``conditions``
    (:func:`~duplexeval.conditions._apply.channel_stage`; the other channels as they are),
    seeded by ``derive_seed(seed, "condition/{dialogue_id}/ch{channel}")``: every unit and
    every sample of a dialogue channel hears the same conditioned input, so shared prefixes
    stay shared, and the sample wavs hold what the system heard.  ``speed`` perturbs the
    channel's IPUs (:func:`speech_segments`)."""
    if not channel_stage(conditions):
        return audio
    x = audio.audio.copy()
    for ch in sorted(channels):
        x[:, ch] = apply_conditions(x[:, ch], conditions,
                                    derive_seed(seed, f"condition/{dialogue.id}/ch{ch}"),
                                    rate=audio.sample_rate,
                                    segments=speech_segments(dialogue, ch, audio.sample_rate))
    return DialogueAudio(x, audio.sample_rate)


def _save(run: RunDir, result: SampleOutput, rate: int, system: System, protocol: str) -> None:
    s = result.sample
    files = run.sample_files(s.sample_id, s.event_id)
    run.write_wav(files.wav, result.user, result.system, rate)
    if result.context_user is not None and result.context_system is not None:
        run.write_wav(files.context_wav, result.context_user, result.context_system, rate)
    kept, realtime = Trace.split_realtime(Trace.in_dialogue_time(result.trace,
                                                                 result.start_time))
    extra: dict[str, str] = {}
    if realtime is not None:  # a wall-clock session: its whole trace beside the sample
        extra["trace_path"] = run.relative(run.write_trace(s.sample_id, s.event_id, {
            "sample_id": s.sample_id, "event_id": s.event_id,
            "start_time": result.start_time, **realtime}))
    run.write_record(s.sample_id, s.event_id, SampleRecord(
        status="ok", sample=s.to_json(), protocol=protocol, seed=result.seed,
        frames=result.frames, trace=kept, system=system.name,
        output_audio_path=run.relative(files.wav), audio_frames=len(result.user),
        context_audio_path=run.relative(files.context_wav) if s.has_context else "",
        **extra))


def _save_failure(run: RunDir, s: Sample, error: str, protocol: str) -> None:
    run.write_record(s.sample_id, s.event_id, SampleRecord(
        status="failed", sample=s.to_json(), protocol=protocol, error=error))


def run_unit(task: UnitTask, system: System) -> UnitReport:
    """Run the unit's unfinished samples and write their files (see the module docstring).
    A failed sample gets a ``failed`` record; with ``fail_fast`` it then raises
    :class:`DuplexevalError`."""
    run = RunDir(task.run_root)
    pending = [s for s in task.unit.samples if not run.finished(s.sample_id, s.event_id)]
    report = UnitReport(ran=len(pending))
    if not pending:
        return report
    protocol = task.protocol.value

    def on_error(s: Sample, exc: BaseException) -> None:
        error = f"{type(exc).__name__}: {exc}"
        _save_failure(run, s, error, protocol)
        report.failed += 1
        report.errors.append(f"{s.event_id}: {error}")
        if task.fail_fast:
            raise DuplexevalError(f"sample {s.event_id} failed: {error}")

    audio = conditioned_audio(load_dialogue_audio(task.unit.dialogue), task.unit.dialogue,
                              {s.user_channel for s in pending}, task.conditions, task.seed)

    def on_output(result: SampleOutput) -> None:  # saved as soon as its fork finishes
        problem = output_problem(result, audio.sample_rate)
        if problem is not None:  # not written as good: a failed record saying why
            _save_failure(run, result.sample, problem, protocol)
            report.failed += 1
            report.errors.append(f"{result.sample.event_id}: {problem}")
            if task.fail_fast:
                raise DuplexevalError(f"sample {result.sample.event_id} failed: {problem}")
            return
        _save(run, result, audio.sample_rate, system, protocol)
        report.ok += 1

    _, report.frames = run_group(system, task.unit.dialogue, audio, pending, task.protocol,
                                 task.seed, use_snapshot=task.use_snapshot, on_error=on_error,
                                 batch_size=task.batch_size, on_output=on_output,
                                 conditions=task.conditions)
    return report


def output_problem(result: SampleOutput, rate: int) -> str | None:
    """Why the system's audio of a sample cannot be recorded, or ``None``: NaN or infinite
    samples (a model's failed decoding; written as PCM they would become full-scale DC)."""
    for what, x in (("system audio", result.system), ("context system audio",
                                                      result.context_system)):
        if x is None:
            continue
        bad = ~np.isfinite(np.asarray(x, dtype=np.float64))
        if bad.any():
            first = int(np.argmax(bad))
            return (f"the {what} has {int(bad.sum())} non-finite sample(s) (NaN or inf), "
                    f"the first at {first / rate:.3f} s of {len(x) / rate:.3f} s")
    return None


def run_unit_on_worker(task: UnitTask, system: SystemRef) -> UnitReport:
    """:func:`run_unit` with the system rebuilt in this process (the Dask task function)."""
    return run_unit(task, system.load())


def record_lost(task: UnitTask, why: str) -> UnitReport:
    """Give the unit's unfinished samples a ``failed`` record saying why (a unit whose
    workers kept dying); its finished samples stay as they are."""
    run = RunDir(task.run_root)
    report = UnitReport()
    for s in task.unit.samples:
        if not run.finished(s.sample_id, s.event_id):
            _save_failure(run, s, why, task.protocol.value)
            report.ran += 1
            report.failed += 1
            report.errors.append(f"{s.event_id}: {why}")
    return report


OnDone = Callable[[UnitTask, UnitReport], None]
