"""Executing a run: provenance, atomic per-sample outputs, resume, summary.

The files are those of :mod:`duplexeval.runs._directory` (written through :class:`RunDir`).
A sample is finished when its record says ``ok`` (written last, after its wavs, every file
atomically), so killing the process at any moment loses no finished sample and leaves no
half-written file; re-running the same command continues.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from tqdm import tqdm

from duplexeval._environment import installed_version
from duplexeval._fileio import foreign_folder_problem, safe_name
from duplexeval.conditions import Condition
from duplexeval.conditions._apply import ordered
from duplexeval.data._dialogue import Dataset
from duplexeval.data._m3 import ALIGN_DIR, AUDIO_DIR
from duplexeval.errors import DuplexevalError
from duplexeval.plan._samples import EvalProtocol, Plan, PlanOptions, Sample
from duplexeval.runs._directory import (
    DatasetInfo,
    MetadataRow,
    RunConfigFile,
    RunDir,
    RunSummary,
    SystemInfo,
)
from duplexeval.runs._driver import DEFAULT_BATCH_SIZE, conditions_problem, protocol_problem
from duplexeval.runs._interactive_run import default_policy, execute_interactive
from duplexeval.runs._simulated_user import UserPolicy
from duplexeval.runs._units import OnDone, UnitReport, UnitTask, plan_units, run_unit
from duplexeval.systems._base import System
from duplexeval.version import __version__, git_revision

__all__ = ["Executor", "LocalExecutor", "RunConfig", "RunResult", "TaskMap", "dataset_hash",
           "execute_run", "summary_lines"]

A = TypeVar("A")
R = TypeVar("R")

PACKAGES = ("numpy", "soundfile", "soxr", "scipy", "onnxruntime", "ctranslate2", "faster-whisper",
            "torch", "pydantic")
"""The distributions whose versions `config.json` records (those installed)."""


def dataset_hash(dataset: Dataset) -> str:
    """sha256 over the split's jsonl, its alignments and audio files (names and bytes)."""
    digest = hashlib.sha256()
    root = dataset.root
    files = [root / f"{dataset.split}.jsonl"]
    for d in dataset.dialogues:
        files += [root / ALIGN_DIR / f"{d.id}.txt", root / AUDIO_DIR / f"{d.id}.wav"]
    for path in files:
        if path.exists():
            digest.update(str(path.relative_to(root)).encode())
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _package_versions() -> dict[str, str]:
    return {name: found for name in PACKAGES if (found := installed_version(name)) is not None}


@dataclass(frozen=True)
class RunConfig:
    """The resolved configuration of a run (what its hash covers)."""

    system: str
    system_args: dict[str, str]
    system_version: str
    dataset: str
    dataset_hash: str
    split: str
    plan: dict[str, Any]
    seed: int
    duplexeval_version: str = __version__
    conditions: tuple[dict[str, float | str], ...] = ()
    """The acoustic conditions (:mod:`duplexeval.conditions`), in the order they compose;
    left out of the hash when empty, so a clean run hashes as before conditions existed."""
    user_policy: dict[str, Any] | None = None
    """The simulated user's policy under ``interactive``
    (:class:`~duplexeval.runs._interactive.UserPolicy`); left out of the hash when ``None``."""

    def config_hash(self) -> str:
        """sha256 of the canonical JSON of this configuration."""
        fields = asdict(self)
        if not self.conditions:
            del fields["conditions"]
        if self.user_policy is None:
            del fields["user_policy"]
        text = json.dumps(fields, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class RunResult:
    """What :func:`execute_run` did."""

    out: Path
    samples: int
    failed: int
    frames_stepped: int
    model_seconds: float
    wall_seconds: float
    skipped: int


def _write_config(run: RunDir, config: RunConfig, system: System, dataset: Dataset,
                  batch_size: int) -> None:
    new_hash = config.config_hash()
    if run.config_path.exists():
        old = run.read_config()
        changed = _changed_fields(old.config, config)
        if changed:
            raise DuplexevalError(
                f"{run.root} holds a run with a different configuration (changed: "
                f"{', '.join(changed)}); choose another --out or remove it")
        if old.config_hash != new_hash:
            raise DuplexevalError(
                f"{run.config_path}: config_hash does not match the config it records (the "
                "file was edited); choose another --out or restore the file")
        return
    run.write_config(RunConfigFile(
        config=asdict(config), config_hash=new_hash,
        system=SystemInfo(name=system.name,
                          class_=f"{type(system).__module__}:{type(system).__qualname__}",
                          version=system.version, args=system.args,
                          capabilities=system.capabilities.to_json()),
        dataset=DatasetInfo(path=str(dataset.root.resolve()), name=dataset.name,
                            split=dataset.split, language=dataset.language,
                            domain=dataset.domain, content_hash=config.dataset_hash),
        protocol=config.plan["protocol"], seed=config.seed, batch_size=batch_size,
        duplexeval_version=__version__,
        git_revision=git_revision(), python=platform.python_version(),
        packages=_package_versions()))


_OMITTED_WHEN_EMPTY: dict[str, Any] = {"conditions": [], "user_policy": None}
"""The :class:`RunConfig` fields a configuration written before they existed lacks: absent
reads as this value (the hash leaves them out when so)."""


def _changed_fields(stored: dict[str, Any], config: RunConfig) -> list[str]:
    """The fields of ``config.json``'s ``config`` (``stored``) that differ from ``config``,
    compared as JSON values; a field only one of them has counts as changed.  Compared field
    by field, not by the stored hash alone, so a hand-edited field with the hash left as it
    was is still noticed."""
    new = json.loads(json.dumps(asdict(config)))
    missing = object()
    changed = [k for k, v in new.items()
               if stored.get(k, _OMITTED_WHEN_EMPTY.get(k, missing)) != v]
    return changed + sorted(k for k in stored if k not in new)


def _plan_config(plan: Plan) -> dict[str, Any]:
    """The plan options as the configuration records them; ``counterfactual`` only when set,
    ``counterfactual_replacement`` only when not ``silence`` and ``repeats`` only when above
    1, so a run made before those options existed keeps its configuration hash (and resumes
    as it did)."""
    out = {**asdict(plan.options), "protocol": plan.options.protocol.value,
           "ignored_events": sorted(plan.options.ignored_events)}
    if not out["counterfactual"]:
        del out["counterfactual"]
    if out["counterfactual_replacement"] == "silence":
        del out["counterfactual_replacement"]
    if out["repeats"] == 1:
        del out["repeats"]
    return out


def _metadata(run: RunDir, samples: Sequence[Sample], options: PlanOptions,
              system: System) -> tuple[int, int]:
    """Rewrite the metadata from the finished ``samples`` (plan order; under interactive the
    realised ones); returns (ok, failed)."""
    rows, failed = [], 0
    for s in samples:
        try:
            record = run.read_record(s.sample_id, s.event_id)
        except DuplexevalError:
            record = None
        if record is None:
            continue
        if record.status != "ok":
            failed += 1
            continue
        files = run.sample_files(s.sample_id, s.event_id)
        meta = {k: v for k, v in s.to_json().items() if k != "fork_time"}
        rows.append(MetadataRow(
            **meta, model=system.name, trigger_time=meta["input_start"],
            input_audio_path=run.relative(files.wav),
            context_audio_path=run.relative(files.context_wav) if s.has_context else "",
            alignment_path=None, output_audio_path=run.relative(files.wav),
            use_context=options.protocol.uses_context,
            context_mode=options.protocol.value))
    run.write_metadata(rows)
    return len(rows), failed


def execute_run(
    system: System,
    dataset: Dataset,
    plan: Plan,
    out: Path,
    seed: int = 0,
    fail_fast: bool = False,
    use_snapshot: bool | None = None,
    progress: bool = True,
    executor: Executor | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_samples: Callable[[int], None] | None = None,
    conditions: Sequence[Condition] = (),
    user_policy: UserPolicy | None = None,
) -> RunResult:
    """Run (or resume) ``plan`` into ``out`` on ``executor`` (default: :class:`LocalExecutor`).
    ``on_samples(k)`` is told each time ``k`` more samples are finished (first those a resumed
    run already has; ``interactive``: every planned one at the end), for a progress display.
    Sample and system names that are not safe file names (:func:`~duplexeval._fileio.safe_name`)
    are refused before anything is written.  ``batch_size``: continuations stepped together
    by a system with the ``batch`` capability (1: one at a time); it changes no output, so it
    is recorded in ``config.json`` (``batch_size``, as the run was started) outside the
    configuration hash, and a resumed run may use another.  ``conditions``: acoustic
    conditions on what the system hears (:mod:`duplexeval.conditions`), recorded in the
    configuration, so resuming with other conditions is refused.  Under ``interactive``
    (:mod:`duplexeval.runs._interactive_run`) the simulated user follows ``user_policy``
    (default :class:`~duplexeval.runs._interactive.UserPolicy`), its gaps drawn from the
    dataset's; one session per dialogue and user channel runs in this process (the executor
    is not used: no two sessions share a prefix)."""
    chosen = tuple(ordered(conditions))
    if batch_size < 1:
        raise DuplexevalError(f"--batch-size must be at least 1, got {batch_size}")
    _refuse_before_writing(system, plan, chosen, RunDir(out))
    policy = _interactive_policy(plan, dataset, user_policy, chosen)
    started = time.monotonic()
    config = RunConfig(system=system.name, system_args=dict(system.args),
                       system_version=system.version, dataset=str(dataset.root.resolve()),
                       dataset_hash=dataset_hash(dataset), split=dataset.split,
                       plan=_plan_config(plan), seed=seed,
                       conditions=tuple(c.to_json() for c in chosen),
                       user_policy=None if policy is None else policy.to_json())
    run = RunDir(out)
    before = _Before.of(run)
    with run.locked():
        try:
            return _execute_locked(system, dataset, plan, run, config,
                                   _Settings(executor or LocalExecutor(), fail_fast,
                                             use_snapshot, progress, batch_size, on_samples,
                                             chosen, policy),
                                   started)
        except BaseException:
            before.undo(run)  # still holding the lock: no other run is writing here
            raise


def _refuse_before_writing(system: System, plan: Plan, conditions: tuple[Condition, ...],
                           run: RunDir) -> None:
    """Every reason to refuse the run before anything is written, each a one-line error: a
    protocol or condition the system cannot take, a system, dialogue or event name that is
    not a safe file name (:func:`~duplexeval._fileio.safe_name`), and an output folder that
    holds another thing's files (the current folder, a dataset, ``/``)."""
    problem = protocol_problem(plan.options.protocol, system.capabilities) or \
        conditions_problem(conditions, system.capabilities)
    if problem is not None:
        raise DuplexevalError(f"system {system.name!r}: {problem}")
    safe_name(system.name, "system name")
    for s in plan.samples:
        safe_name(s.sample_id, "dialogue id")
        safe_name(s.event_id, "event id")
    foreign = foreign_folder_problem(run.root, (run.config_path.name,), "a run directory")
    if foreign is not None:
        raise DuplexevalError(foreign)


@dataclass(frozen=True)
class _Before:
    """What of a run directory existed before this invocation, so that a run refused or
    failed before any sample was written leaves nothing behind (no ``config.json`` that
    would make the corrected command "a different configuration", no ``.lock``, no empty
    folders): :meth:`undo` removes what this invocation created, and only while no sample
    file exists (a sample is work to keep, and its config is needed to resume it)."""

    created: tuple[Path, ...]
    """Files and folders absent before, deepest first: the config, the lock, the folder
    and any parents ``--out`` needed."""

    @staticmethod
    def of(run: RunDir) -> _Before:
        absent = [p for p in (run.config_path, run.lock_path) if not p.exists()]
        folder = run.root
        while not folder.exists() and folder != folder.parent:
            absent.append(folder)
            folder = folder.parent
        return _Before(tuple(absent))

    def undo(self, run: RunDir) -> None:
        if run.samples_dir.exists():
            return
        for path in self.created:
            with contextlib.suppress(OSError):  # a folder another process wrote into stays
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                else:
                    path.unlink()


@dataclass(frozen=True)
class _Settings:
    executor: Executor
    fail_fast: bool
    use_snapshot: bool | None
    progress: bool
    batch_size: int = DEFAULT_BATCH_SIZE
    on_samples: Callable[[int], None] | None = None
    conditions: tuple[Condition, ...] = ()
    policy: UserPolicy | None = None


class LocalExecutor:
    """Runs the units one after another in this process, with the caller's system."""

    def run(self, tasks: Sequence[UnitTask], system: System, done: OnDone) -> None:
        """Run every task; ``done`` is called after each."""
        for task in tasks:
            done(task, run_unit(task, system))

    def map(self, fn: Callable[[A], R], items: Sequence[A],
            done: Callable[[int, R], None]) -> None:
        """``done(i, fn(items[i]))`` for every item, in order, in this process."""
        for i, item in enumerate(items):
            done(i, fn(item))


class TaskMap(Protocol):
    """Where the work after a run is spread (analysis, judge calls): ``map`` calls
    ``done(i, fn(items[i]))`` in the calling process once per item, in any order, and returns
    when every item is done; ``fn`` runs where the executor puts it (this process for
    :class:`LocalExecutor`, a Dask worker for
    :class:`~duplexeval.runs._dask_executor.DaskExecutor`), so it must be a module-level
    function and the items picklable.  An exception of ``fn`` is raised by ``map``."""

    def map(self, fn: Callable[[A], R], items: Sequence[A],
            done: Callable[[int, R], None]) -> None:
        """Run ``fn`` on every item; call ``done(index, result)`` for each, in any order."""
        ...


class Executor(Protocol):
    """Where a run's units run: :class:`LocalExecutor`, or
    :class:`~duplexeval.runs._dask_executor.DaskExecutor` on a Dask cluster.  ``run`` calls
    ``done`` once per task (in any order) in the calling process, and returns when every task
    is done; the files of a unit's samples are written by whoever runs it."""

    def run(self, tasks: Sequence[UnitTask], system: System, done: OnDone) -> None:
        """Run every task on ``system``; call ``done`` once per task, in this process."""
        ...


def _execute_locked(system: System, dataset: Dataset, plan: Plan, run: RunDir,
                    config: RunConfig, settings: _Settings, started: float) -> RunResult:
    for stale in list(run.temporary_files()):  # left by a killed run; never a finished file
        stale.unlink(missing_ok=True)
    _write_config(run, config, system, dataset, settings.batch_size)
    tally = _Tally(run.read_summary() or RunSummary(), started,
                   system.capabilities.frame_seconds)
    if settings.policy is not None:
        outcome = execute_interactive(system, dataset, plan.options, run, config.seed,
                                      settings.policy, settings.conditions, settings.progress)
        samples, done = outcome.samples, outcome.resumed
        tally.frames += outcome.frames
        if settings.on_samples is not None and plan.samples:
            # the caller counts planned samples; the realised ones differ in number
            settings.on_samples(len(plan.samples))
    else:
        samples = list(plan.samples)
        done = _run_units(system, dataset, plan, run, config, settings, tally)
    for stale in list(run.temporary_files()):  # left by a worker killed mid-write
        stale.unlink(missing_ok=True)
    ok, failed = _metadata(run, samples, plan.options, system)
    summary = tally.summary(ok, failed)
    run.write_summary(summary)
    return RunResult(run.root, ok, failed, tally.frames, tally.frames * tally.frame_seconds,
                     summary.wall_seconds, done)


def _interactive_policy(plan: Plan, dataset: Dataset, policy: UserPolicy | None,
                        conditions: Sequence[Condition]) -> UserPolicy | None:
    """The simulated user's policy of an interactive plan (``None`` for the static ones,
    which refuse one); twins, repeats and network are refused under interactive (the user's
    loop conditions the user channel before it replays it, feeds an echo back frame by frame,
    and has no real-time network)."""
    if plan.options.protocol is not EvalProtocol.INTERACTIVE:
        if policy is not None:
            raise DuplexevalError("a simulated user's policy applies only to --protocol "
                                  "interactive")
        return None
    if plan.options.counterfactual or plan.options.repeats > 1:
        raise DuplexevalError("--counterfactual and --repeats do not apply to --protocol "
                              "interactive (its samples come from the realised dialogue)")
    if any(c.kind == "network" for c in conditions):
        raise DuplexevalError("--condition network is not applied under --protocol interactive "
                              "yet (the simulated user's loop steps frame-clock systems, with "
                              "no real-time network); the other conditions are")
    return default_policy(dataset, policy, plan.options.window)


def _run_units(system: System, dataset: Dataset, plan: Plan, run: RunDir, config: RunConfig,
               settings: _Settings, tally: _Tally) -> int:
    """The plan's unfinished units on the executor, counted in ``tally`` (its summary
    rewritten after every unit); returns the samples resumed past."""
    protocol = plan.options.protocol
    finished = {s.event_id for s in plan.samples if run.finished(s.sample_id, s.event_id)}
    done = len(finished)
    tasks = [UnitTask(run.root, unit, protocol, config.seed, settings.use_snapshot,
                      settings.fail_fast, settings.batch_size, settings.conditions)
             for unit in plan_units(plan, dataset)
             if any(s.event_id not in finished for s in unit.samples)]
    tally.ok = done
    if settings.on_samples is not None and done:
        settings.on_samples(done)
    with tqdm(total=len(plan.samples), initial=done, desc=f"{system.name} {protocol.value}",
              unit="sample", file=sys.stderr, disable=not settings.progress) as bar:

        def unit_done(task: UnitTask, report: UnitReport) -> None:
            tally.add(report)
            run.write_summary(tally.summary(tally.ok, tally.failed))  # a kill keeps the count
            bar.update(report.ran)
            if settings.on_samples is not None and report.ran:
                settings.on_samples(report.ran)
            for error in report.errors:  # "EVENT_ID: reason", on its own line above the bar
                bar.write(f"duplexeval: failed sample {' '.join(error.split())}",
                          file=sys.stderr)

        settings.executor.run(tasks, system, unit_done)
    return done


@dataclass
class _Tally:
    """``run_summary.json`` as the run goes: what the earlier invocations counted
    (``previous``, read once when this one starts) plus this invocation's units so far.

    The summary is rewritten after every unit, so a killed invocation's frames and wall time
    stay counted up to its last finished unit: after a kill and a resume, ``frames_stepped``
    and ``model_seconds`` are the work the invocations actually did, less the frames of the
    units in flight at the kill (lost with them; those units are stepped again, and counted,
    by the resume).  For the ``single`` protocol (one sample a unit), that is exactly an
    uninterrupted run's count, unless the kill fell between a unit's last sample and this
    rewrite.  While a run goes (or after a kill), ``samples`` counts the samples finished so
    far and ``failed`` this invocation's failures; the end of an invocation recounts both
    from the records."""

    previous: RunSummary
    started: float
    frame_seconds: float
    ok: int = 0
    failed: int = 0
    frames: int = 0
    """Frames this invocation stepped, in the units that came back."""

    def add(self, report: UnitReport) -> None:
        self.ok, self.failed = self.ok + report.ok, self.failed + report.failed
        self.frames += report.frames

    def summary(self, samples: int, failed: int) -> RunSummary:
        total = self.previous.frames_stepped + self.frames
        wall = self.previous.wall_seconds + time.monotonic() - self.started
        return RunSummary(samples=samples, failed=failed, frames_stepped=total,
                          model_seconds=round(total * self.frame_seconds, 6),
                          wall_seconds=round(wall, 3))


def summary_lines(result: RunResult, system: System, plan: Plan) -> Sequence[str]:
    """The one-screen summary printed at the end of a run."""
    per_event = plan.model_seconds_per_event()
    return [
        f"run: {result.out}",
        f"  system {system.name} v{system.version}, protocol {plan.options.protocol.value}",
        f"  samples ok {result.samples}, failed {result.failed}, resumed past {result.skipped}",
        f"  frames stepped {result.frames_stepped} ({result.model_seconds:.1f} model-s; "
        f"official per-event cost {per_event:.1f} s)",
        f"  wall {result.wall_seconds:.1f} s",
    ]
