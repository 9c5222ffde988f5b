"""From k proposals to definite rounds (duplexeval.rounds._consensus): the 30 % overlap (IoU),
medians, the majority vote, overlap resolution and the assistant windows, on hand-drawn
timelines, plus properties of random proposals."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duplexeval.rounds._consensus import (
    Round,
    assistant_windows,
    combine_proposals,
    merge_proposals,
    overlap,
    resolve_overlaps,
    vote,
)
from duplexeval.timeline import TOL, Span

WHOLE = Span(0.0, 100.0)


def test_overlap_is_intersection_over_union() -> None:
    """::

        a  |----------|          [0, 10]
        b       |----------|     [5, 15]   5 / 15
        c   |-|                  [1, 2]    inside a: 1 / 10, not 100 %
        d              |--|      [10, 12]  touching a: 0
    """
    a, b, c, d = Span(0, 10), Span(5, 15), Span(1, 2), Span(10, 12)
    assert overlap(a, b) == pytest.approx(1 / 3) == overlap(b, a)
    assert overlap(a, c) == pytest.approx(0.1)
    assert overlap(a, d) == 0.0 and overlap(a, Span(3, 3)) == 0.0
    assert overlap(a, a) == 1.0


@pytest.mark.parametrize(("start", "merged"), [(69.0, True), (71.0, False)])
def test_the_30_percent_edge(start: float, merged: bool) -> None:
    """Two proposals, one round each::

        attempt 0  |------------------------------|   [0, 100]
        attempt 1                       |---------|   [69, 100]: 31 / 100 = 31 %, merged
        attempt 1                         |-------|   [71, 100]: 29 / 100 = 29 %, apart
    """
    candidates = merge_proposals([[Span(0, 100)], [Span(start, 100)]])
    assert [c.votes for c in candidates] == ([2] if merged else [1, 1])
    if merged:  # the median of two is the mean of the two
        assert candidates[0].span == Span(start / 2, 100)
    rounds = combine_proposals([[Span(0, 100)], [Span(start, 100)]], WHOLE)
    assert rounds == ([Round(start / 2, 100, 2)] if merged else [])  # 1 of 2 is no majority


def test_boundaries_are_the_medians() -> None:
    """Five proposals of one round; one also starts late (3.0) and one ends late (6.0)::

        starts  1.0 1.4 0.8 1.2 3.0   -> median 1.2
        ends    5.0 5.2 4.6 6.0 5.1   -> median 5.1
        kept    |==[1.2, 5.1]==|  5 votes

    With four proposals (the last dropped) the medians are the means of the middle two.
    """
    starts, ends = [1.0, 1.4, 0.8, 1.2, 3.0], [5.0, 5.2, 4.6, 6.0, 5.1]
    proposals = [[Span(s, e)] for s, e in zip(starts, ends, strict=True)]
    assert combine_proposals(proposals, WHOLE) == [Round(1.2, 5.1, 5)]
    four = combine_proposals(proposals[:4], WHOLE)
    assert four == [Round(pytest.approx(1.1), pytest.approx(5.1), 4)]  # type: ignore[arg-type]


def test_an_outlier_round_is_dropped_by_the_majority() -> None:
    """Six proposals agree on two rounds; one adds a third round (over the assistant's
    speech); 1 vote of 6 is no majority::

        attempts 0-5   |==r0==|   |==r1==|
        attempt 5                           |x|     1 / 6: dropped
    """
    agreed = [Span(1, 4), Span(6, 9)]
    proposals = [list(agreed) for _ in range(6)]
    proposals[5].append(Span(10, 11))
    assert combine_proposals(proposals, WHOLE) == [Round(1, 4, 6), Round(6, 9, 6)]


def test_a_round_needs_more_than_half_of_the_valid_proposals() -> None:
    """3 of 6 is not a majority, 4 of 6 is; an empty proposal still votes (for no round)."""
    three = [[Span(1, 4)]] * 3 + [[]] * 3
    four = [[Span(1, 4)]] * 4 + [[]] * 2
    assert combine_proposals(three, WHOLE) == []
    assert combine_proposals(four, WHOLE) == [Round(1, 4, 4)]


def test_a_proposal_votes_once_per_candidate() -> None:
    """A proposal that splits a round in two puts its second half in a candidate of its
    own, not a second vote in the first::

        attempt 0  |=========|        [0, 10]
        attempt 1  |===| |===|        [0, 4], [5, 10]: both overlap [0, 10] by 40 % / 50 %
    """
    candidates = merge_proposals([[Span(0, 10)], [Span(0, 4), Span(5, 10)]])
    assert sorted(c.votes for c in candidates) == [1, 2]
    assert [c.attempts for c in candidates] == [[0, 1], [1]]


def test_overlap_resolution_cuts_merges_and_absorbs() -> None:
    """Kept rounds that still overlap::

        a  |------|                   [0, 6]   and b [5, 12]: 1 / 12 < 30 %: cut at 5.5
        b       |-------|
        c                |-----|      [14, 20] and d [15, 21]: 5 / 7 >= 30 %: merged
        d                 |-----|
        e                          |------|   [24, 32] holds f [26, 28]: absorbed
        f                            |-|
        g                                  |--|  [32, 40] touches e: left alone
    ->  |----|-------|   |------|  |------|--|
    """
    rounds = [Round(5, 12, 4), Round(0, 6, 5), Round(15, 21, 4), Round(14, 20, 6),
              Round(24, 32, 4), Round(26, 28, 5), Round(32, 40, 4)]
    assert resolve_overlaps(rounds, WHOLE) == [
        Round(0, 5.5, 5), Round(5.5, 12, 4), Round(14, 21, 6), Round(24, 32, 5),
        Round(32, 40, 4)]


def test_resolution_clips_to_the_transcript_and_drops_what_is_outside() -> None:
    span = Span(0, 10)
    assert resolve_overlaps([Round(-1, 2), Round(9, 12), Round(11, 13)], span) == [
        Round(0, 2), Round(9, 10)]


def test_assistant_windows_run_to_the_end_of_the_next_user_turn() -> None:
    """::

        user      |=r0=|    |=r1=|      |=r2=|        end 30
        window 0  |--------------|
        window 1            |-----------------|
        window 2                        |------------|
    """
    rounds = [Round(1, 4), Round(8, 11), Round(17, 20)]
    assert assistant_windows(rounds, 30) == [Span(1, 11), Span(8, 20), Span(17, 30)]
    assert assistant_windows([], 30) == []


_spans = st.tuples(st.floats(-5, 105, allow_nan=False), st.floats(0, 40, allow_nan=False)) \
    .map(lambda t: Span(t[0], t[0] + t[1]))
_proposals = st.lists(st.lists(_spans, max_size=8), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(_proposals, st.floats(0.05, 1.0))
def test_rounds_are_sorted_disjoint_inside_the_span_and_voted(
        proposals: list[list[Span]], threshold: float) -> None:
    rounds = combine_proposals(proposals, WHOLE, threshold)
    for r in rounds:
        assert WHOLE.start <= r.start < r.end <= WHOLE.end
        assert r.votes is not None and 2 * r.votes > len(proposals)
    for a, b in itertools.pairwise(rounds):
        assert a.end <= b.start + TOL and a.start < b.start
    windows = assistant_windows(rounds, WHOLE.end)
    assert all(w.start == r.start and w.end >= r.end for w, r in zip(windows, rounds,
                                                                       strict=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(_spans, max_size=12))
def test_resolution_keeps_all_speech_it_can(spans: list[Span]) -> None:
    """Every instant covered by an input round (inside the span) is covered by an output
    round: resolution cuts and merges, it never leaves a hole."""
    rounds = resolve_overlaps([Round(s.start, s.end, 1) for s in spans], WHOLE)
    for s in spans:
        mid = (max(s.start, 0) + min(s.end, 100)) / 2
        if min(s.end, 100) - max(s.start, 0) > 2 * TOL:
            assert any(r.start - TOL <= mid <= r.end + TOL for r in rounds)
    assert vote([], 3) == []
