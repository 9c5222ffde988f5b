"""What the plots and the HTML report show of one scored event: its case.

A :class:`EventCase` is one (event, dimension) of a scored run with everything needed to *see*
and *hear* it: the sample's times (from the run's metadata), the user and system speech
segments (from the analysis transcripts the scores were computed from: ``analysis/`` for
``scores/``, ``analysis-truth/`` for ``scores-truth/``), the scoring window, the detected system
segment, the verdict, the stereo wav, any content records (offline texts, judge answers) and,
for wall-clock systems, the sample's real-time trace (:mod:`.realtime_trace`).

Conventions:

* Times are **dialogue seconds** (transcripts are relative to the output wav; ``input_start``
  is added), so the same event under Single, Multi (gen) and Multi (ref) lines up.
* Channels: ``user`` is the wav's channel 0 (the user as fed), ``system`` its channel 1.  The
  user's speech is the dataset's aligned words of the user channel (what was fed), grouped into
  segments at silences of 0.5 s or more and cut where the input is muted (the event start; the
  event end for BC and BARGE_IN); when the dataset cannot be loaded, the transcript's channel
  0.  The system's is the transcript's channel 1.
* The verdict (:func:`verdict`): ``pass``/``fail`` where the dimension has a turn-over rule
  (smooth turn-taking: ``tor ↑`` = 1 passes; pause handling: ``tor ↓`` = 0 passes),
  ``none`` where it has only a latency (backchannel, barge-in), ``unscored`` without a value.
* The scoring window is the m3 variant's: smooth turn-taking ``[T - max_overlap, input_end]``
  (a system segment starting there that ends after ``T`` takes the turn), pause handling the
  reference pause ``[event_start, event_end]``, backchannel and barge-in
  ``[onset, onset + stop_grace]`` (where the stopping segment must start); the response
  window ``[event_start, input_end]`` for other variants.
* A run without metadata or transcripts (e.g. an official output folder) still gives cases;
  their segments are empty and their times come from the results alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from duplexeval.analysis._segments import Chunk, read_transcript, segments_from_words
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._score_run import run_dialogues
from duplexeval.report._realtime_trace import RealtimeSummary
from duplexeval.results import ScoredRun
from duplexeval.results._content import ContentRecord, OfflineRecord
from duplexeval.results._model import EventResult, Results
from duplexeval.runs._directory import MetadataRow, RunDir

__all__ = ["EventCase", "Segment", "Verdict", "event_cases", "matched_across_languages",
           "matched_across_protocols",
           "verdict"]

Verdict = str
"""``pass``, ``fail``, ``none`` (no pass/fail rule) or ``unscored``."""

TOR_PASS: dict[str, tuple[str, int]] = {"smooth_turn_taking": ("tor ↑", 1),
                                        "pause_handling": ("tor ↓", 0)}
"""Dimension -> (metric, the value that passes)."""


@dataclass(frozen=True)
class Segment:
    """A stretch of speech in dialogue seconds on ``channel`` (0 user, 1 system)."""

    channel: int
    start: float
    end: float
    text: str = ""


@dataclass(frozen=True)
class EventCase:
    """One scored (event, dimension) of a run, ready to draw and to listen to."""

    run: str
    """The run's label (its system, or its folder when two runs would share one)."""
    system: str
    protocol: str
    result: EventResult
    input_start: float
    input_end: float
    context: tuple[float, float] | None
    """The context region heard before the input (``None`` under Single)."""
    window: tuple[float, float]
    segments: tuple[Segment, ...] = ()
    detected: tuple[float, float] | None = None
    """The system segment the metric used (dialogue seconds), if any."""
    audio: Path | None = None
    """The stereo wav (absolute), ``None`` when the results name none."""
    offline: OfflineRecord | None = None
    judged: tuple[ContentRecord, ...] = field(default=())
    realtime: RealtimeSummary | None = None
    """The sample's real-time trace (wall-clock systems; ``None`` for others)."""
    origins: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Latency metric of this dimension -> where its interval starts and ends (the results'
    ``measurement_origin``)."""

    @property
    def key(self) -> str:
        """A unique, file-safe id within a report: run, sample, event and dimension."""
        key = "-".join(_safe(x) for x in (self.run, self.result.sample_id,
                                          self.result.event_id, self.result.dimension))
        if len(key) <= 150:
            return key
        return f"{key[:120]}-{hashlib.sha1(key.encode()).hexdigest()[:12]}"

    @property
    def span(self) -> tuple[float, float]:
        r = self.result
        start = r.event_start if r.event_start is not None else self.input_start
        return start, r.event_end if r.event_end is not None else start

    @property
    def verdict(self) -> Verdict:
        return verdict(self.result)

    @property
    def miss_type(self) -> str:
        value = self.result.info.get("miss_type")
        return str(value) if value is not None else ""

    def match_key(self) -> tuple[str, str, str, str]:
        """Names the event across protocols (whose event ids differ): dialogue, user
        channel, dimension and the event start (ms)."""
        r = self.result
        return (r.sample_id, str(r.user_channel), r.dimension, f"{self.span[0]:.3f}")


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in text)[:80] or "_"


def verdict(result: EventResult) -> Verdict:
    """The event's verdict (see the module docstring)."""
    rule = TOR_PASS.get(result.dimension)
    if rule is None:
        return "none" if any(v is not None for v in result.values.values()) else "unscored"
    value = result.values.get(rule[0])
    if value is None:
        return "unscored"
    return "pass" if int(value) == rule[1] else "fail"


def _window(result: EventResult, settings: dict[str, Any], start: float,
            input_end: float) -> tuple[float, float]:
    dim = result.dimension
    end = result.event_end if result.event_end is not None else start
    if dim == "smooth_turn_taking":
        return start - float(settings.get("max_overlap", 0.4)), input_end
    if dim == "pause_handling":
        return start, end
    if dim in ("user_backchanneling", "user_barge_in"):
        return start, start + float(settings.get("stop_grace", 0.5))
    return start, input_end


def _detected(info: dict[str, Any], offset: float) -> tuple[float, float] | None:
    target = info.get("target_segment")
    if not isinstance(target, dict):
        return None
    stamp = target.get("timestamp")
    if not isinstance(stamp, (list, tuple)) or len(stamp) != 2:
        return None
    return float(stamp[0]) + offset, float(stamp[1]) + offset


@dataclass(frozen=True)
class _RunFiles:
    """What a run directory adds to its results: metadata rows and transcripts."""

    run: RunDir
    truth: bool
    rows: dict[tuple[str, str], MetadataRow]
    dialogues: dict[str, Any]
    """Dialogue id -> :class:`~duplexeval.data._dialogue.Dialogue` (empty when not loadable)."""

    @classmethod
    def of(cls, scored: ScoredRun) -> _RunFiles:
        run = RunDir(scored.run_dir)
        truth = scored.truth
        try:
            rows = {(r.sample_id, r.event_id): r for r in run.read_metadata()}
        except DuplexevalError:
            rows = {}
        try:
            dialogues = run_dialogues(run)[0] or {} if rows else {}
        except DuplexevalError:
            dialogues = {}
        return cls(run, truth, rows, dialogues)

    def segments(self, e: EventResult, offset: float, lo: float) -> tuple[Segment, ...]:
        """The system's segments from the transcript and the user's (module docstring)."""
        path = self.run.analysis(self.truth).transcript(e.sample_id, e.event_id)
        found = []
        if path.is_file():
            try:
                found = read_transcript(path)
            except DuplexevalError:
                found = []
        dialogue = self.dialogues.get(e.sample_id)
        out = [Segment(s.channel, s.start + offset, s.end + offset, s.text) for s in found
               if s.channel == 1 or dialogue is None]
        if dialogue is not None and e.user_channel is not None and e.event_start is not None:
            muted = e.event_end if e.event_type in ("BC", "BARGE_IN") else e.event_start
            words = [Chunk(max(w.start, lo), min(w.end, muted or e.event_start), w.text)
                     for w in dialogue.words_on(e.user_channel) if w.end > lo
                     and w.start < (muted or e.event_start)]
            out += [Segment(0, s.start, s.end, s.text) for s in segments_from_words(words, 0)]
        return tuple(out)


def _case(label: str, results: Results, files: _RunFiles, e: EventResult,
          content: tuple[dict[str, OfflineRecord], dict[str, list[ContentRecord]]]) -> EventCase:
    row = files.rows.get((e.sample_id, e.event_id))
    start = e.event_start if e.event_start is not None else 0.0
    input_start = float(row.input_start) if row else start
    input_end = float(row.input_end) if row else start + 10.0
    context = (float(row.context_start), float(row.context_end)) if row and row.use_context \
        and row.context_end > row.context_start else None
    audio = files.run.root / e.audio if e.audio else None
    offline, judged = content
    return EventCase(
        run=label, system=results.source.system, protocol=results.source.protocol, result=e,
        input_start=input_start, input_end=input_end, context=context,
        window=_window(e, results.variant.settings, start, input_end),
        segments=files.segments(e, input_start, context[0] if context else input_start),
        detected=_detected(e.info, input_start), audio=audio,
        offline=offline.get(e.event_id) if e.dimension == "smooth_turn_taking" else None,
        judged=tuple(judged.get(e.event_id, [])) if e.dimension == "smooth_turn_taking"
        else (), realtime=RealtimeSummary.of(files.run.read_trace(e.sample_id, e.event_id)),
        origins={key.split("/", 1)[1]: (o.start, o.end)
                 for key, o in results.variant.measurement_origin.items()
                 if key.split("/", 1)[0] == e.dimension})


def event_cases(scored: ScoredRun, label: str) -> list[EventCase]:
    """Every (event, dimension) of a scored run as a case, in results order."""
    files = _RunFiles.of(scored)
    offline = {r.event_id: r for r in scored.offline()}
    judged: dict[str, list[ContentRecord]] = {}
    for record in scored.judged():
        judged.setdefault(record.event_id, []).append(record)
    return [_case(label, scored.results, files, e, (offline, judged))
            for e in scored.results.events]


def matched_across_protocols(cases: Sequence[EventCase]) -> list[list[EventCase]]:
    """Groups of one system's cases of the same event under several protocols (in Single,
    Multi (gen), Multi (ref) order), for the side-by-side views."""
    from duplexeval.report._columns import protocol_order

    groups: dict[tuple[str, tuple[str, str, str, str]], dict[str, EventCase]] = {}
    for case in cases:
        groups.setdefault((case.system, case.match_key()), {}).setdefault(case.protocol, case)
    return [sorted(g.values(), key=lambda c: protocol_order(c.protocol))
            for g in groups.values() if len(g) > 1]


def matched_across_languages(cases: Sequence[EventCase]) -> list[list[EventCase]]:
    """Groups of one system's cases of the same dialogue event in several languages, under one
    protocol (English first), for the side-by-side views of a suite and its translation
    (``m3-qa-en`` and ``m3-qa-ja`` share dialogue ids, turns and events, so the event ids
    ``{dialogue}_ch{user}_{k}_{task}`` match while the times differ)."""
    groups: dict[tuple[str, str, str, str], dict[str, EventCase]] = {}
    for case in cases:
        r = case.result
        key = (case.system, case.protocol, r.event_id, r.dimension)
        groups.setdefault(key, {}).setdefault(r.language, case)
    return [[g[lang] for lang in sorted(g, key=lambda x: (x != "en", x))]
            for g in groups.values() if len(g) > 1]
