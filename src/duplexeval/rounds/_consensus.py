"""From k proposed segmentations to definite user rounds: merge, vote, median, resolve.

Pure functions on time spans (seconds); no judge, no files.  The steps, in the order
:func:`combine_proposals` runs them:

1. **Merge.**  Each proposal is one judge answer: a list of user-round spans.  Proposals are
   read in their order (attempt 0, 1, ...), each one's rounds in time order.  A round joins the
   existing *candidate* it overlaps most, when that overlap is at least the threshold (30 %)
   and the candidate has no round from the same proposal yet; otherwise it starts a new
   candidate.  A candidate's span is the **median** of its members' starts and the median of
   their ends (the mean of the two middle values for an even count); it is recomputed after
   every join, and new rounds are compared with it.

2. **Overlap** is *intersection over union* (IoU, the Jaccard index of the two intervals)::

       a        |----------|                 a = [0, 10]
       b               |----------|          b = [5, 15]
       a & b           |---|                 intersection = 5
       a | b    |-----------------|          union = |a| + |b| - |a & b| = 15
                                             overlap(a, b) = 5 / 15 = 33 %  >= 30 %: merged

       a        |----------|                 a = [0, 10]
       c          |-|                        c = [1, 2]: inside a, yet 1 / 10 = 10 %: not merged

   MTR's description ("a new round overlapping a candidate by 30 % or more is merged") does
   not say 30 % of what, and its code for this step is not released.  Why IoU and not
   intersection over the shorter span: over the shorter, any round nested in
   a longer one overlaps it 100 %, so a proposal that lumps two user turns into one long round
   would match (and merge with) both halves that the other proposals keep apart, and chains of
   nested rounds would collapse into one.  IoU is symmetric, in [0, 1], independent of the
   time scale, and 30 % IoU still tolerates boundaries that disagree by more than the round's
   own length on one side (``[0, 10]`` and ``[0, 30]``: 33 %).  The comparison is ``>=``, with
   a 1e-9 tolerance for float rounding.

3. **Vote.**  A candidate is kept when more than half of the valid proposals have a round in
   it (``votes > valid / 2``; with 6 valid proposals, 4 votes).  Each proposal votes at most
   once per candidate (step 1), so a candidate's votes are the number of proposals in it.

4. **Resolve.**  Kept candidates are clipped to the transcript span, empty ones dropped, and
   sorted by ``(start, end)``.  Then, left to right, each round is compared with the last
   definite round ``p`` (``r.start >= p.start`` by the sort)::

       p  |--------|            p  |---------|           p  |-----------|
       r        |--------|      r     |--------|         r     |---|
          overlap < 30 %:          overlap >= 30 %:         r inside p (or p inside r):
          cut at the middle        merged into the hull     absorbed into the longer one
       -> |-----|-----|         -> |-------------|       -> |-----------|
               ^ (r.start + p.end) / 2

   A merged or absorbed round keeps the larger vote count of the two.  A cut gives the shared
   stretch half to each, so both keep their non-shared parts.  Touching rounds (``r.start ==
   p.end`` within :data:`~duplexeval.timeline.TOL`) do not overlap.  The result is sorted, its
   rounds are non-empty, do not overlap, and lie inside the span.

The **assistant window** of round k runs from its start to the end of round k+1's user turn,
and for the last round to the end of the transcript (see :func:`assistant_windows`)::

    user      |==r0==|      |==r1==|        |==r2==|      |
    window 0  |---------------------|                     |
    window 1                |-------------------------|   |
    window 2                                |-------------|  (to the end of the transcript)
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from duplexeval.timeline import TOL, Span

__all__ = [
    "OVERLAP_THRESHOLD",
    "Candidate",
    "Round",
    "assistant_windows",
    "combine_proposals",
    "merge_proposals",
    "overlap",
    "resolve_overlaps",
    "vote",
]

OVERLAP_THRESHOLD = 0.3
"""Two rounds overlapping by at least this (intersection over union) are the same round."""

_EPS = 1e-9


@dataclass(frozen=True, order=True)
class Round:
    """One user round ``[start, end]`` (seconds) and the number of proposals that voted for
    it (``None`` when no vote was taken: the annotator fallback)."""

    start: float
    end: float
    votes: int | None = None

    @property
    def span(self) -> Span:
        """The user turn's time span."""
        return Span(self.start, self.end)


@dataclass
class Candidate:
    """A cluster of proposed rounds, at most one per proposal (by attempt index)."""

    starts: list[float] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)
    attempts: list[int] = field(default_factory=list)

    def add(self, span: Span, attempt: int) -> None:
        """Add one proposed round."""
        self.starts.append(span.start)
        self.ends.append(span.end)
        self.attempts.append(attempt)

    @property
    def votes(self) -> int:
        """The number of proposals with a round in this candidate."""
        return len(self.attempts)

    @property
    def span(self) -> Span:
        """The median start and the median end of the members."""
        return Span(float(statistics.median(self.starts)), float(statistics.median(self.ends)))


def overlap(a: Span, b: Span) -> float:
    """Intersection over union of two spans, in [0, 1]; 0 when either is empty."""
    inter = min(a.end, b.end) - max(a.start, b.start)
    if inter <= 0:
        return 0.0
    union = (a.end - a.start) + (b.end - b.start) - inter
    return inter / union if union > 0 else 0.0


def _overlaps_enough(a: Span, b: Span, threshold: float) -> bool:
    return overlap(a, b) + _EPS >= threshold


def merge_proposals(proposals: Sequence[Sequence[Span]],
                    threshold: float = OVERLAP_THRESHOLD) -> list[Candidate]:
    """Step 1: cluster the rounds of every proposal (see the module docstring)."""
    candidates: list[Candidate] = []
    for attempt, rounds in enumerate(proposals):
        for span in sorted(rounds):
            best: Candidate | None = None
            best_overlap = -1.0
            for candidate in candidates:
                if attempt in candidate.attempts:
                    continue
                value = overlap(span, candidate.span)
                if _overlaps_enough(span, candidate.span, threshold) and value > best_overlap:
                    best, best_overlap = candidate, value
            if best is None:
                best = Candidate()
                candidates.append(best)
            best.add(span, attempt)
    return candidates


def vote(candidates: Sequence[Candidate], valid: int) -> list[Round]:
    """Step 3: the candidates with more than ``valid / 2`` votes, as rounds."""
    return [Round(c.span.start, c.span.end, c.votes) for c in candidates
            if 2 * c.votes > valid]


def _max_votes(a: int | None, b: int | None) -> int | None:
    if a is None or b is None:
        return a if b is None else b
    return max(a, b)


def resolve_overlaps(rounds: Sequence[Round], span: Span,
                     threshold: float = OVERLAP_THRESHOLD) -> list[Round]:
    """Step 4: definite, sorted, non-overlapping rounds inside ``span``."""
    clipped = [Round(max(r.start, span.start), min(r.end, span.end), r.votes) for r in rounds]
    ordered = sorted((r for r in clipped if r.end - r.start > TOL),
                     key=lambda r: (r.start, r.end))
    out: list[Round] = []
    for r in ordered:
        if not out or r.start >= out[-1].end - TOL:
            out.append(r)
            continue
        p = out[-1]
        votes = _max_votes(p.votes, r.votes)
        if r.end <= p.end + TOL or r.start <= p.start + TOL:
            out[-1] = Round(p.start, max(p.end, r.end), votes)
        elif _overlaps_enough(p.span, r.span, threshold):
            out[-1] = Round(p.start, r.end, votes)
        else:
            cut = (r.start + p.end) / 2
            out[-1] = Round(p.start, cut, p.votes)
            out.append(Round(cut, r.end, r.votes))
    return out


def combine_proposals(proposals: Sequence[Sequence[Span]], span: Span,
                      threshold: float = OVERLAP_THRESHOLD) -> list[Round]:
    """Steps 1 to 4 on the valid proposals (every one counts as a voter, an empty one too)."""
    return resolve_overlaps(vote(merge_proposals(proposals, threshold), len(proposals)), span,
                            threshold)


def assistant_windows(rounds: Sequence[Round], end: float) -> list[Span]:
    """Round k's assistant window: ``[rounds[k].start, rounds[k + 1].end]``, the last one
    ``[rounds[-1].start, end]`` (``end`` is the transcript's end; never before the round's)."""
    windows = []
    for k, r in enumerate(rounds):
        stop = rounds[k + 1].end if k + 1 < len(rounds) else max(end, r.end)
        windows.append(Span(r.start, stop))
    return windows
