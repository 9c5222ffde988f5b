"""``duplexeval score``: score an official M3 output folder or one of our run directories."""

from __future__ import annotations

import json
from pathlib import Path

from ..analysis.pipeline import ANALYSIS_DIR, TRUTH_DIR, AnalysisOptions, analyze_run, run_language
from . import get_variant
from .m3_outputs import read_m3_outputs
from .results import Results, SourceInfo, write_score_outputs
from .scoring import score_events

__all__ = ["score_official", "score_run_dir"]


def score_official(path: Path, out: Path, variant: str = "m3", language: str = "",
                   domain: str = "", transcript_key: str = "output_asr_path") -> Results:
    """Re-score an official pipeline's output folder (see :mod:`duplexeval.metrics.m3_outputs`)."""
    events, meta = read_m3_outputs(path, transcript_key, language, domain)
    timing = get_variant(variant)
    scores = score_events(events, timing)
    source = SourceInfo(kind="m3-official", path=str(path), metadata=str(meta))
    return write_score_outputs(out, scores, timing, source, analysis=None)


def _analysis_is_current(run_dir: Path, folder: Path) -> bool:
    meta, done = run_dir / "metadata.jsonl", folder / "metadata.jsonl"
    return done.is_file() and (folder / "settings.json").is_file() and meta.is_file() \
        and done.stat().st_mtime_ns >= meta.stat().st_mtime_ns


def score_run_dir(run_dir: Path, out: Path | None = None, variant: str = "m3",
                  options: AnalysisOptions | None = None, truth: bool = False,
                  progress: bool = True) -> tuple[Results, Path]:
    """Analyse a run (unless its analysis is current and no options are given; re-analysis is
    cached anyway) and score it; returns the results and the output folder."""
    folder = run_dir / (TRUTH_DIR if truth else ANALYSIS_DIR)
    if options is not None or not _analysis_is_current(run_dir, folder):
        analyze_run(run_dir, options or AnalysisOptions(), truth=truth, progress=progress)
    language, domain = run_language(run_dir)
    events, meta = read_m3_outputs(folder, "output_asr_path", language, domain)
    timing = get_variant(variant)
    scores = score_events(events, timing)
    settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
    out = out or run_dir / ("scores-truth" if truth else "scores")
    source = SourceInfo(kind="run", path=str(run_dir), metadata=str(meta))
    return write_score_outputs(out, scores, timing, source, analysis=settings), out
