"""``duplexeval score RUN_DIR``: score one of our run directories (an official M3 output folder:
:mod:`duplexeval.peers.m3._scorer`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from duplexeval._fileio import read_json
from duplexeval.analysis._pipeline import AnalysisOptions, ensure_analysis
from duplexeval.data._dialogue import Dialogue
from duplexeval.data._validate import load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._base import EventScore, EventView, TimingVariant, get_variant
from duplexeval.metrics._counterfactual import TWIN_KEY, is_twin
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._realism_reference import silent_reference, with_reference_segments
from duplexeval.metrics._score_outputs import write_score_outputs
from duplexeval.metrics._scoring import score_events
from duplexeval.metrics._stability import stability, system_channel_hashes
from duplexeval.metrics.content._context import generated_histories
from duplexeval.metrics.content._inputs import CONTENT_EVENT_TYPES, ContentOptions, HistorySource
from duplexeval.metrics.content._rounds import RoundFinder, annotated_rounds, dialogue_label
from duplexeval.metrics.content._score import JudgeSettings, content_not_computed, score_content
from duplexeval.metrics.timing._turn_context import turn_context
from duplexeval.results._model import DatasetRef, Results, SourceInfo
from duplexeval.rounds._pipeline import read_rounds
from duplexeval.runs._directory import AnalysisFiles, RunDir
from duplexeval.runs._execution import TaskMap
from duplexeval.runs._interactive import INTERACTIVE_DIR
from duplexeval.runs._interactive_run import realised_dialogue
from duplexeval.timeline import TOL

__all__ = ["reference_problem", "run_source", "score_run_dir", "shared_analysis"]


def run_dialogues(run: RunDir) -> tuple[dict[str, Dialogue] | None, str | None]:
    """The run's reference dialogues by id, or ``None`` and why (the dataset moved, or the
    run is interactive: its events are the realised dialogue's, whose times are not the
    reference's, so no reference answer, history or turn context is read for them)."""
    config = run.read_config()
    if config.protocol == "interactive":
        return None, ("an interactive run's events are the realised dialogue's (their times "
                      "are not the reference dialogue's)")
    dataset_info = config.dataset
    root = Path(dataset_info.path)
    if not root.is_dir():
        return None, f"the run's dataset is not at {root} (reference answers need it)"
    try:
        dataset, _warnings = load_dataset(root, dataset_info.split)
    except DuplexevalError as exc:
        return None, f"the run's dataset at {root} does not load ({str(exc).splitlines()[0]})"
    return {d.id: d for d in dataset}, None


def run_source(run: RunDir, meta: Path) -> SourceInfo:
    """The results' source of a run: its system (with oracle data), protocol and dataset
    (left empty without a readable config, as before)."""
    try:
        config = run.read_config()
    except DuplexevalError:
        return SourceInfo(kind="run", path=str(run.root), metadata=str(meta))
    data = config.dataset
    dataset = DatasetRef(name=data.name, path=data.path, content_hash=data.content_hash,
                         language=data.language or "", domain=data.domain or "")
    return SourceInfo(kind="run", path=str(run.root), metadata=str(meta),
                      system=config.system.name, oracle=config.system.oracle,
                      protocol=config.protocol, dataset=dataset)


def score_run_dir(run_dir: Path, out: Path | None = None, variant: str = "m3",
                  options: AnalysisOptions | None = None, truth: bool = False,
                  progress: bool = True, content: ContentOptions | None = None,
                  judge: JudgeSettings | None = None, rounds: Path | None = None,
                  variant_settings: dict[str, Any] | None = None,
                  executor: TaskMap | None = None,
                  on_samples: Callable[[int], None] | None = None,
                  log: Callable[[str], None] | None = None,
                  ) -> tuple[Results, Path]:
    """Score a run; returns the results and the output folder.

    Its analysis (``options``, default :class:`AnalysisOptions`) is reused only when it was made
    with the same settings from the same samples and audio
    (:func:`~duplexeval.analysis._pipeline.stale_reason`); otherwise the run is analysed again
    (per-channel results are cached anyway) and one line says why (to ``log``, default
    stderr: a caller with a progress bar writes it above the bar).  A variant that needs every
    word of some event types (``full_transcript_events``) adds them to the analysis's
    ``content_event_types``.  Content metrics (offline always, judged with ``judge``) are
    computed on the analysis, not on the truth analysis (which has no words).  ``rounds`` is a
    ``duplexeval segment`` output whose rounds number the events for the round-by-round curves
    (default: the segment fallback).  ``executor`` spreads the analysis's batches over its
    workers (the judge calls go there through ``judge.workers``); ``on_samples(k)`` is told of
    each batch of ``k`` samples analysed (:func:`~duplexeval.analysis._pipeline.analyze_run`)."""
    run = RunDir(run_dir)
    options = options or AnalysisOptions()
    timing = get_variant(variant, **(variant_settings or {}))
    dialogues, missing = run_dialogues(run)
    realised = realised_item_dialogues(run) if dialogues is None else {}  # read before writing
    _check_reference(run_dir, timing, truth, dialogues, missing)
    options = _with_transcripts(options, timing, dialogues)
    folder = ensure_analysis(run_dir, options, truth=truth, progress=progress, executor=executor,
                             on_samples=on_samples, log=log)
    language, domain = run.dataset_language()
    events, meta = read_m3_outputs(folder, AnalysisFiles.TRANSCRIPT_FIELD, language, domain)
    finder = RoundFinder(read_rounds(rounds)) if rounds is not None else RoundFinder()
    events = with_rounds(events, dialogues if dialogues is not None else realised or None,
                         finder, context=dialogues is not None)
    if timing.reference_channel and dialogues is not None:
        events = with_reference_segments(events, dialogues, options)
    events, scores = _score_with_twins(events, timing)
    settings = run.analysis(truth).read_settings()
    out = out or run.scores(truth, variant).root
    source = run_source(run, meta)
    outcome = None
    if not truth and (options.asr == "none"
                      or not set(CONTENT_EVENT_TYPES) <= set(options.content_event_types)):
        outcome = content_not_computed(domain, "the analysis has no content transcripts "
                                       "(timing-only); `duplexeval score RUN_DIR` makes them")
    elif not truth:
        content = content or ContentOptions()
        generated = None
        if content.history is HistorySource.GENERATED:
            generated = generated_histories(run, run.read_metadata(), options, language)
        outcome = score_content(events, dialogues, content, judge, generated=generated,
                                dialogues_missing=missing, rounds=finder)
    kept = [s for s in scores if not is_twin(s)]  # a twin is no try of its original
    tries = stability(kept, timing, system_channel_hashes(kept, run.root))
    results = write_score_outputs(out, scores, timing, source, analysis=settings,
                                  content=outcome, stability=tries)
    return results, out


def _check_reference(run_dir: Path, timing: TimingVariant, truth: bool,
                     dialogues: dict[str, Dialogue] | None, missing: str | None) -> None:
    """A variant reading the reference channel needs the analysed channels, the dataset and
    a reference channel that is not silent throughout."""
    if not timing.reference_channel:
        return
    if truth:
        raise DuplexevalError(f"{run_dir}: the {timing.name} variant compares analysed "
                              "channels (the user's and the reference's); score it without "
                              "--truth")
    problem = _reference_problem(RunDir(run_dir), dialogues, missing)
    if problem is not None:
        raise DuplexevalError(f"{run_dir}: the {timing.name} variant needs the reference "
                              f"channel: {problem}")


def _reference_problem(run: RunDir, dialogues: dict[str, Dialogue] | None,
                       missing: str | None) -> str | None:
    if dialogues is None:
        return missing
    return silent_reference(((r.sample_id, r.user_channel) for r in run.read_metadata()),
                            dialogues)


def reference_problem(run_dir: Path) -> str | None:
    """Why a variant that reads the reference channel (``realism``) cannot score the run
    (``None``: it can): its dataset is unavailable, the run is interactive, or the dataset's
    reference channel is silent in every dialogue the run played."""
    run = RunDir(run_dir)
    dialogues, missing = run_dialogues(run)
    return _reference_problem(run, dialogues, missing)


def _score_with_twins(events: list[EventView], timing: TimingVariant,
                      ) -> tuple[list[EventView], list[EventScore]]:
    """The original events and the scores of every event: the variant prepares on the
    originals alone, then scores the counterfactual twins too
    (:mod:`duplexeval.metrics._counterfactual`)."""
    twins = [e for e in events if isinstance(e.metadata.get(TWIN_KEY), str)]
    originals = [e for e in events if not isinstance(e.metadata.get(TWIN_KEY), str)]
    scores = score_events(originals, timing)
    scores += [s for s in (timing.score(e) for e in twins) if s.dimensions]
    return originals, scores


ANNOTATED_CONTENT_EVENTS = ("BARGE_IN", "BC")
"""Event types whose samples also need full transcripts when the dataset annotates items on
them (FLEXI's user interrupt and backchannel anchors, MTR's interruption rounds)."""


def _with_transcripts(options: AnalysisOptions, variant: TimingVariant,
                      dialogues: dict[str, Dialogue] | None) -> AnalysisOptions:
    """``options`` with the event types a variant or the dataset's annotations need in full,
    and the channels the variant reads them on (a timing-only analysis,
    ``content_event_types=()``, is kept as asked)."""
    events = variant.full_transcript_events
    wanted = list(options.content_event_types) + list(events)
    annotated = dialogues is not None and any(
        "flexi" in d.extra or "mtr" in d.extra for d in dialogues.values())
    if annotated and options.content_event_types:
        wanted += ANNOTATED_CONTENT_EVENTS
    merged = tuple(dict.fromkeys(wanted))
    channels = options.content_channels
    if events:
        channels = tuple(sorted({*channels, *variant.full_transcript_channels}))
    if merged == options.content_event_types and channels == options.content_channels:
        return options
    return replace(options, content_event_types=merged, content_channels=channels)


def shared_analysis(options: AnalysisOptions, variants: Sequence[str],
                    dialogues: Iterable[Dialogue] | None) -> AnalysisOptions:
    """Analysis options that each of ``variants`` scores a run with as they are: ``options``
    with every event type that any of them (or the dataset's annotations) needs in full, so
    that several scorings of one run share one analysis instead of each making its own
    (``duplexeval eval --measures``).  ``dialogues``: the run's dataset (``None``: unknown)."""
    by_id = None if dialogues is None else {d.id: d for d in dialogues}
    while True:
        before = options
        for name in variants:
            options = _with_transcripts(options, get_variant(name), by_id)
        if options == before:
            return options


def with_rounds(events: list[EventView], dialogues: dict[str, Dialogue] | None,
                finder: RoundFinder, context: bool = True) -> list[EventView]:
    """The events with what their dialogue says about them, in their metadata:

    * ``round``: their user round in the dialogue (from 1; absent when the dataset is
      unavailable or no round contains the event start);
    * ``mtr_round``: that round's annotation when the suite annotates rounds (``mtr``);
    * ``dialogue_label``: what the dialogue exercises when its suite says so
      (:func:`~duplexeval.metrics.content._rounds.dialogue_label`: MTR's feature or combination);
    * ``flexi``: the FLEXI item annotation when the event is the item's anchor event (same
      kind, same start within 1e-6 s; :mod:`duplexeval.data._flexi_record`);
    * ``next_user_onset`` and ``reference_turn_end``: where the user next speaks and where the
      reference system's turn around the event start ends (dialogue seconds;
      :func:`~duplexeval.metrics.timing._turn_context.turn_context`), unless ``context`` is
      false (an interactive run's realised dialogues hold no reference system turn)."""
    if dialogues is None:
        return events
    out = []
    for e in events:
        dialogue = dialogues.get(e.sample_id)
        user = int(e.metadata.get("user_channel", 0))
        extra: dict[str, Any] = {}
        if dialogue is not None and context:
            extra.update(turn_context(dialogue, user, e.event_start))
        k = finder.round_of(dialogue, user, e.event_start)
        if k is not None:
            extra["round"] = k
            annotated = annotated_rounds(dialogue, user) if dialogue else []
            if k <= len(annotated):
                extra["mtr_round"] = annotated[k - 1]
        label = dialogue_label(dialogue) if dialogue is not None else None
        if label is not None:
            extra["dialogue_label"] = label
        flexi = _flexi_anchor(dialogue, e)
        if flexi is not None:
            extra["flexi"] = flexi
        out.append(replace(e, metadata={**e.metadata, **extra}) if extra else e)
    return out


def realised_item_dialogues(run: RunDir) -> dict[str, Dialogue]:
    """An interactive run's annotated items (FLEXI items, MTR rounds) on their realised
    timelines, by dialogue id: the dialogues
    :func:`~duplexeval.runs._interactive_run.realised_dialogue` plans them from, with their
    realised records (none for another run, or a timeline that does not read)."""
    out: dict[str, Dialogue] = {}
    for path in sorted((run.root / INTERACTIVE_DIR).glob("*.timeline.json")):
        try:
            timeline = read_json(path, "realised timeline")
        except DuplexevalError:
            continue
        if isinstance(timeline, dict) and isinstance(timeline.get("items"), dict) and \
                "record" in timeline["items"]:
            user = timeline.get("user_channel")
            if not isinstance(user, int) or isinstance(user, bool):
                raise DuplexevalError(f"{path}: not a realised timeline (user_channel "
                                      f"{user!r})")
            stem = path.name.removesuffix(".timeline.json").removesuffix(f"_ch{user}")
            out[stem] = realised_dialogue(stem, timeline, str(path))
    return out


def _flexi_anchor(dialogue: Dialogue | None, event: EventView) -> dict[str, Any] | None:
    record = dialogue.extra.get("flexi") if dialogue is not None else None
    if not isinstance(record, Mapping):
        return None
    anchor = record.get("anchor")
    if not isinstance(anchor, Mapping) or anchor.get("event") != event.event_type:
        return None
    time = anchor.get("time")
    if not isinstance(time, list) or not time or abs(float(time[0]) - event.event_start) > TOL:
        return None
    return dict(record)
