"""Run directories: provenance, atomic per-sample outputs, resume, summary.

::

    runs/NAME/
      config.json                 resolved configuration + its hash, system, dataset hash,
                                  protocol, seed, versions, git revision
      samples/{dialogue}/{event_id}.wav          stereo over [input_start, input_end]:
                                                 ch0 user input as fed (muted), ch1 system
      samples/{dialogue}/{event_id}.context.wav  [context_start, input_start]: ch0 user, ch1
                                                 system (generated; reference under multi-ref)
      samples/{dialogue}/{event_id}.json         the sample, seed, frames, trace, status/error
      metadata.jsonl              one line per finished sample, M3 metadata fields
      run_summary.json            {"samples", "failed", "frames_stepped", "model_seconds",
                                   "wall_seconds"} (cumulative over resumed invocations)

A sample is finished when its ``.json`` exists with ``"status": "ok"`` (written last, after its
wavs, every file atomically), so killing the process at any moment loses no finished sample
and leaves no half-written file; re-running the same command continues.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
from tqdm import tqdm

from . import __version__
from .data.dialogue import Dataset, Dialogue
from .data.m3 import ALIGN_DIR, AUDIO_DIR
from .errors import DuplexevalError
from .execute import DialogueAudio, SampleOutput, run_group
from .fileio import atomic_path, atomic_write_json, atomic_write_text, json_line, safe_name
from .protocols import Plan, Sample
from .systems.base import System

__all__ = ["RunConfig", "RunResult", "dataset_hash", "execute_run"]

PACKAGES = ("numpy", "soundfile", "soxr", "scipy", "faster-whisper", "pydantic")


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


def _git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).parent, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _package_versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


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

    def config_hash(self) -> str:
        """sha256 of the canonical JSON of this configuration."""
        text = json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)
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


def _write_config(out: Path, config: RunConfig, system: System, dataset: Dataset) -> None:
    path = out / "config.json"
    new_hash = config.config_hash()
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise DuplexevalError(f"{path}: malformed JSON; not a duplexeval run directory") \
                from None
        if old.get("config_hash") != new_hash:
            old_cfg = old.get("config", {})
            new_cfg = json.loads(json.dumps(asdict(config)))
            changed = [k for k, v in new_cfg.items() if old_cfg.get(k) != v]
            raise DuplexevalError(
                f"{out} holds a run with a different configuration (changed: "
                f"{', '.join(changed) or 'unknown'}); choose another --out or remove it")
        return
    atomic_write_json(path, {
        "config": asdict(config),
        "config_hash": new_hash,
        "system": {"name": system.name, "class": f"{type(system).__module__}:"
                   f"{type(system).__qualname__}", "version": system.version,
                   "args": system.args, "capabilities": system.capabilities.to_json()},
        "dataset": {"path": str(dataset.root.resolve()), "name": dataset.name,
                    "split": dataset.split, "language": dataset.language,
                    "domain": dataset.domain, "content_hash": config.dataset_hash},
        "protocol": config.plan["protocol"],
        "seed": config.seed,
        "duplexeval_version": __version__,
        "git_revision": _git_revision(),
        "python": platform.python_version(),
        "packages": _package_versions(),
    })


def _sample_paths(out: Path, s: Sample) -> tuple[Path, Path, Path]:
    folder = out / "samples" / s.sample_id
    return (folder / f"{s.event_id}.wav", folder / f"{s.event_id}.context.wav",
            folder / f"{s.event_id}.json")


def _finished(out: Path, s: Sample) -> bool:
    record = _sample_paths(out, s)[2]
    if not record.exists():
        return False
    try:
        return json.loads(record.read_text(encoding="utf-8")).get("status") == "ok"
    except json.JSONDecodeError:
        return False


def _write_wav(path: Path, ch0: np.ndarray, ch1: np.ndarray, rate: int) -> None:
    with atomic_path(path, suffix=".wav") as tmp:
        # PCM_24: lossless to -144 dB and byte-reproducible (float WAVs carry a timestamped
        # PEAK chunk)
        sf.write(str(tmp), np.stack([ch0, ch1], axis=1), rate, subtype="PCM_24")


def _save(out: Path, result: SampleOutput, rate: int, system: System, protocol: str) -> None:
    s = result.sample
    wav, ctx, record = _sample_paths(out, s)
    _write_wav(wav, result.user, result.system, rate)
    if result.context_user is not None and result.context_system is not None:
        _write_wav(ctx, result.context_user, result.context_system, rate)
    atomic_write_json(record, {
        "status": "ok", "sample": s.to_json(), "protocol": protocol, "seed": result.seed,
        "frames": result.frames, "trace": result.trace, "system": system.name,
        "output_audio_path": str(wav.relative_to(out)),
        "context_audio_path": str(ctx.relative_to(out)) if s.has_context else "",
    })


def _save_failure(out: Path, s: Sample, exc: BaseException, protocol: str) -> None:
    atomic_write_json(_sample_paths(out, s)[2], {
        "status": "failed", "sample": s.to_json(), "protocol": protocol,
        "error": f"{type(exc).__name__}: {exc}"})


def _metadata(out: Path, plan: Plan, system: System) -> tuple[int, int]:
    """Rewrite metadata.jsonl from the finished samples (plan order); returns (ok, failed)."""
    lines, failed = [], 0
    for s in plan.samples:
        wav, ctx, record = _sample_paths(out, s)
        if not record.exists():
            continue
        data = json.loads(record.read_text(encoding="utf-8"))
        if data.get("status") != "ok":
            failed += 1
            continue
        meta = {k: v for k, v in s.to_json().items() if k != "fork_time"}
        meta.update({
            "model": system.name, "trigger_time": meta["input_start"],
            "input_audio_path": str(wav.relative_to(out)),
            "context_audio_path": str(ctx.relative_to(out)) if s.has_context else "",
            "alignment_path": None, "output_audio_path": str(wav.relative_to(out)),
            "use_context": plan.options.protocol.uses_context,
            "context_mode": plan.options.protocol.value,
        })
        lines.append(json_line(meta))
    atomic_write_text(out / "metadata.jsonl", "".join(lines))
    return len(lines), failed


def _load_audio(d: Dialogue) -> DialogueAudio:
    if d.audio is None:
        raise DuplexevalError(f"dialogue {d.id}: audio file missing; `duplexeval data "
                              "voice-bursts` makes audio from annotations")
    x, rate = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
    return DialogueAudio(x, rate)


def execute_run(
    system: System,
    dataset: Dataset,
    plan: Plan,
    out: Path,
    seed: int = 0,
    fail_fast: bool = False,
    use_snapshot: bool | None = None,
    progress: bool = True,
) -> RunResult:
    """Run (or resume) ``plan`` into ``out``.  Sample and system names that are not safe file
    names (:func:`~duplexeval.fileio.safe_name`) are refused before anything is written."""
    safe_name(system.name, "system name")
    for s in plan.samples:
        safe_name(s.sample_id, "dialogue id")
        safe_name(s.event_id, "event id")
    started = time.monotonic()
    config = RunConfig(system=system.name, system_args=dict(system.args),
                       system_version=system.version, dataset=str(dataset.root.resolve()),
                       dataset_hash=dataset_hash(dataset), split=dataset.split,
                       plan={**asdict(plan.options), "protocol": plan.options.protocol.value,
                             "ignored_events": sorted(plan.options.ignored_events)},
                       seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    lock = open(out / ".lock", "w")  # noqa: SIM115 - held for the whole run
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise DuplexevalError(f"{out} is in use by another duplexeval run") from None
    try:
        return _execute_locked(system, dataset, plan, out, config, seed, fail_fast,
                               use_snapshot, progress, started)
    finally:
        lock.close()


def _execute_locked(system: System, dataset: Dataset, plan: Plan, out: Path, config: RunConfig,
                    seed: int, fail_fast: bool, use_snapshot: bool | None, progress: bool,
                    started: float) -> RunResult:
    for stale in out.rglob(".*.tmp-*"):  # left by a killed run; never a finished file
        stale.unlink(missing_ok=True)
    _write_config(out, config, system, dataset)
    protocol = plan.options.protocol
    groups = plan.groups()
    pending = {key: [s for s in members if not _finished(out, s)]
               for key, members in groups.items()}
    done = sum(len(m) for m in groups.values()) - sum(len(p) for p in pending.values())
    frames = 0

    def on_error(s: Sample, exc: BaseException) -> None:
        _save_failure(out, s, exc, protocol.value)
        if fail_fast:
            raise DuplexevalError(f"sample {s.event_id} failed: {type(exc).__name__}: {exc}")

    with tqdm(total=len(plan.samples), initial=done, desc=f"{system.name} {protocol.value}",
              unit="sample", file=sys.stderr, disable=not progress) as bar:
        for (dialogue_id, _user), members in pending.items():
            if not members:
                continue
            dialogue = dataset.get(dialogue_id)
            audio = _load_audio(dialogue)
            # a shared pass must still cover every member's fork: run the whole group's
            # pending samples together
            outputs, stepped = run_group(system, dialogue, audio, members, protocol, seed,
                                         use_snapshot=use_snapshot, on_error=on_error)
            frames += stepped
            for result in outputs:
                _save(out, result, audio.sample_rate, system, protocol.value)
            bar.update(len(members))
    ok, failed = _metadata(out, plan, system)
    frame_seconds = system.capabilities.frame_seconds
    previous: dict[str, Any] = {}
    summary_path = out / "run_summary.json"
    if summary_path.exists():
        try:
            previous = json.loads(summary_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            previous = {}
    total_frames = int(previous.get("frames_stepped", 0)) + frames
    wall = float(previous.get("wall_seconds", 0.0)) + time.monotonic() - started
    summary = {"samples": ok, "failed": failed,
               "frames_stepped": total_frames,
               "model_seconds": round(total_frames * frame_seconds, 6),
               "wall_seconds": round(wall, 3)}
    atomic_write_json(summary_path, summary)
    return RunResult(out, summary["samples"], failed, frames, frames * frame_seconds, wall, done)


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
