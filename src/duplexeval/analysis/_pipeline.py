"""``duplexeval analyze``: turn every sample of a run into timestamped speech segments.

For each finished sample the stereo output wav (channel 0 the user input as fed, channel 1 the
system output; time zero = ``input_start``) is analysed channel by channel:

1. voice activity (:func:`~duplexeval.speech._activity.detect_activity`) gives speech spans;
2. spans closer than 0.5 s merge into segments (the official segmentation rule);
3. with ASR, on the channels in ``asr_channels`` (default: the system channel), the segments
   shorter than ``asr_max_segment`` (default 1.0 s, the only ones whose words an M3 timing
   metric reads) are transcribed, and on the samples of the event types in
   ``content_event_types`` (default TURN_SHIFT, the events the content metrics judge) every
   segment of the ``content_channels`` (default both) is (word timestamps); each word is
   attached to the segment it overlaps most (words over no segment are dropped as
   hallucinations on silence); words give
   the segment its text and word count (``chunks``), the VAD gives its boundaries.  A channel
   with no such segment (e.g. a system that never spoke) costs no ASR.  The short regions
   of up to ``asr_shared_samples`` (64) samples share Whisper windows, so a channel's words
   may depend on the chunks beside it in its window (a cached channel keeps the words of its
   first analysis); on the demo runs the M3 values equal those of transcribing every segment
   one sample at a time (``perf/analysis_asr_scope.py``).  Without ASR
   (``asr="none"``) segments have no words.

Deviation from the official pipeline, on purpose: the official boundaries are MFA word times of
Whisper text; ours are VAD boundaries, which are measured against logged truth (benchmark
``perf/analysis_accuracy.py``) and need no aligner.

Outputs, in ``RUN_DIR/analysis/`` (the official ``asr/`` layout, so ``score --m3`` reads it too):
``{sample_id}/{event_id}.json`` transcripts, ``metadata.jsonl`` (the run's metadata plus
``output_asr_path``, relative to this folder), ``settings.json`` and ``inputs.json`` (SHA-256 of
the run's ``metadata.jsonl`` and of every output wav it was made from).  Per-channel results are
cached under ``cache_root()/analysis`` by (audio content hash, settings), so re-analysis is free.

An analysis is *current* for a request (:func:`stale_reason`) only when its ``settings.json``
equals the settings the request would record and ``inputs.json`` matches the run's files now;
:func:`ensure_analysis` reuses a current analysis and otherwise analyses again, saying why.

Spreading (``executor``, ``duplexeval analyze|score --executor dask``): the samples are cut, in
metadata order, into batches of ``asr_shared_samples`` (the Whisper window groups, so the words
do not depend on where a batch runs; 8 samples without ASR), each batch one task
(:func:`analyze_batch`) that reads its wavs, looks up and fills the same per-channel cache
(``cache`` is resolved by the caller and handed to the workers: one shared folder, written
atomically per entry, so workers never collide) and returns the segments; the caller writes
every file, in metadata order.  The analysis folder is byte-identical to a local one's.  The
ASR model loads once per worker process.  A run smaller than one batch is one task: lower
``asr_shared_samples`` to spread it (a recorded setting).

``truth=True`` writes ``RUN_DIR/analysis-truth/`` instead, with channel-1 segments from the
speech intervals the system logged (``trace.system_speech``, e.g. ``scripted``): the reference
the analysis is checked against.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from duplexeval._audio import AudioReadError, read_audio
from duplexeval._cache import cache_root
from duplexeval._fileio import atomic_write_json, remove_stale_temporaries
from duplexeval.analysis._segments import Chunk, SpeechSegment, segments_from_spans, transcript_json
from duplexeval.errors import DuplexevalError
from duplexeval.runs._directory import AnalysisInputs, AnalysisRow, MetadataRow, RunDir
from duplexeval.runs._execution import LocalExecutor, TaskMap
from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity_many
from duplexeval.timeline import Span
from duplexeval.version import __version__

__all__ = ["AnalysisOptions", "BatchTask", "analyze_batch", "analyze_channel", "analyze_run",
           "check_sample_audio", "ensure_analysis", "stale_reason"]

VAD_TASK_SAMPLES = 8
"""Samples per task without ASR (the segments of a sample do not depend on its batch)."""

TRUTH_SETTINGS: dict[str, Any] = {"truth": "trace.system_speech"}
"""The settings of a truth analysis (segments from the speech the system logged)."""


@dataclass(frozen=True)
class AnalysisOptions:
    """Everything that changes the analysis (recorded in ``settings.json`` and results)."""

    vad: ActivityOptions = field(default_factory=lambda: ActivityOptions(engine=VadEngine.SILERO))
    asr: str = "base-packaged"
    """faster-whisper model: ``base-packaged`` (the offline default), a model name or a local
    path; ``none`` for voice activity only."""
    asr_channels: tuple[int, ...] = (1,)
    """Channels transcribed when ASR is on.  Default: the system channel only, the one whose
    words the M3 timing metrics read (the backchannel rule's word count, ``chunks``); the user
    channel gets voice-activity segments without words."""
    language: str | None = None
    """ASR language; None takes the run's dataset language."""
    asr_max_segment: float | None = 1.0
    """Seconds: only segments shorter than this (``end - start < asr_max_segment``) are
    transcribed; longer ones keep empty ``text`` and ``chunks``.  The default 1.0 is the M3
    model-backchannel rule's duration bound (``duration < 1.0 and words < 4``,
    :mod:`duplexeval.metrics.timing._m3`): the only place the M3 timing metrics read words, so a
    longer segment's words change no M3 value.  None transcribes every segment."""
    content_event_types: tuple[str, ...] = ("TURN_SHIFT",)
    """Samples of these event types get the full transcript the content metrics read: with
    ASR on, every segment of every channel is transcribed (the user's utterance and the
    system's whole response), whatever ``asr_channels`` and ``asr_max_segment`` say.  ``()``
    turns it off (timing only)."""
    content_channels: tuple[int, ...] = (0, 1)
    """The channels a content sample transcribes in full (0: the user as fed, 1: the system):
    both by default, since a judge reads the user's utterance beside the reply; ``(1,)`` when
    only the system's words are read (``eval`` without a judge: M3's QA F1 and FLEXI's word
    rules read nothing else), which saves the user channel's Whisper windows."""
    asr_shared_samples: int = 64
    """Samples analysed together: the ASR regions of their channels share Whisper windows (1:
    each sample's regions on their own, as before shared windows).  Also bounds the audio held
    in memory."""

    asr_processes: int | None = None
    """Processes that decode the Whisper windows of a batch (None: one per CPU, at most 4, and
    1 inside a Dask worker; :func:`~duplexeval.speech._asr_pool.default_processes`).  Changes
    speed only, so it is not a recorded setting: the words are the same for any count."""

    def __post_init__(self) -> None:
        if self.asr_processes is not None and self.asr_processes < 1:
            raise ValueError(f"asr_processes must be >= 1 or None, got {self.asr_processes}")
        if self.asr_shared_samples < 1:
            raise ValueError(f"asr_shared_samples must be >= 1, got {self.asr_shared_samples}")
        if not self.content_channels or any(c not in (0, 1) for c in self.content_channels):
            raise ValueError(f"content_channels must be a non-empty subset of (0, 1), got "
                             f"{self.content_channels}")
        if self.asr_max_segment is not None and self.asr_max_segment <= 0:
            raise ValueError(f"asr_max_segment must be > 0 s or None, got {self.asr_max_segment}")

    def settings(self, asr_settings: dict[str, Any] | str | None = None) -> dict[str, Any]:
        vad = {k: (v.value if isinstance(v, VadEngine) else v) for k, v in asdict(self.vad).items()}
        return {"vad": vad, "asr": asr_settings if asr_settings is not None else self.asr,
                "asr_channels": list(self.asr_channels), "asr_max_segment_s": self.asr_max_segment,
                "asr_shared_samples": self.asr_shared_samples,
                "content_event_types": list(self.content_event_types),
                "content_channels": list(self.content_channels),
                "language": self.language, "segment_gap": 0.5, "duplexeval": __version__}


def _attach_words(segments: list[SpeechSegment], words: Sequence[Chunk]) -> list[SpeechSegment]:
    """Give each VAD segment the ASR words that overlap it most (clipped to it)."""
    buckets: list[list[Chunk]] = [[] for _ in segments]
    for w in words:
        best, best_overlap = -1, 0.0
        for i, s in enumerate(segments):
            overlap = min(w.end, s.end) - max(w.start, s.start)
            if overlap > best_overlap:
                best, best_overlap = i, overlap
        if best >= 0:
            s = segments[best]
            buckets[best].append(Chunk(max(w.start, s.start), min(w.end, s.end), w.text))
    return [SpeechSegment.of(s.channel, s.start, s.end, " ".join(c.text for c in b), tuple(b))
            for s, b in zip(segments, buckets, strict=True)]


class _Analyzer:
    """One run's analysis engines (the ASR model loads once, lazily)."""

    def __init__(self, options: AnalysisOptions, language: str | None) -> None:
        self.options = options
        self.language = options.language or language or None
        self._transcriber: Any = None

    @property
    def transcriber(self) -> Any:
        if self._transcriber is None and self.options.asr != "none":
            self._transcriber = _transcriber(self.options.asr, self.options.asr_processes)
        return self._transcriber

    def settings(self) -> dict[str, Any]:
        asr = self.transcriber.settings() if self.transcriber is not None else "none"
        out = self.options.settings(asr)
        out["language"] = self.language
        return out

    def channel(self, x: np.ndarray, rate: int, channel: int, cache: Path | None,
                full: bool = False) -> list[SpeechSegment]:
        """Segments of one channel (see :meth:`channels`)."""
        return self.channels([(x, rate, channel, full)], cache)[0]

    def _cache_path(self, x: np.ndarray, rate: int, scope: str,
                    cache: Path | None) -> Path | None:
        if cache is None:
            return None
        settings = {**self.settings(), "content_event_types": None}
        del settings["content_channels"]  # a channel's scope says what it got
        if scope == "none":
            settings["asr"] = "none"
        key = hashlib.sha256(json.dumps([settings, rate, scope], sort_keys=True).encode()
                             + np.ascontiguousarray(x, dtype=np.float32).tobytes()).hexdigest()
        return cache / key[:2] / f"{key}.json"

    def _vad_threads(self) -> int:
        """Threads for the voice activity of one batch's channels: as many as the Whisper
        worker processes (``asr_processes``, default one per CPU; 1 in a Dask or pool worker,
        where the cores are already shared out)."""
        from duplexeval.speech._asr_pool import can_fork_workers, default_processes

        if not can_fork_workers():
            return 1
        if self.options.asr_processes is not None:
            return self.options.asr_processes
        try:
            return default_processes()
        except DuplexevalError:  # a bad DUPLEXEVAL_ASR_PROCESSES: ASR refuses it up front,
            return 1  # an analysis without ASR never read it

    def _scope(self, channel: int, full: bool) -> str:
        """What a channel gets: ``none`` (voice activity only), ``short`` (segments shorter than
        ``asr_max_segment`` transcribed) or ``full`` (every segment transcribed)."""
        if self.options.asr == "none":
            return "none"
        if (full and channel in self.options.content_channels) or (
                channel in self.options.asr_channels and self.options.asr_max_segment is None):
            return "full"
        return "short" if channel in self.options.asr_channels else "none"

    def channels(self, items: Sequence[tuple[np.ndarray, int, int, bool]],
                 cache: Path | None) -> list[list[SpeechSegment]]:
        """Segments of several channels ``(samples, rate, channel number, full)``, in order;
        ``full`` asks for every segment's words (a content sample).

        Cached channels are read back; the others get voice activity, and those that need
        words are transcribed together (:meth:`~duplexeval.speech._asr.Transcriber.
        transcribe_many`: their short regions share Whisper windows).  A damaged cache entry
        is recomputed.
        """
        out: list[list[SpeechSegment] | None] = [None] * len(items)
        todo: list[tuple[int, str, Path | None]] = []
        for i, (x, rate, channel, full) in enumerate(items):
            scope = self._scope(channel, full)
            path = self._cache_path(x, rate, scope, cache)
            if path is not None and path.is_file():
                try:
                    out[i] = [_segment_from_json(channel, s)
                              for s in json.loads(path.read_text())]
                    continue
                except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                    pass  # a damaged cache entry is recomputed
            todo.append((i, scope, path))
        spans = detect_activity_many([(items[i][0], items[i][1]) for i, _, _ in todo],
                                     self.options.vad, self._vad_threads()) if todo else []
        pending: list[tuple[int, list[SpeechSegment], list[SpeechSegment], Path | None]] = []
        for (i, scope, path), found in zip(todo, spans, strict=True):
            channel = items[i][2]
            use_asr = scope != "none"
            segments = segments_from_spans(found, channel)
            limit = None if scope == "full" else self.options.asr_max_segment
            wanted = [s for s in segments if limit is None or s.end - s.start < limit]
            if use_asr and wanted:  # no speech (a silent system), nothing short: no ASR
                pending.append((i, segments, wanted, path))
            else:
                out[i] = segments
                _store(path, segments)
        if pending:
            words = self.transcriber.transcribe_many(
                [(items[i][0], items[i][1], [Span(s.start, s.end) for s in wanted])
                 for i, _, wanted, _ in pending], self.language)
            for (i, segments, _, path), found in zip(pending, words, strict=True):
                attached = _attach_words(segments, [Chunk(w.start, w.end, w.text) for w in found])
                out[i] = attached
                _store(path, attached)
        return [segs if segs is not None else [] for segs in out]


def _store(path: Path | None, segments: list[SpeechSegment]) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, [s.to_json() for s in segments])


_TRANSCRIBERS: dict[tuple[str, int], Any] = {}
_TRANSCRIBERS_LOCK = threading.Lock()


def _transcriber(model: str, processes: int | None) -> Any:
    """One :class:`~duplexeval.speech._asr.Transcriber` per model name, worker count and
    process, so that the Whisper model (and its worker pool) loads once however many runs are
    analysed (it is thread-safe)."""
    from duplexeval.speech._asr_pool import default_processes

    key = (model, processes if processes is not None else default_processes())
    with _TRANSCRIBERS_LOCK:  # analyses in two threads (the demo's rows) share one
        if key not in _TRANSCRIBERS:
            from duplexeval.speech._asr import Transcriber

            _TRANSCRIBERS[key] = Transcriber(model=model, processes=key[1])
        return _TRANSCRIBERS[key]


def _segment_from_json(channel: int, s: dict[str, Any]) -> SpeechSegment:
    chunks = tuple(Chunk(float(c["timestamp"][0]), float(c["timestamp"][1]), str(c["text"]))
                   for c in s.get("chunks", []))
    return SpeechSegment.of(channel, float(s["timestamp"][0]), float(s["timestamp"][1]),
                   str(s.get("text", "")), chunks)


def analyze_channel(x: np.ndarray, sample_rate: int, channel: int,
                    options: AnalysisOptions = AnalysisOptions(), language: str | None = None,
                    cache: Path | None = None, full: bool = False) -> list[SpeechSegment]:
    """Segments of one channel of audio (seconds from its start); ``full`` transcribes every
    segment (the content transcript) whatever the options' ASR scope."""
    return _Analyzer(options, language).channel(x, sample_rate, channel, cache, full)


def _truth_segments(run: RunDir, row: MetadataRow) -> list[SpeechSegment]:
    record = run.read_record(row.sample_id, row.event_id)
    speech = None if record is None else record.typed_trace().system_speech
    if speech is None:
        raise DuplexevalError(f"{row.event_id}: the system logged no speech intervals "
                              "(trace.system_speech); --truth needs a system that logs them")
    t0, length = float(row.input_start), float(row.input_end) - float(row.input_start)
    spans = [Span(max(0.0, a - t0), min(length, b - t0)) for a, b in speech
             if b - t0 > 0 and a - t0 < length]
    return segments_from_spans([s for s in spans if s.duration > 0], 1)


def _read_outputs(run: RunDir, batch: list[MetadataRow], audio_sha: dict[str, str],
                  ) -> list[tuple[np.ndarray, int]]:
    """The output wavs of ``batch`` (recording their SHA-256 by relative path)."""
    audio = []
    for row in batch:
        wav = run.output_audio(row)
        try:
            x, rate = read_audio(wav)
        except AudioReadError as exc:
            raise DuplexevalError(f"{wav}: cannot read audio ({exc.reason})") from None
        audio_sha[row.output_audio_path] = _file_sha256(wav)
        audio.append((x, rate))
    return audio


@dataclass(frozen=True)
class BatchTask:
    """One batch of a run's samples to analyse (picklable: a task on a Dask worker)."""

    run_root: Path
    rows: tuple[MetadataRow, ...]
    options: AnalysisOptions
    language: str | None
    """The run's dataset language (``options.language`` overrides it)."""
    cache: Path | None
    truth: bool = False


def analyze_batch(task: BatchTask) -> tuple[list[list[SpeechSegment]], dict[str, str]]:
    """The segments of each sample of ``task`` (in its order) and the SHA-256 of each output
    wav by relative path; runs wherever the executor puts it (see the module docstring)."""
    run = RunDir(task.run_root)
    audio_sha: dict[str, str] = {}
    batch = list(task.rows)
    audio = _read_outputs(run, batch, audio_sha)
    if task.truth:
        return [_truth_segments(run, row) for row in batch], audio_sha
    content = set(task.options.content_event_types)
    items = [(np.ascontiguousarray(x[:, ch]), rate, ch, row.event_type in content)
             for row, (x, rate) in zip(batch, audio, strict=True) for ch in range(x.shape[1])]
    found = iter(_Analyzer(task.options, task.language).channels(items, task.cache))
    return [[s for _ in range(x.shape[1]) for s in next(found)] for x, _rate in audio], audio_sha


def analyze_run(run_dir: Path, options: AnalysisOptions = AnalysisOptions(),
                truth: bool = False, progress: bool = True,
                cache: Path | None = None, executor: TaskMap | None = None,
                on_samples: Callable[[int], None] | None = None) -> Path:
    """Analyse every finished sample of a run, its batches spread over ``executor`` (default:
    this process); returns the analysis folder.  ``on_samples(k)`` is called (in this
    process) as each batch of ``k`` samples is analysed: a caller's own progress display."""
    run = RunDir(run_dir)
    rows = run.read_metadata()
    check_sample_audio(run, rows)
    remove_stale_temporaries(run.analysis(truth).root)  # a killed analysis's half-written files
    language, _domain = run.dataset_language()
    if options.asr != "none" and not truth:
        _check_environment(options)
    if cache is None:
        cache = cache_root() / "analysis"
    files = run.analysis(truth)
    metadata_sha = _file_sha256(run.metadata_path)
    step = options.asr_shared_samples
    if truth or options.asr == "none":
        step = min(step, VAD_TASK_SAMPLES)
    tasks = [BatchTask(run.root, tuple(rows[i:i + step]), options, language, cache, truth)
             for i in range(0, len(rows), step)]
    found: list[tuple[list[list[SpeechSegment]], dict[str, str]] | None] = [None] * len(tasks)
    with tqdm(total=len(rows), desc="analyze", unit="sample", file=sys.stderr,
              disable=not progress) as bar:

        def done(i: int, result: tuple[list[list[SpeechSegment]], dict[str, str]]) -> None:
            found[i] = result
            bar.update(len(tasks[i].rows))
            if on_samples is not None:
                on_samples(len(tasks[i].rows))

        (executor or LocalExecutor()).map(analyze_batch, tasks, done)
    audio_sha: dict[str, str] = {}
    out_rows, transcripts = [], []
    for task, result in zip(tasks, found, strict=True):
        assert result is not None  # map returns when every task is done
        audio_sha.update(result[1])
        for row, segments in zip(task.rows, result[0], strict=True):
            key = files.transcript_key(row.sample_id, row.event_id)
            out_rows.append(AnalysisRow(**{**row.model_dump(), "output_asr_path": key}))
            transcripts.append((files.root / key, transcript_json(segments)))
    for path, transcript in transcripts:  # written only once every sample is analysed
        atomic_write_json(path, transcript)
    files.start()
    files.finish(out_rows, AnalysisInputs(metadata_sha256=metadata_sha, audio=audio_sha),
                 TRUTH_SETTINGS if truth else _Analyzer(options, language).settings())
    return files.root


def check_sample_audio(run: RunDir, rows: Sequence[MetadataRow]) -> None:
    """Refuse, before any work, a run whose sample wav is not the one its record describes
    (:meth:`~duplexeval.runs._directory.RunDir.audio_problem`: cut short, overwritten,
    missing)."""
    for row in rows:
        problem = run.audio_problem(row.sample_id, row.event_id)
        if problem is not None:
            raise DuplexevalError(f"{problem}; `duplexeval run` with the same options runs "
                                  "the sample again")


def _check_environment(options: AnalysisOptions) -> None:
    """Refuse a bad ``DUPLEXEVAL_CPU_KERNELS`` or ``DUPLEXEVAL_ASR_PROCESSES`` before any
    work starts (one line, nothing written), rather than from inside the first batch."""
    from duplexeval.speech._asr_pool import default_processes
    from duplexeval.speech._kernels import kernel_mode

    kernel_mode()
    if options.asr_processes is None:
        default_processes()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _describe(settings: dict[str, Any], key: str) -> str:
    """``key=value`` for a reason line; ``asr`` is named by its model (or ``none``)."""
    value = settings.get(key)
    if key == "asr" and isinstance(value, dict):
        return f"asr={value.get('model', '?')}"
    if key == "vad" and isinstance(value, dict):
        return f"vad={value.get('engine', '?')}"
    if isinstance(value, str):
        return f"{key}={value}"
    return f"{key}={json.dumps(value, sort_keys=True)}"


def _settings_change(old: dict[str, Any], new: dict[str, Any]) -> tuple[str, str]:
    """Short descriptions of how ``old`` and ``new`` settings differ (first differing keys;
    a nested difference under an equal short name is spelled out one level down)."""
    keys = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    before, after = [], []
    for key in keys[:3]:
        a, b = _describe(old, key), _describe(new, key)
        if a == b and isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            sub = [k for k in sorted(set(old[key]) | set(new[key]))
                   if old[key].get(k) != new[key].get(k)][:2]
            a = ", ".join(f"{key}.{_describe(old[key], k)}" for k in sub)
            b = ", ".join(f"{key}.{_describe(new[key], k)}" for k in sub)
        before.append(a)
        after.append(b)
    return ", ".join(before), ", ".join(after)


def _expected_settings(run_dir: Path, options: AnalysisOptions, truth: bool) -> dict[str, Any]:
    """The ``settings.json`` an analysis of ``run_dir`` with ``options`` would write (loads no
    model; JSON round trip so that tuples compare as the lists on disk)."""
    if truth:
        return dict(TRUTH_SETTINGS)
    language, _domain = RunDir(run_dir).dataset_language()
    return json.loads(json.dumps(_Analyzer(options, language).settings()))


def stale_reason(run_dir: Path, options: AnalysisOptions = AnalysisOptions(),
                 truth: bool = False) -> str | None:
    """None when ``run_dir``'s analysis folder holds an analysis made with exactly these
    settings from the run's current ``metadata.jsonl`` and output audio; otherwise one line
    saying why it cannot be reused."""
    run = RunDir(run_dir)
    files = run.analysis(truth)
    folder = files.root
    settings = files.read_settings()
    if settings is None or not files.metadata.is_file():
        return f"no complete analysis in {folder}; analysing"
    expected = _expected_settings(run_dir, options, truth)
    if settings != expected:
        before, after = _settings_change(settings, expected)
        return f"analysis in {folder} was made with {before}; analysing again with {after}"
    inputs = files.read_inputs()
    if inputs is None:
        return f"analysis in {folder} records no input hashes (older duplexeval); analysing again"
    meta = run.metadata_path
    if not meta.is_file() or _file_sha256(meta) != inputs.metadata_sha256:
        return (f"analysis in {folder} was made for other samples ({meta.name} changed); "
                "analysing again")
    changed = 0
    for rel, digest in inputs.audio.items():
        wav = run.root / rel
        if not wav.is_file() or _file_sha256(wav) != digest:
            changed += 1
    if changed:
        return (f"analysis in {folder} was made from other audio ({changed} of "
                f"{len(inputs.audio)} output wav(s) changed); analysing again")
    return None


def ensure_analysis(run_dir: Path, options: AnalysisOptions = AnalysisOptions(),
                    truth: bool = False, progress: bool = True,
                    log: Callable[[str], None] | None = None,
                    executor: TaskMap | None = None,
                    on_samples: Callable[[int], None] | None = None) -> Path:
    """The run's analysis for ``options``: reused when current (:func:`stale_reason`),
    otherwise made again (on ``executor``, ``on_samples`` told of each batch done, see
    :func:`analyze_run`) after logging the one-line reason (to ``log``, default stderr);
    returns the analysis folder."""
    run = RunDir(run_dir)
    check_sample_audio(run, run.read_metadata())  # before saying why it would be redone
    reason = stale_reason(run_dir, options, truth)
    if reason is None:
        return RunDir(run_dir).analysis(truth).root
    if options.asr != "none" and not truth:
        _check_environment(options)  # a bad setting is the one line, before the reason
    (log or (lambda line: print(line, file=sys.stderr)))(reason)
    return analyze_run(run_dir, options, truth=truth, progress=progress, executor=executor,
                       on_samples=on_samples)
