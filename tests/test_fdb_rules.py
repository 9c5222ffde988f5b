"""The FDB v1/v1.5 rules (``duplexeval.metrics.timing._fdb_rules``) on hand-made words and segments;
expected values worked out by hand from FDB's ``v1_v1.5/evaluation`` code as written."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from duplexeval.metrics.timing._fdb_rules import (
    Word,
    backchannel_histogram,
    backchannel_jsd,
    backchannels_code,
    backchannels_paper,
    classify_segment,
    merge_segments,
    response_latency_intervals,
    stop_latency_intervals,
    takeover,
    takes_turn,
    words_in_segment,
)
from duplexeval.timeline import Span


def _words(*stamps: tuple[float | None, float | None]) -> list[Word]:
    return [Word(f"w{i}", a, b) for i, (a, b) in enumerate(stamps)]


def test_takeover_rule_duration_or_more_than_three_words() -> None:
    """::

        w  ww          span 0.6 s, 3 words -> 0
        w w w w        span 0.6 s, 4 words -> 1
        w         w    span 1.0 s, 2 words -> 1 (not < 1.0)
        (nothing)                          -> 0
    """
    assert not takes_turn(_words((0, 0.2), (0.3, 0.4), (0.4, 0.6)))
    assert takes_turn(_words((0, 0.1), (0.1, 0.2), (0.2, 0.4), (0.4, 0.6)))
    assert takes_turn(_words((2.0, 2.2), (2.8, 3.0)))
    assert not takes_turn([])


def test_latency_is_clamped_at_zero_and_kept() -> None:
    """::

        reference      |2.0
        words       w w|w w       first start 1.8: raw -0.2 s -> latency 0
        words          |  ww      first start 2.5, span 1.0: latency 0.5
    """
    early = takeover(_words((1.8, 2.1), (2.1, 2.4), (2.4, 2.9)), 2.0)
    assert early.tor == 1 and early.latency == 0
    assert early.latency_raw == pytest.approx(-0.2)
    late = takeover(_words((2.5, 3.0), (3.0, 3.5)), 2.0)
    assert (late.tor, late.latency, late.latency_raw) == (1, 0.5, 0.5)
    assert takeover(_words((2.5, 2.7)), 2.0).latency is None


def test_null_last_end_only_where_pause_handling_allows_it() -> None:
    words = _words((3.4, 3.6), (3.6, None))
    assert not takes_turn(words, null_last_end=True)  # span 3.6 - 3.4 = 0.2, 2 words
    with pytest.raises(ValueError):
        takes_turn(words)


def test_words_in_segment_overlap_rules() -> None:
    """Segment [1.0, 2.0]::

        a  [0.5, 1.2]   straddles the start      -> in
        b  [1.2, 1.5]   inside                   -> in
        c  [1.8, 2.5]   straddles the end        -> in
        d  [0.2, 1.0]   ends at the start        -> out (b > s fails)
        e  [2.0, None]  null end, start == end   -> in
        f  [1.5, None]  null end, start < end    -> skipped
        g  [None, 1.5]  null start               -> skipped
    """
    words = [Word("a", 0.5, 1.2), Word("b", 1.2, 1.5), Word("c", 1.8, 2.5),
             Word("d", 0.2, 1.0), Word("e", 2.0, None), Word("f", 1.5, None),
             Word("g", None, 1.5)]
    assert words_in_segment(words, Span(1.0, 2.0)) == ["a", "b", "c", "e"]


def test_segment_classes() -> None:
    assert classify_segment(0.9, 2) == "backchannel"
    assert classify_segment(0.9, 3) == "turn"  # 3 words under 1 s
    assert classify_segment(1.0, 0) == "turn"  # 1 s or longer
    assert classify_segment(0.2, 4) == "turn"


def test_backchannel_last_segment_wins_in_code_not_in_paper() -> None:
    """::

        t     1.0-1.4    3.0-5.0          7.0-7.4
        M     bc (1 w)   turn (6 words)   bc (1 w)
        code  TOR 0 (the last segment's class), all three listed
        paper TOR 1 (a turn occurred), the two backchannels listed
    """
    segs = [Span(1.0, 1.4), Span(3.0, 5.0), Span(7.0, 7.4)]
    words = [Word("yeah", 1.1, 1.3)] + [Word(f"x{i}", 3.1 + 0.3 * i, 3.3 + 0.3 * i)
                                        for i in range(6)] + [Word("mm", 7.1, 7.3)]
    code = backchannels_code(segs, words)
    assert (code.tor, code.backchannels) == (0, segs)
    assert code.classes == ["backchannel", "turn", "backchannel"]
    paper = backchannels_paper(segs, words)
    assert (paper.tor, paper.backchannels) == (1, [segs[0], segs[2]])


def test_backchannel_long_segment_stops_the_code_loop() -> None:
    """``M(0.3 s) M(4 s) M(0.3 s)``: the code stops at the 4 s segment (TOR 1, one listed)."""
    segs = [Span(0.5, 0.8), Span(2.0, 6.0), Span(8.0, 8.3)]
    code = backchannels_code(segs, [])
    assert (code.tor, code.backchannels, code.classes) == (1, [segs[0]], ["backchannel", "long"])
    paper = backchannels_paper(segs, [])
    assert (paper.tor, paper.backchannels) == (1, [segs[0], segs[2]])


def test_histogram_bins_use_plain_float_division() -> None:
    """Duration 1.0 s: 6 bins.  [0.2, 0.6]: int(0.2/0.2)=1 .. int(0.6/0.2)=int(2.9999...)=2::

        bins   0   1   2   3   4   5
               .   1   1   .   .   .     (+1e-10 each, normalised)
    """
    hist = backchannel_histogram([Span(0.2, 0.6)], 1.0)
    raw = np.array([0, 1, 1, 0, 0, 0]) + 1e-10
    assert np.array_equal(hist, raw / raw.sum())


def test_jsd_is_scipy_distance_in_code_and_base2_divergence_in_paper() -> None:
    """Reference of 6 points (no resizing needed, same length as the 6 bins)."""
    ref = [0.1, 0.3, 0.3, 0.1, 0.1, 0.1]
    hist = backchannel_histogram([Span(0.2, 0.6)], 1.0)
    code = backchannel_jsd([Span(0.2, 0.6)], 1.0, ref)
    assert code == pytest.approx(float(jensenshannon(hist, np.array(ref))), abs=0)
    paper = backchannel_jsd([Span(0.2, 0.6)], 1.0, ref, divergence=True)
    assert paper == pytest.approx(float(jensenshannon(hist, np.array(ref), base=2)) ** 2)
    assert paper < code
    assert backchannel_jsd([], 1.0, ref) == 1.0


def test_merge_uses_exact_float_gap() -> None:
    """``2.6 - 2.0`` is 0.6000000000000001, over 0.6: no merge; 0.3 s merges."""
    merged = merge_segments([Span(2.6, 3.0), Span(1.0, 2.0)], 0.6)
    assert merged == [Span(1.0, 2.0), Span(2.6, 3.0)]
    assert merge_segments([Span(1.0, 2.0), Span(2.3, 3.0)], 0.6) == [Span(1.0, 3.0)]


def test_stop_and_response_latency_lists() -> None:
    """Merged segments::

        user   [1.0 ---------- 3.0]            [5.0 -- 6.0]
        model            [2.5 ------------ 4.8]              [6.5 - 7.0]
        stop             [2.5, 3.0]
        resp   user end 3.0 -> 6.5 and 6.0 -> 6.5 share the model start: keep [6.0, 6.5]
    """
    user = [Span(1.0, 3.0), Span(5.0, 6.0)]
    model = [Span(2.5, 4.8), Span(6.5, 7.0)]
    assert stop_latency_intervals(user, model) == [[2.5, 3.0]]
    assert response_latency_intervals(user, model) == [[6.0, 6.5]]


def test_stop_latency_keeps_shortest_interval_per_end() -> None:
    """Unmerged overlapping model segments ending together: (1, 3) and (2, 3) -> [2, 3]."""
    user = [Span(0.0, 3.0)]
    assert stop_latency_intervals(user, [Span(1.0, 3.0), Span(2.0, 3.0)]) == [[2.0, 3.0]]
    assert stop_latency_intervals(user, []) == []
    assert response_latency_intervals(user, [Span(1.0, 2.0)]) == []
