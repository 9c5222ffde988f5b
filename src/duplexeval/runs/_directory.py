"""The run directory: every path and file in it, with typed models of its JSON files.

This module is the only one that spells a run directory's file names and JSON keys; the
executor writes through it, analysis and scoring read through it, users open one with
:func:`open_run`.

::

    RUN_DIR/
      config.json                      RunConfigFile: resolved configuration + its hash, system
                                       (with capabilities and oracle data), dataset, versions
      samples/{dialogue}/{event_id}.wav          stereo over [input_start, input_end]:
                                                 ch0 user input as fed (muted), ch1 system
      samples/{dialogue}/{event_id}.context.wav  [context_start, input_start]: ch0 user,
                                                 ch1 system (generated; reference under
                                                 multi-ref)
      samples/{dialogue}/{event_id}.json         SampleRecord: the sample, seed, frames,
                                                 trace, status (or the error)
      samples/{dialogue}/{event_id}.trace.json   wall-clock systems only: the real-time
                                                 driver's whole trace (send drift series,
                                                 arrivals, jitter, server events, initial
                                                 silence) in dialogue time
      metadata.jsonl                   MetadataRow per finished sample (the M3 fields)
      run_summary.json                 RunSummary (cumulative over resumed invocations)
      .lock                            held while a run writes
      analysis/ , analysis-truth/      AnalysisFiles: what the analysis stage writes (VAD + ASR,
                                       or the system's logged speech)
      scores/ , scores-truth/          ScoreFiles: per-event scores, aggregates, results

A sample is finished when its record exists with ``"status": "ok"`` (written last, after its
wavs, every file atomically).  Times are seconds of the dialogue.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)

from duplexeval._audio import audio_info, stereo, write_audio
from duplexeval._fileio import (
    atomic_write_json,
    atomic_write_text,
    has_non_finite,
    json_line,
    loads_json,
    read_json,
    safe_name,
)
from duplexeval.errors import DuplexevalError, located
from duplexeval.runs._metadata_row import MetadataRow
from duplexeval.runs._trace import Trace

__all__ = [
    "AnalysisFiles",
    "AnalysisInputs",
    "AnalysisRow",
    "DatasetInfo",
    "MetadataRow",
    "RunConfigFile",
    "RunDir",
    "RunSummary",
    "SampleFiles",
    "SampleRecord",
    "ScoreFiles",
    "SystemInfo",
    "Trace",
    "open_run",
]


class SystemInfo(BaseModel):
    """The system a run used (``config.json`` ``system``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    name: str
    class_: str = Field("", alias="class")
    version: str = ""
    args: dict[str, str] = Field(default_factory=dict)
    capabilities: dict[str, Any] = Field(default_factory=dict)

    @property
    def oracle(self) -> list[str]:
        """The oracle data kinds the system read (empty for a deployable system)."""
        return list(self.capabilities.get("oracle", []))


class DatasetInfo(BaseModel):
    """The dataset a run used (``config.json`` ``dataset``)."""

    model_config = ConfigDict(extra="allow")
    path: str
    name: str = ""
    split: str = "test"
    language: str | None = None
    domain: str | None = None
    content_hash: str = ""


class RunConfigFile(BaseModel):
    """``config.json``: what the run was, with its provenance."""

    model_config = ConfigDict(extra="allow")
    config: dict[str, Any]
    """The resolved configuration its hash covers (see ``RunConfig``)."""
    config_hash: str
    system: SystemInfo
    dataset: DatasetInfo
    protocol: str
    seed: int
    batch_size: int | None = None
    """Continuations stepped together (``--batch-size``) when the run was started; outside
    the hash: it changes no output (None: a run from before the option)."""
    duplexeval_version: str = ""
    git_revision: str | None = None
    python: str = ""
    packages: dict[str, str] = Field(default_factory=dict)


class SampleRecord(BaseModel):
    """``samples/{dialogue}/{event_id}.json``: a finished sample (``ok``: seed, frames, trace,
    system, audio paths) or a failed one (``failed``: the error)."""

    model_config = ConfigDict(extra="forbid")
    status: Literal["ok", "failed"]
    sample: dict[str, Any]
    """The plan's sample (``Sample.to_json``)."""
    protocol: str
    seed: int | None = None
    frames: int | None = None
    trace: dict[str, Any] = Field(default_factory=dict)
    """The session's trace as recorded (see :class:`Trace`, :meth:`typed_trace`)."""
    system: str = ""
    output_audio_path: str = ""
    context_audio_path: str = ""
    trace_path: str = ""
    """The real-time trace file, relative to the run directory ('' for other systems)."""
    audio_frames: int | None = None
    """Frames of the output wav as written (``None`` in records of older versions): a wav of
    another length is not this sample's (:meth:`RunDir.audio_problem`)."""
    error: str = ""

    def typed_trace(self) -> Trace:
        """The trace with its known keys typed."""
        return Trace.model_validate(self.trace)


class RunSummary(BaseModel):
    """``run_summary.json``: totals over every invocation of the run."""

    model_config = ConfigDict(extra="allow")
    samples: int = 0
    failed: int = 0
    frames_stepped: int = 0
    model_seconds: float = 0.0
    wall_seconds: float = 0.0


@dataclass(frozen=True)
class SampleFiles:
    """The files of one sample."""

    wav: Path
    context_wav: Path
    record: Path
    trace: Path
    """The real-time trace (wall-clock systems only)."""


class AnalysisRow(MetadataRow):
    """One line of the analysis folder's ``metadata.jsonl``: the run's row plus the path of the
    sample's transcript, relative to the analysis folder (the official M3 layout, which
    ``score --m3`` reads too)."""

    output_asr_path: str


class AnalysisInputs(BaseModel):
    """``inputs.json`` of an analysis: SHA-256 of what it read, so a changed run is noticed."""

    model_config = ConfigDict(extra="forbid")
    metadata_sha256: str
    audio: dict[str, str]
    """Output wav path (relative to the run directory) -> SHA-256."""


@dataclass(frozen=True)
class AnalysisFiles:
    """The analysis stage's folder: one transcript per sample (the official transcript JSON,
    written by :mod:`duplexeval.analysis._segments`), their metadata (:class:`AnalysisRow`),
    the settings (free-form, the analysis stage's) and the input hashes
    (:class:`AnalysisInputs`).  The settings file is written last: an interrupted analysis
    has none, so it is never taken as complete."""

    root: Path

    @property
    def metadata(self) -> Path:
        """The analysed run's metadata, with each transcript's path."""
        return self.root / "metadata.jsonl"

    @property
    def settings(self) -> Path:
        """The analysis settings (written last)."""
        return self.root / "settings.json"

    @property
    def inputs(self) -> Path:
        """The SHA-256 of the run files the analysis was made from."""
        return self.root / "inputs.json"

    TRANSCRIPT_FIELD = "output_asr_path"
    """The metadata field holding a transcript's path relative to :attr:`root`."""

    def transcript(self, sample_id: str, event_id: str) -> Path:
        """Where one sample's segments go (relative form: :meth:`transcript_key`)."""
        return self.root / self.transcript_key(sample_id, event_id)

    @staticmethod
    def transcript_key(sample_id: str, event_id: str) -> str:
        """``{dialogue}/{event_id}.json`` (the ``output_asr_path`` value; ids checked)."""
        return f"{safe_name(sample_id, 'dialogue id')}/{safe_name(event_id, 'event id')}.json"

    def complete(self) -> bool:
        """True when the settings and the metadata are both there."""
        return self.settings.is_file() and self.metadata.is_file()

    def read_settings(self) -> dict[str, Any] | None:
        """The settings, or ``None`` when absent or unreadable."""
        try:
            data = loads_json(self.settings.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # ValueError: not JSON, not UTF-8
            return None
        return data if isinstance(data, dict) else None

    def read_inputs(self) -> AnalysisInputs | None:
        """The input hashes, or ``None`` when absent or of another form (older versions)."""
        try:
            return _model(self.inputs, AnalysisInputs)
        except DuplexevalError:
            return None

    def start(self) -> None:
        """Mark the analysis incomplete (before rewriting it)."""
        self.settings.unlink(missing_ok=True)

    def finish(self, rows: Sequence[AnalysisRow], inputs: AnalysisInputs,
               settings: dict[str, Any]) -> None:
        """Write the metadata and the input hashes, then the settings (last)."""
        atomic_write_json(self.inputs, inputs.model_dump())
        atomic_write_text(self.metadata, "".join(json_line(r.model_dump()) for r in rows))
        atomic_write_json(self.settings, settings)


@dataclass(frozen=True)
class ScoreFiles:
    """A scores folder: per-event rows, the official aggregate, the results file and the
    content records."""

    root: Path

    @property
    def per_event(self) -> Path:
        """The variant's values, one line per event."""
        return self.root / "per_event.jsonl"

    @property
    def aggregate(self) -> Path:
        """The aggregates under the official code's names."""
        return self.root / "aggregate.json"

    @property
    def results(self) -> Path:
        """The results file (:mod:`duplexeval.results`)."""
        return self.root / "results.json"

    @property
    def content(self) -> Path:
        """Judged content records, one line per (event, dimension)."""
        return self.root / "content.jsonl"

    @property
    def content_offline(self) -> Path:
        """Offline content values and texts, one line per content event."""
        return self.root / "content_offline.jsonl"


class RunDir:
    """A run directory (see the module docstring); nothing is read until asked."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # -- paths ---------------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        """``config.json``: the resolved configuration and its provenance."""
        return self.root / "config.json"

    @property
    def metadata_path(self) -> Path:
        """``metadata.jsonl``: one row per finished sample."""
        return self.root / "metadata.jsonl"

    @property
    def summary_path(self) -> Path:
        """``run_summary.json``: samples, failures, frames and seconds."""
        return self.root / "run_summary.json"


    def volatile_files(self) -> tuple[Path, ...]:
        """The files no number depends on: the lock and the summary (whose wall times change
        on a resume that changes nothing else)."""
        return (self.lock_path, self.summary_path)

    @property
    def lock_path(self) -> Path:
        """``.lock``: held while a run writes."""
        return self.root / ".lock"

    @property
    def samples_dir(self) -> Path:
        """``samples/``: one folder per dialogue."""
        return self.root / "samples"

    def sample_files(self, sample_id: str, event_id: str) -> SampleFiles:
        """The files of one sample (ids are checked: never paths)."""
        folder = self.samples_dir / safe_name(sample_id, "dialogue id")
        event = safe_name(event_id, "event id")
        return SampleFiles(folder / f"{event}.wav", folder / f"{event}.context.wav",
                           folder / f"{event}.json", folder / f"{event}.trace.json")

    def output_wavs(self) -> list[Path]:
        """Every sample output wav under ``samples/`` (the context wavs left out)."""
        return [p for p in self.samples_dir.rglob("*.wav")
                if not p.name.endswith(".context.wav")]

    def relative(self, path: Path) -> str:
        """``path`` relative to the run directory, as stored in records and metadata."""
        return path.relative_to(self.root).as_posix()

    def analysis(self, truth: bool = False) -> AnalysisFiles:
        """The analysis folder (``analysis-truth`` for the system's logged speech)."""
        return AnalysisFiles(self.root / ("analysis-truth" if truth else "analysis"))

    def scores(self, truth: bool = False, variant: str = "m3") -> ScoreFiles:
        """The scores of one timing variant, ``scores/{variant}/`` (``scores-truth/{variant}/``
        from the truth analysis), so that no variant's scoring overwrites another's."""
        return ScoreFiles(self._scores_root(truth) / safe_name(variant, "variant"))

    def _scores_root(self, truth: bool) -> Path:
        return self.root / ("scores-truth" if truth else "scores")

    def scored(self, truth: bool = False) -> list[ScoreFiles]:
        """Every scoring of the run that wrote its results: one folder per variant, after the
        single ``scores/`` folder of a run scored before there were per-variant folders."""
        base = self._scores_root(truth)
        if not base.is_dir():
            return []
        found = [ScoreFiles(p) for p in sorted(base.iterdir())
                 if p.is_dir() and ScoreFiles(p).results.is_file()]
        return [ScoreFiles(base), *found] if ScoreFiles(base).results.is_file() else found

    def temporary_files(self) -> Iterator[Path]:
        """Temporary files a killed writer left (never a finished file)."""
        return self.root.rglob(".*.tmp-*")

    # -- reading -------------------------------------------------------------------------------
    def read_config(self) -> RunConfigFile:
        """``config.json``; :class:`DuplexevalError` naming the file when absent or bad."""
        return _model(self.config_path, RunConfigFile)

    def read_summary(self) -> RunSummary | None:
        """``run_summary.json``, or ``None`` when absent or unreadable (a run in progress)."""
        try:
            return _model(self.summary_path, RunSummary)
        except DuplexevalError:
            return None

    def read_metadata(self) -> list[MetadataRow]:
        """``metadata.jsonl``, in plan order; errors name the file and line."""
        rows: list[MetadataRow] = []
        seen: dict[str, int] = {}
        for no, row in _jsonl(self.metadata_path):
            with located(self.metadata_path, no):
                rows.append(MetadataRow.model_validate(row))
            if rows[-1].event_id in seen:  # a line given twice would be scored twice
                raise DuplexevalError(f"{self.metadata_path}:{no}: event "
                                      f"{rows[-1].event_id!r} again (first on line "
                                      f"{seen[rows[-1].event_id]})")
            seen[rows[-1].event_id] = no
        return rows

    def read_record(self, sample_id: str, event_id: str) -> SampleRecord | None:
        """A sample's record, or ``None`` when it has none (not run yet)."""
        path = self.sample_files(sample_id, event_id).record
        return _model(path, SampleRecord) if path.exists() else None

    def finished(self, sample_id: str, event_id: str) -> bool:
        """True when the sample's record says ``ok`` and its wav is the one the record
        describes (an unreadable record or wav is not finished: the sample runs again)."""
        try:
            record = self.read_record(sample_id, event_id)
            return (record is not None and record.status == "ok"
                    and self.audio_problem(sample_id, event_id, record) is None)
        except DuplexevalError:  # an unreadable record or wav
            return False

    def audio_problem(self, sample_id: str, event_id: str,
                      record: SampleRecord | None = None) -> str | None:
        """Why the output wav of a finished sample is not the one its record describes (absent,
        unreadable, or of another length: cut short, or overwritten), or ``None`` when it is
        (or the record, of an older version, does not say its length)."""
        record = record if record is not None else self.read_record(sample_id, event_id)
        if record is None or record.audio_frames is None:
            return None
        wav = self.sample_files(sample_id, event_id).wav
        if not wav.is_file():
            return f"{wav}: missing, but its record says the sample finished"
        if (frames := audio_info(wav).frames) != record.audio_frames:
            return (f"{wav}: {frames} frames, but its record says {record.audio_frames} "
                    "(cut short or overwritten)")
        return None

    def output_audio(self, row: MetadataRow) -> Path:
        """The stereo output wav of a metadata row."""
        return self.root / row.output_audio_path

    # -- writing (atomic; the executor's) -------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run's lock file; :class:`DuplexevalError` when another run holds it."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock = open(self.lock_path, "w")  # noqa: SIM115 - held for the whole block
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise DuplexevalError(f"{self.root} is in use by another duplexeval run") from None
        try:
            yield
        finally:
            lock.close()

    def write_config(self, config: RunConfigFile) -> None:
        """Write ``config.json`` (atomically)."""
        atomic_write_json(self.config_path, config.model_dump(by_alias=True))

    def write_wav(self, path: Path, ch0: np.ndarray, ch1: np.ndarray, rate: int) -> None:
        """A stereo wav (ch0 user, ch1 system).  PCM_24: lossless to -144 dB and
        byte-reproducible (float WAVs carry a timestamped PEAK chunk)."""
        write_audio(path, stereo(ch0, ch1), rate, subtype="PCM_24")

    def write_record(self, sample_id: str, event_id: str, record: SampleRecord) -> None:
        """A sample's record (its keys as set: an ``ok`` and a ``failed`` record differ)."""
        atomic_write_json(self.sample_files(sample_id, event_id).record,
                          record.model_dump(exclude_unset=True))

    def write_trace(self, sample_id: str, event_id: str, trace: dict[str, Any]) -> Path:
        """A sample's real-time trace file; returns its path."""
        path = self.sample_files(sample_id, event_id).trace
        atomic_write_json(path, trace)
        return path

    def read_trace(self, sample_id: str, event_id: str) -> dict[str, Any] | None:
        """A sample's real-time trace, or ``None`` when it has none (or it is unreadable)."""
        path = self.sample_files(sample_id, event_id).trace
        try:
            data = loads_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # ValueError: not JSON, not UTF-8
            return None
        return data if isinstance(data, dict) else None

    def write_metadata(self, rows: Sequence[MetadataRow]) -> None:
        """Write ``metadata.jsonl`` (atomically), one line per row."""
        atomic_write_text(self.metadata_path, "".join(json_line(r.model_dump()) for r in rows))

    def write_summary(self, summary: RunSummary) -> None:
        """Write ``run_summary.json`` (atomically)."""
        atomic_write_json(self.summary_path, summary.model_dump())

    def system_info(self) -> SystemInfo | None:
        """The run's system from its config (``None`` without a readable config)."""
        try:
            return self.read_config().system
        except DuplexevalError:
            return None

    def dataset_language(self) -> tuple[str, str]:
        """(language, domain) of the run's dataset ('' when unknown or without a config)."""
        try:
            dataset = self.read_config().dataset
        except DuplexevalError:
            return "", ""
        return dataset.language or "", dataset.domain or ""


def open_run(path: str | Path) -> RunDir:
    """A run directory made by ``duplexeval run``, checked to have a readable ``config.json``
    (like inspect_ai's ``read_eval_log``: the documented way into a run)::

        run = open_run("runs/cascade-multi-gen")
        run.read_config().system.name, [r.event_id for r in run.read_metadata()]
    """
    run = RunDir(Path(path))
    if not run.config_path.is_file():
        raise DuplexevalError(f"{run.root}: not a run directory (no {run.config_path.name}); "
                              "make one with `duplexeval run`")
    run.read_config()
    return run


M = TypeVar("M", bound=BaseModel)


def _model(path: Path, model: type[M]) -> M:
    data = read_json(path)
    if has_non_finite(data):  # every file of a run is written as strict JSON
        raise DuplexevalError(f"{path}: holds NaN or Infinity, which no run file does")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "top level"
        raise DuplexevalError(f"{path}: {where}: {first['msg']}") from None


def _jsonl(path: Path) -> list[tuple[int, Any]]:
    """The (1-based line number, object) of each non-blank line of ``path``; an error names
    the file (and line)."""
    if not path.is_file():
        raise DuplexevalError(f"{path}: not found; is this a run directory (duplexeval run)?")
    with located(path):
        text = path.read_text(encoding="utf-8")
    out = []
    for no, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                with located(path, no):
                    out.append((no, loads_json(line)))
            except json.JSONDecodeError as exc:
                raise DuplexevalError(f"{path}:{no}: not valid JSON ({exc.msg})") from None
    return out
