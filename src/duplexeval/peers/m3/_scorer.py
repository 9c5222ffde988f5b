"""``duplexeval score --m3 DIR`` (the peer ``m3``): the official M3 pipeline's output folder
re-scored.

The folder is the one the official inference and ASR scripts write (``metadata.jsonl`` with
each sample's audio and transcript paths: :mod:`duplexeval.metrics._m3_metadata`); it is scored
by a timing variant (``m3`` by default: the official rules) into ``out`` like a run's scores,
with ``source.kind = "m3-official"``.  As a peer (:data:`M3`) its one task is ``all`` (the
folder holds every event kind) and it returns the official rows over all events,
``"EVENT/dimension/metric" -> mean``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duplexeval.metrics._base import get_variant
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._score_outputs import write_score_outputs
from duplexeval.metrics._scoring import score_events
from duplexeval.peers._registry import PeerOptions, PeerScorer
from duplexeval.results._model import Results, SourceInfo
from duplexeval.runs._directory import AnalysisFiles

__all__ = ["M3", "score_official"]


def score_official(path: Path, out: Path, variant: str = "m3", language: str = "",
                   domain: str = "", transcript_key: str = AnalysisFiles.TRANSCRIPT_FIELD,
                   ) -> Results:
    """Re-score an official pipeline's output folder (see
    :mod:`duplexeval.metrics._m3_metadata`)."""
    events, meta = read_m3_outputs(path, transcript_key, language, domain, official=True)
    timing = get_variant(variant)
    scores = score_events(events, timing)
    source = SourceInfo(kind="m3-official", path=str(path), metadata=str(meta))
    return write_score_outputs(out, scores, timing, source, analysis=None)


def _score(task: str, root: Path, out: Path, options: PeerOptions) -> dict[str, Any]:
    results = score_official(root, out, options.variant, options.language, options.domain,
                             options.transcript_key)
    return {f"{r.event_type}/{r.dimension}/{r.metric}": r.mean for r in results.aggregates
            if r.official and r.language == "all" and r.domain == "all" and r.round is None}


M3 = PeerScorer(name="m3", tasks=("all",), score=_score,
                description="M3-DuplexBench's official pipeline output folders (the metadata file "
                            "with transcripts), by the official rules")
