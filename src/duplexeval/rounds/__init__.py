"""Turn segmentation for MTR-style multi-round evaluation: a two-channel transcript into
definite user rounds, each with its assistant window (``duplexeval segment``).

* :mod:`.rounds`: k proposals to rounds: merge at 30 % overlap (intersection over union),
  median boundaries, majority vote, overlap resolution; the assistant windows (pure functions);
* :mod:`.propose`: the transcript the judge is shown, the k asks, reading and checking answers;
* :mod:`.fallback`: rounds from the annotator's user TURNs, without a judge;
* :mod:`.pipeline`: dialogues in (a dataset folder or an alignment file), one JSON line per
  dialogue out.

The layer sits between ``metrics`` (MTR dialogue quality per round reads its rounds) and
``judge``; it imports ``judge``, ``data`` and the core modules.
"""

from duplexeval.rounds._consensus import (
    OVERLAP_THRESHOLD,
    Round,
    assistant_windows,
    combine_proposals,
)
from duplexeval.rounds._pipeline import (
    JudgeInfo,
    Segmentation,
    SegmentSettings,
    load_dialogues,
    segment_fallback,
    segment_with_judge,
    write_segmentations,
)

__all__ = [
    "OVERLAP_THRESHOLD",
    "JudgeInfo",
    "Round",
    "SegmentSettings",
    "Segmentation",
    "assistant_windows",
    "combine_proposals",
    "load_dialogues",
    "segment_fallback",
    "segment_with_judge",
    "write_segmentations",
]
