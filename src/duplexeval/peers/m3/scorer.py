"""``duplexeval score --m3 DIR``: the official M3 pipeline's output folder re-scored.

The folder is the one the official inference and ASR scripts write (``metadata.jsonl`` with
each sample's audio and transcript paths: :mod:`duplexeval.metrics.m3_metadata`); it is scored
by a timing variant (``m3`` by default: the official rules) into ``out`` like a run's scores,
with ``source.kind = "m3-official"``.
"""

from __future__ import annotations

from pathlib import Path

from duplexeval.metrics.base import get_variant
from duplexeval.metrics.m3_metadata import read_m3_outputs
from duplexeval.metrics.score_outputs import write_score_outputs
from duplexeval.metrics.scoring import score_events
from duplexeval.results.model import Results, SourceInfo
from duplexeval.runs.directory import AnalysisFiles

__all__ = ["score_official"]


def score_official(path: Path, out: Path, variant: str = "m3", language: str = "",
                   domain: str = "", transcript_key: str = AnalysisFiles.TRANSCRIPT_FIELD,
                   ) -> Results:
    """Re-score an official pipeline's output folder (see :mod:`duplexeval.metrics.m3_metadata`)."""
    events, meta = read_m3_outputs(path, transcript_key, language, domain)
    timing = get_variant(variant)
    scores = score_events(events, timing)
    source = SourceInfo(kind="m3-official", path=str(path), metadata=str(meta))
    return write_score_outputs(out, scores, timing, source, analysis=None)
