"""``duplexeval score``: score an official M3 output folder or one of our run directories."""

from __future__ import annotations

from pathlib import Path

from ..analysis.pipeline import AnalysisOptions, ensure_analysis
from ..data.dialogue import Dialogue
from ..data.validate import load_dataset
from ..errors import DuplexevalError
from ..runs.directory import AnalysisFiles, RunDir
from ..segment.pipeline import read_rounds
from .base import get_variant
from .content.context import generated_histories
from .content.inputs import CONTENT_EVENT_TYPES, ContentOptions, HistorySource
from .content.rounds import RoundFinder
from .content.score import JudgeSettings, content_not_computed, score_content
from .m3_outputs import read_m3_outputs
from .results import Results, SourceInfo, write_score_outputs
from .scoring import score_events

__all__ = ["score_official", "score_run_dir"]


def score_official(path: Path, out: Path, variant: str = "m3", language: str = "",
                   domain: str = "", transcript_key: str = AnalysisFiles.TRANSCRIPT_FIELD,
                   ) -> Results:
    """Re-score an official pipeline's output folder (see :mod:`duplexeval.metrics.m3_outputs`)."""
    events, meta = read_m3_outputs(path, transcript_key, language, domain)
    timing = get_variant(variant)
    scores = score_events(events, timing)
    source = SourceInfo(kind="m3-official", path=str(path), metadata=str(meta))
    return write_score_outputs(out, scores, timing, source, analysis=None)


def run_dialogues(run: RunDir) -> tuple[dict[str, Dialogue] | None, str | None]:
    """The run's reference dialogues by id, or ``None`` and why (the dataset moved)."""
    dataset_info = run.read_config().dataset
    root = Path(dataset_info.path)
    if not root.is_dir():
        return None, f"the run's dataset is not at {root} (reference answers need it)"
    try:
        dataset, _warnings = load_dataset(root, dataset_info.split)
    except DuplexevalError as exc:
        return None, f"the run's dataset at {root} does not load ({str(exc).splitlines()[0]})"
    return {d.id: d for d in dataset}, None


def score_run_dir(run_dir: Path, out: Path | None = None, variant: str = "m3",
                  options: AnalysisOptions | None = None, truth: bool = False,
                  progress: bool = True, content: ContentOptions | None = None,
                  judge: JudgeSettings | None = None, rounds: Path | None = None,
                  ) -> tuple[Results, Path]:
    """Score a run; returns the results and the output folder.

    Its analysis (``options``, default :class:`AnalysisOptions`) is reused only when it was made
    with the same settings from the same samples and audio
    (:func:`~duplexeval.analysis.pipeline.stale_reason`); otherwise the run is analysed again
    (per-channel results are cached anyway) and one line on stderr says why.  Content metrics
    (offline always, judged with ``judge``) are computed on the analysis, not on the truth
    analysis (which has no words).  ``rounds`` is a ``duplexeval segment`` output whose rounds
    number the events for the round-by-round curves (default: the segment fallback)."""
    run = RunDir(run_dir)
    options = options or AnalysisOptions()
    folder = ensure_analysis(run_dir, options, truth=truth, progress=progress)
    language, domain = run.dataset_language()
    events, meta = read_m3_outputs(folder, AnalysisFiles.TRANSCRIPT_FIELD, language, domain)
    timing = get_variant(variant)
    scores = score_events(events, timing)
    settings = run.analysis(truth).read_settings()
    out = out or run.scores(truth).root
    system = run.system_info()
    source = SourceInfo(kind="run", path=str(run_dir), metadata=str(meta),
                        system=system.name if system else "",
                        oracle=system.oracle if system else [])
    outcome = None
    if not truth and (options.asr == "none"
                      or not set(CONTENT_EVENT_TYPES) <= set(options.content_event_types)):
        outcome = content_not_computed(domain, "the analysis has no content transcripts "
                                       "(timing-only); `duplexeval score RUN_DIR` makes them")
    elif not truth:
        content = content or ContentOptions()
        dialogues, missing = run_dialogues(run)
        generated = None
        if content.history is HistorySource.GENERATED:
            generated = generated_histories(run, run.read_metadata(), options, language)
        finder = RoundFinder(read_rounds(rounds)) if rounds is not None else None
        outcome = score_content(events, dialogues, content, judge, generated=generated,
                                dialogues_missing=missing, rounds=finder)
    results = write_score_outputs(out, scores, timing, source, analysis=settings,
                                  content=outcome)
    return results, out
