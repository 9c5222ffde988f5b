"""pass@k and pass^k under every timing variant: each dimension with a binary verdict has a pass
rule (stated in its variant's docstring), and k hand-drawn tries of one event give the pass rates
by hand.

Output wav time (input_start = 0, input_end = W = 12 s); ``u`` user speech, ``S`` system
segments (channel 1), ``w`` system words, ``T`` the event start.  Three tries of one event,
``P`` pass and ``.`` fail, give::

    tries  P . P     c = 2 of n = 3:  pass@1 = 2/3   pass^2 = C(2,2)/C(3,2) = 1/3   pass^3 = 0
                                      flips: 1 of 1 event
"""

from __future__ import annotations

import pytest

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.events import TASK_TABLE
from duplexeval.metrics import EventView, TimingVariant, get_variant
from duplexeval.metrics._stability import stability
from duplexeval.results._model import StabilityRow

T = 4.0
E = 5.0

NO_VERDICT = {
    ("m3", "BC", "user_backchanneling"), ("m3", "BARGE_IN", "user_barge_in"),
    ("mtr", "BC", "backchannel"),
    ("fdb-v1", "BC", "overlap_timing"), ("fdb-v1", "BARGE_IN", "overlap_timing"),
}
"""Dimensions that only measure (a stop latency, a rate): no pass rule, said in the docstring."""


def _event_types() -> list[str]:
    return sorted({t.kind.value for t in TASK_TABLE})


@pytest.mark.parametrize("name", ["m3", "flexi", "mtr", "fdb-v1", "turnbench"])
def test_every_dimension_with_a_verdict_has_a_pass_rule(name: str) -> None:
    variant = get_variant(name)
    for kind in _event_types():
        for dim in variant.dimensions(kind):
            rule = variant.pass_rule(kind, dim)
            assert (rule is None) == ((name, kind, dim) in NO_VERDICT), (name, kind, dim)
            if rule is not None:
                assert rule.dimension == dim and rule.metric in rule.meaning


def test_background_has_a_rule_on_any_event_type() -> None:
    for name in ("mtr", "turnbench"):
        variant = get_variant(name)
        assert all(variant.pass_rule(kind, "background") is not None for kind in _event_types())
    assert get_variant("m3").pass_rule("TURN_SHIFT", "background") is None


def _seg(start: float, end: float, words: int = 0, channel: int = 1) -> SpeechSegment:
    step = (end - start) / max(words, 1)
    chunks = tuple(Chunk(start + i * step, start + (i + 1) * step, f"w{i}")
                   for i in range(words))
    return SpeechSegment.of(channel, start, end, " ".join(c.text for c in chunks), chunks)


def _tries(kind: str, tries: list[list[SpeechSegment]], end: float = E,
           **meta: object) -> list[EventView]:
    return [EventView(event_id=f"d_ch0_0000_{kind}_r{j}", event_type=kind, input_start=0.0,
                      input_end=12.0, event_start=T, event_end=end, segments=tuple(segs),
                      sample_id="d", metadata=dict(meta)) for j, segs in enumerate(tries)]


def _row(variant: TimingVariant, events: list[EventView], dimension: str) -> StabilityRow:
    scores = [variant.score(e) for e in events]
    found = stability(scores, variant)
    assert found is not None and found.tries == len(events)
    return next(r for r in found.rows if r.dimension == dimension)


def _check_p_dot_p(row: StabilityRow) -> None:
    """The three tries ``P . P`` (module docstring)."""
    assert row.pass_rule is not None
    assert [p.mean for p in row.pass_at_k] == pytest.approx([2 / 3, 1.0, 1.0])
    assert [p.mean for p in row.pass_hat_k] == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert row.flip_share is not None and row.flip_share.mean == 1.0


def test_turnbench_turn_end_and_barge_in() -> None:
    """Turn end (window [T - 0.25, T + 3])::

        user    uuuuuuu|                    r0: onset T + 0.3   match     P
        system  r0        SSSS              r1: onset T + 3.5   no match  .
                r1                 SSSS     r2: onset T + 0.5   match     P
                r2          SSSS

    Barge-in at T (stop allowance 0.5 s)::

        user            |uuuuuuuu           r0: stops at T + 0.2  in time   P
        system  r0  SSSSSS|                 r1: stops at T + 2.0  missed    .
                r1  SSSSSSSSSSSSSS|         r2: stops at T + 0.4  in time   P
    """
    tb = get_variant("turnbench")
    shift = _tries("TURN_SHIFT", [[_seg(T + 0.3, T + 2)], [_seg(T + 3.5, T + 5)],
                                  [_seg(T + 0.5, T + 2)]])
    row = _row(tb, shift, "turn_end")
    _check_p_dot_p(row)
    assert "match ↑ = 1" in (row.pass_rule or "")
    barge = _tries("BARGE_IN", [[_seg(T, T + 0.2)], [_seg(T, T + 2.0)], [_seg(T, T + 0.4)]])
    _check_p_dot_p(_row(tb, barge, "user_barge_in"))


def test_turnbench_a_try_not_speaking_at_the_onset_is_not_judged() -> None:
    """A backchannel at T; r1 is silent at the onset: no stop verdict, so two judged tries::

        user            |bc|
        system  r0  SSSSSSSSSSSSSSSSSSSS    talks through it      P
                r1                          not speaking: None    (not judged)
                r2  SSSSSSSSSSSSSSSSSSSS                          P
    """
    tb = get_variant("turnbench")
    bc = _tries("BC", [[_seg(T, 12.0)], [], [_seg(T, 12.0)]], end=T + 0.5)
    row = _row(tb, bc, "user_backchanneling")
    assert [p.mean for p in row.pass_hat_k] == [1.0, 1.0]  # n = 2 judged tries, both pass
    assert row.flip_share is not None and row.flip_share.mean == 0.0


def _talk(start: float, end: float) -> SpeechSegment:
    """Speech with five words a second (MTR's rule counts words)."""
    return _seg(start, end, round((end - start) * 5))


def test_mtr_interruption_and_pause() -> None:
    """Barge-in [T, E]; success = not speaking inside it (1 s of words or more than 3) and
    speaking after it::

        user            |uuuuuuu|           r0: silent in, speaks after   P
        system  r0                wwww      r1: 4 words inside            .
                r1       wwwwwwwwwwwwwwww   r2: silent in, speaks after   P
                r2                  www

    Pause [T, E], silent up to E + 1 s: r0 and r2 speak after E + 1, r1 from T + 0.2.
    """
    mtr = get_variant("mtr")
    barge = _tries("BARGE_IN", [[_talk(E + 0.2, E + 2)], [_talk(T + 0.1, E + 2)],
                                [_talk(E + 1.0, E + 2)]])
    _check_p_dot_p(_row(mtr, barge, "interruption"))
    hold = _tries("TURN_HOLD", [[_talk(E + 2, E + 3)], [_talk(T + 0.2, E + 1)],
                                [_talk(E + 2.5, E + 3.5)]])
    _check_p_dot_p(_row(mtr, hold, "pause_handling"))


def test_mtr_background_on_any_event() -> None:
    """Background speech [6, 7] annotated on a TURN_SHIFT sample; success = one continuous
    stretch of speech over [6.3, 7]::

        background          |bbbb|
        system  r0  SSSSSSSSSSSSSSSSS    kept speaking   P
                r1  SSSSSSS|             stopped at 6.5  .
                r2  SSSSSSSSSSSSSSSSS                    P
    """
    mtr = get_variant("mtr")
    events = _tries("TURN_SHIFT", [[_talk(T, 9)], [_talk(T, 6.5)], [_talk(T, 9)]],
                    background_start=6.0, background_end=7.0)
    _check_p_dot_p(_row(mtr, events, "background"))


def test_fdb_v1_takeover() -> None:
    """TURN_SHIFT at T (the 1 s / 3-word rule)::

        user    uuuuuuu|
        system  r0        w w w w        4 words: a turn     P
                r1        w              1 word, 0.3 s: none  .
                r2        w w w w w                          P
    """
    fdb = get_variant("fdb-v1")
    shift = _tries("TURN_SHIFT", [[_seg(T + 0.2, T + 1.2, 4)], [_seg(T + 0.2, T + 0.5, 1)],
                                  [_seg(T + 0.2, T + 1.5, 5)]])
    _check_p_dot_p(_row(fdb, shift, "smooth_turn_taking"))


def test_flexi_turn_taking_and_model_interrupt() -> None:
    """FLEXI turn_taking item at T (a turn: >= 1 s of words or more than 3)::

        user    uuuuuuu|
        system  r0        w w w w        P
                r1                       (silent) .
                r2        w w w w w      P

    model_interrupt item, the statement ending at T (interrupted: the first word more than
    0.5 s before it): r0 starts at T - 1 (P), r1 at T + 0.2 (.), r2 at T - 0.8 (P).
    """
    flexi = get_variant("flexi")
    turn = _tries("TURN_SHIFT", [[_seg(T + 0.2, T + 1.4, 4)], [], [_seg(T + 0.3, T + 1.5, 5)]],
                  flexi={"scenario": "turn_taking"})
    _check_p_dot_p(_row(flexi, turn, "turn_taking"))
    record = {"scenario": "model_interrupt", "user_turn": [1.0, T]}
    cut = _tries("TURN_SHIFT", [[_seg(T - 1.0, T + 1, 4)], [_seg(T + 0.2, T + 1, 4)],
                                [_seg(T - 0.8, T + 1, 4)]], flexi=record)
    _check_p_dot_p(_row(flexi, cut, "model_interrupt"))
