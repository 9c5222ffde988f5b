"""The ``realism`` variant: its five timing features on hand-drawn timelines, the distances
(KS, Wasserstein, JS) with their dialogue bootstrap, and the variant's per-event scores.

Wav time in seconds; ``u`` the user channel as fed, ``x`` the measured speaker (system or
reference); segments closed ``[start, end]``."""

from __future__ import annotations

import numpy as np
import pytest

from duplexeval.analysis import SpeechSegment
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._distributions import compare_distributions, js_divergence
from duplexeval.metrics._scoring import score_events
from duplexeval.metrics.timing._realism_features import (
    backchannel_rate,
    floor_transfer_offsets,
    measure,
    overlaps,
    pauses,
    turn_lengths,
)
from duplexeval.timeline import Span

S = Span


def test_floor_transfer_offsets_gap_overlap_and_no_transfer() -> None:
    """::

        t     0    4 4.6   7      10        14   16      20   22  23  24
        u     uuuuu|                |uuuuuuuuuuuuuuu|        |uuuuuuuuu|
        x          |xxxx|                    |xxxxxxxxxxx|      |x|
                   +0.6                      -2.0             inside u: no transfer
    """
    user = [S(0, 4), S(10, 16), S(21, 24)]
    speaker = [S(4.6, 7), S(14, 20), S(22, 23)]
    assert floor_transfer_offsets(user, speaker) == pytest.approx([0.6, -2.0])


def test_a_transfer_needs_the_users_onset_to_be_the_latest() -> None:
    """::

        u     uuuu|
        x            |xxx|  |xxx|        the second x follows x's own onset: not a transfer
    """
    assert floor_transfer_offsets([S(0, 2)], [S(3, 4), S(5, 6)]) == pytest.approx([1.0])
    assert floor_transfer_offsets([], [S(3, 4)]) == []


def test_pauses_are_silences_the_user_does_not_speak_in() -> None:
    """::

        t     0  1  1.5  3   5     6  6.5  8
        u                        |uu|
        x     |xx|  |xxxxx|    ...      |xxx|
              pause 0.5        not a pause (u inside 3..6.5)
    """
    user = [S(5.5, 6.0)]
    speaker = [S(0, 1), S(1.5, 3), S(6.5, 8)]
    assert pauses(user, speaker) == pytest.approx([0.5])
    assert turn_lengths(user, speaker) == pytest.approx([3.0, 1.5])


def test_overlaps_are_positive_intersections_only() -> None:
    """::

        t     0       2  3   4       6  7
        u     uuuuuuuuu|     |uuuuuuu|
        x            |xxxxxxx|       |xx|    2..3 (1 s) overlaps, 3..4 touches u at 4: no,
                                             6..7 touches at 6: no
    """
    assert overlaps([S(0, 3), S(4, 6)], [S(2, 4), S(6, 7)]) == pytest.approx([1.0])


def test_backchannel_rate_per_minute_of_user_speech() -> None:
    """::

        t     0     5 5.5      12  13.2      30
        u     uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu|     30 s of user speech (0.5 min)
        x           |x|        |xxxx|              0.5 s inside: a backchannel;
                                                   1.2 s: too long
    """
    assert backchannel_rate([S(0, 30)], [S(5, 5.5), S(12, 13.2)]) == pytest.approx(2.0)
    assert backchannel_rate([], [S(5, 5.5)]) is None
    assert measure([], [S(5, 5.5)]).values["backchannel_rate"] == []


def test_turns_join_segments_across_pauses() -> None:
    """::

        t     0   1   2   3          5   6  7   8
        u                            |uuu|
        x     xxxx    xxxx                    xxxx
              |<--------->| 3 s               |<>| 1 s
    """
    user = [S(5, 6)]
    assert turn_lengths(user, [S(0, 1), S(2, 3), S(7, 8)]) == pytest.approx([3.0, 1.0])
    assert turn_lengths(user, []) == []


def test_distances_of_equal_and_of_shifted_distributions() -> None:
    """The reference against itself is 0 on every distance (and its interval too); a copy
    shifted by 1 s has Wasserstein 1, KS 1 (disjoint supports) and JS 1 (disjoint bins)."""
    timelines = {f"d{i}": [{"fto": [0.2 * i, 0.1 + 0.2 * i], "pause": [0.5]}] for i in range(4)}
    same = compare_distributions(timelines, timelines, "self", resamples=200)
    for f in same.features:
        if f.feature in ("fto", "pause"):
            for d in (f.ks, f.wasserstein, f.js):
                assert d.value == pytest.approx(0.0, abs=1e-12)
                assert d.ci95_high == pytest.approx(0.0, abs=1e-12)
        else:
            assert f.ks.value is None and f.ks.resamples == 0
    shifted = {k: [{"fto": [v + 1.0 for v in t[0]["fto"]]}] for k, t in timelines.items()}
    fto = next(f for f in compare_distributions(shifted, timelines, "self", 200).features
               if f.feature == "fto")
    small = {k: [{"fto": [v + 0.05 for v in t[0]["fto"]]}] for k, t in timelines.items()}
    assert fto.wasserstein.value == pytest.approx(1.0)
    assert fto.ks.value == pytest.approx(1.0) and fto.js.value == pytest.approx(1.0)
    near = next(f for f in compare_distributions(small, timelines, "self", 200).features
                if f.feature == "fto")
    assert near.wasserstein.value == pytest.approx(0.05)
    assert near.wasserstein.ci95_low is not None and near.wasserstein.ci95_low <= 0.05
    edges = np.linspace(0.0, 1.0, 11)
    assert js_divergence([0.05], [0.05], edges) == 0.0
    assert js_divergence([5.0], [0.95], edges) == 0.0  # both clipped into the last bin


def _seg(start: float, end: float, channel: int) -> SpeechSegment:
    return SpeechSegment.of(channel, start, end, "", ())


def test_the_variant_scores_both_sides_and_writes_the_distributions() -> None:
    """Two dialogues; the system answers 1 s late where the reference answers 0.2 s late::

        u       uuuuuuuu|
        system             |ssss      fto +1.0
        ref           |rrrrrr         fto +0.2 ... per dialogue
    """
    events = []
    for d in ("a", "b"):
        segments = (_seg(0, 4, 0), _seg(5, 7, 1))
        events.append(EventView(event_id=f"{d}_0", event_type="TURN_SHIFT", input_start=0,
                                input_end=10, event_start=4, event_end=4, segments=segments,
                                sample_id=d, metadata={"reference_segments": [[4.2, 6.0]]}))
    variant = get_variant("realism", resamples=100)
    scores = score_events(events, variant)
    (dim,) = scores[0].dimensions
    assert dim.values == {"fto_mean": pytest.approx(1.0),
                          "reference_fto_mean": pytest.approx(0.2)}
    found = variant.distributions(scores)
    assert found is not None and found.dialogues == 2
    fto = next(f for f in found.features if f.feature == "fto")
    assert fto.system == pytest.approx([1.0, 1.0]) and fto.reference == pytest.approx([0.2, 0.2])
    assert fto.wasserstein.value == pytest.approx(0.8)
    assert fto.wasserstein.ci95_low == pytest.approx(0.8)
