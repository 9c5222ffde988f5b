"""The generated history (``--history generated``): what was said in each sample's context
audio, transcribed.

The context wav of a sample (``context_audio_path``) is stereo over ``[context_start,
input_start)``: channel 0 the user as fed, channel 1 what the session's system channel carried
(the system's own output under Multi (gen), the reference under Multi (ref)).  Both channels
get voice activity and full ASR with the run's analysis settings (cached per channel like the
analysis); each segment becomes one utterance in dialogue time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from duplexeval._audio import AudioReadError, read_audio
from duplexeval._cache import cache_root
from duplexeval.analysis._pipeline import AnalysisOptions, analyze_channel
from duplexeval.errors import DuplexevalError
from duplexeval.metrics.content._inputs import CONTENT_EVENT_TYPES
from duplexeval.metrics.content._text import Utterance, join_words
from duplexeval.runs._directory import MetadataRow, RunDir

__all__ = ["generated_histories"]

ROLES = {0: "User", 1: "Model"}


def generated_histories(run: RunDir, rows: Sequence[MetadataRow], options: AnalysisOptions,
                        language: str) -> dict[str, list[Utterance]]:
    """Event id -> its transcribed context, for the content events that have one."""
    out: dict[str, list[Utterance]] = {}
    cache = cache_root() / "analysis"
    for row in rows:
        if row.event_type not in CONTENT_EVENT_TYPES or not row.context_audio_path:
            continue
        wav = run.root / row.context_audio_path
        try:
            x, rate = read_audio(wav)
        except AudioReadError as exc:
            raise DuplexevalError(f"{wav}: cannot read audio ({exc.reason})") from None
        lines = []
        for ch in range(min(2, x.shape[1])):
            segments = analyze_channel(np.ascontiguousarray(x[:, ch]), rate, ch, options,
                                       language or None, cache, full=True)
            lines += [Utterance(ROLES[ch], float(row.context_start) + s.start,
                                join_words((c.text for c in s.chunks), language))
                      for s in segments]
        out[row.event_id] = sorted(lines, key=lambda u: u.start)
    return out
