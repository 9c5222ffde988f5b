"""Annotation rules, one hand-computed case per rule, drawn as ASCII timelines.

Scale in the drawings: one character = 0.1 s unless a case says otherwise.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from duplexeval.events import AnnotationRules, Event, EventKind, annotate_spans, ipus_from_spans
from duplexeval.timeline import Span

K = EventKind


def ev(kind: EventKind, channel: int, start: float, end: float) -> Event:
    return Event(kind, channel, start, end)


def annotate(ch0: list[tuple[float, float]], ch1: list[tuple[float, float]],
             rules: AnnotationRules = AnnotationRules()) -> set[Event]:
    return set(annotate_spans({0: [Span(*w) for w in ch0], 1: [Span(*w) for w in ch1]}, rules))


def test_words_merge_while_the_silence_is_at_most_ipu_gap() -> None:
    # ch0  |w1|     |w2|       silence exactly 0.5 s: one IPU (a SHORTPAUSE inside)
    #      0  1.0   1.5 2.5
    got = annotate([(0.0, 1.0), (1.5, 2.5)], [])
    assert got == {ev(K.TURN, 0, 0.0, 2.5), ev(K.SHORTPAUSE, 0, 1.0, 1.5)}
    # silence 0.51 s: two IPUs (two TURNs of one speaker: a TURN_HOLD)
    got = annotate([(0.0, 1.0), (1.51, 2.51)], [])
    assert got == {ev(K.TURN, 0, 0.0, 1.0), ev(K.TURN, 0, 1.51, 2.51),
                   ev(K.TURN_HOLD, 0, 1.0, 1.51)}


def test_tolerance_makes_differently_written_times_equal() -> None:
    # 1.5000004 - 1.0 is "0.5" within 1e-6 s: still one IPU
    got = annotate([(0.0, 1.0), (1.5000004, 2.5)], [])
    assert ev(K.TURN, 0, 0.0, 2.5) in got


def test_bc_is_an_ipu_of_at_most_bc_max() -> None:
    # ch1  |--0.8--|   |--0.81--|
    #      0      0.8  2.0     2.81
    got = annotate([], [(0.0, 0.8), (2.0, 2.81)])
    assert ev(K.BC, 1, 0.0, 0.8) in got
    assert ev(K.TURN, 1, 2.0, 2.81) in got


def test_every_silence_inside_an_ipu_is_a_shortpause_also_in_a_bc() -> None:
    # ch0  |a|b||c|      a-b touch (no pause), b-c 0.1 s apart; whole IPU 0.7 s: a BC
    got = annotate([(0.0, 0.2), (0.2, 0.4), (0.5, 0.7)], [])
    assert got == {ev(K.BC, 0, 0.0, 0.7), ev(K.SHORTPAUSE, 0, 0.4, 0.5)}


def test_turn_shift_with_a_gap_is_on_the_next_speakers_channel() -> None:
    # ch0  |=====|                 TURN [0, 2]
    # ch1           |======|       TURN [2.3, 4]
    #            ^^^ TURN_SHIFT [2.0, 2.3] on ch1
    got = annotate([(0.0, 2.0)], [(2.3, 4.0)])
    assert ev(K.TURN_SHIFT, 1, 2.0, 2.3) in got


def test_overlap_of_exactly_max_shift_overlap_is_a_shift() -> None:
    # ch0  |=======|              TURN [0, 2]
    # ch1        |======|         TURN [1.6, 3]: overlap 0.4 s -> TURN_SHIFT [2.0, 1.6]
    got = annotate([(0.0, 2.0)], [(1.6, 3.0)])
    assert ev(K.TURN_SHIFT, 1, 2.0, 1.6) in got  # start > end marks the overlap


def test_longer_overlap_is_a_barge_in() -> None:
    # ch0  |=======|              TURN [0, 2]
    # ch1       |=======|         TURN [1.59, 3]: overlap 0.41 s -> BARGE_IN [1.59, 2.0]
    got = annotate([(0.0, 2.0)], [(1.59, 3.0)])
    assert ev(K.BARGE_IN, 1, 1.59, 2.0) in got
    assert not any(e.kind == K.TURN_SHIFT for e in got)


def test_floor_holder_is_the_earlier_turn_with_the_latest_end() -> None:
    # ch0  |====================|          TURN [0, 5]
    # ch1      |====|                      TURN [1, 2]   BARGE_IN [1, 5] (holder ch0)
    # ch0                          |===|   TURN [5.8, 7] holder is ch0 [0,5] (ends last),
    #                                      so TURN_HOLD [5, 5.8], not a shift from ch1
    got = annotate([(0.0, 5.0), (5.8, 7.0)], [(1.0, 2.0)])
    assert ev(K.BARGE_IN, 1, 1.0, 5.0) in got
    assert ev(K.TURN_HOLD, 0, 5.0, 5.8) in got
    assert not any(e.kind == K.TURN_SHIFT for e in got)


def test_backchannels_never_take_the_floor() -> None:
    # ch0  |=====|        |=====|      TURN [0, 2], TURN [3, 5]
    # ch1         |BC|                 BC [2.2, 2.6]: the floor stays with ch0 -> TURN_HOLD
    got = annotate([(0.0, 2.0), (3.0, 5.0)], [(2.2, 2.6)])
    assert ev(K.BC, 1, 2.2, 2.6) in got
    assert ev(K.TURN_HOLD, 0, 2.0, 3.0) in got


def test_thresholds_are_options() -> None:
    rules = AnnotationRules(ipu_gap=0.2, bc_max=1.5, max_shift_overlap=1.0)
    # ch0 |==| |==|    gap 0.3 > 0.2: two IPUs of 1 s -> two BCs under bc_max 1.5
    got = annotate([(0.0, 1.0), (1.3, 2.3)], [], rules)
    assert got == {ev(K.BC, 0, 0.0, 1.0), ev(K.BC, 0, 1.3, 2.3)}
    # overlap 0.8 <= 1.0 is a shift under these rules
    got = annotate([(0.0, 2.0)], [(1.2, 3.0)], rules)
    assert ev(K.TURN_SHIFT, 1, 2.0, 1.2) in got


def test_ipus_keep_their_pauses() -> None:
    ipus = ipus_from_spans(0, [Span(0, 1), Span(1.2, 2), Span(3, 4)])
    assert [i.span for i in ipus] == [Span(0, 2), Span(3, 4)]
    assert ipus[0].pauses == (Span(1.0, 1.2),)


word = st.tuples(st.integers(0, 1), st.integers(0, 3000), st.integers(1, 150))


@settings(max_examples=60, deadline=None)
@given(st.lists(word, max_size=40), st.sampled_from([0.25, 3.0, 17.5, 100.0]))
def test_shifting_a_dialogue_shifts_every_event_and_keeps_durations(
    words: list[tuple[int, int, int]], dt: float
) -> None:
    # words on a 10 ms grid so that shifted sums stay exact to well under the tolerance
    spans: dict[int, list[Span]] = {0: [], 1: []}
    for channel, start, length in words:
        spans[channel].append(Span(start / 100, (start + length) / 100))
    shifted = {c: [s.shift(dt) for s in v] for c, v in spans.items()}
    before = annotate_spans(spans)
    after = annotate_spans(shifted)
    assert len(before) == len(after)
    for a, b in zip(before, after, strict=True):
        assert (a.kind, a.channel) == (b.kind, b.channel)
        assert abs((b.start - a.start) - dt) < 1e-6
        assert abs((b.end - b.start) - (a.end - a.start)) < 1e-6
