"""The ``turnbench`` variant: window matching of turn ends, false positives once per pause, the
barge-in cost in seconds, and the p10/p50/p90 rows.

Output wav time (input_start = 0, input_end = W = 12 s); ``u`` user speech, ``M`` system segments
(channel 1), ``t`` the user's turn end (event start)."""

from __future__ import annotations

import pytest

from duplexeval.analysis import SpeechSegment
from duplexeval.data import Dialogue
from duplexeval.events import Event, EventKind
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._scoring import aggregate_rows, official_aggregate, score_events
from duplexeval.metrics._stats import quantiles
from duplexeval.metrics.timing._bargein_cost import false_stop, missed_stop
from duplexeval.metrics.timing._operating_point import (
    TurnTakingPoint,
    operating_point,
    turn_taking_point,
)
from duplexeval.metrics.timing._turn_context import turn_context

T = 4.0


def _seg(start: float, end: float, channel: int = 1) -> SpeechSegment:
    return SpeechSegment.of(channel, start, end, "", ())


def _event(kind: str, segments: list[SpeechSegment], start: float = T, end: float = T + 0.5,
           **meta: object) -> EventView:
    return EventView(event_id=f"{kind}{start}{id(segments)}", event_type=kind,
                     input_start=0.0, input_end=12.0, event_start=start, event_end=end,
                     segments=tuple(segments), metadata=dict(meta))


def _dim(event: EventView) -> tuple[dict[str, object], dict[str, object], dict[str, object]]:
    (dim,) = get_variant("turnbench").score(event).dimensions
    return dim.values, dim.extras, dim.info


@pytest.mark.parametrize(("onset", "match"), [
    (T - 0.3, 0), (T - 0.2, 1), (T - 0.25, 1), (T + 3.0, 1), (T + 3.1, 0)])
def test_an_onset_matches_inside_the_window_only(onset: float, match: int) -> None:
    """::

        user    uuuuuuuuuuuu|
        window        [3.75 |........... 7.0]      t - 0.25 .. t + 3 (inclusive)
        system    x   x                  x  x      3.7 no, 3.8 yes, 7.0 yes, 7.1 no
    """
    values, _, _ = _dim(_event("TURN_SHIFT", [_seg(onset, onset + 2.0)]))
    assert values["match ↑"] == match
    assert values["latency ↓"] == (pytest.approx(onset - T) if match else None)


def test_the_first_onset_in_the_window_is_the_match_and_an_earlier_long_overlap_is_not() -> None:
    """::

        user    uuuuuuuuuuuu|
        system  MMMMMMMMMMM          MMMM   MMM     the first segment starts at 1.0 (before
                                     5.0    6.0    the window): not an onset in it; 5.0 is
    """
    values, _, info = _dim(_event("TURN_SHIFT", [_seg(1.0, 4.2), _seg(5.0, 5.5),
                                                 _seg(6.0, 7.0)]))
    assert values == {"match ↑": 1, "latency ↓": pytest.approx(1.0)}
    assert info["window"] == [pytest.approx(3.75), pytest.approx(7.0)]


def test_the_next_user_onset_closes_the_window() -> None:
    """The user speaks again at 5.5 (dialogue time; input_start 2.0, so 3.5 in wav time)::

        user    uuuu|    |uu          t = 4.0 - 2.0 = 2.0 in wav time
        system              MMM       onset 4.0 (wav): after the next onset 3.5: a miss
    """
    event = EventView(event_id="e", event_type="TURN_SHIFT", input_start=2.0, input_end=14.0,
                      event_start=4.0, event_end=4.5, segments=(_seg(4.0, 5.0),),
                      metadata={"next_user_onset": 5.5})
    values, _, info = _dim(event)
    assert values["match ↑"] == 0
    assert info["window"][1] == pytest.approx(3.5)
    assert info["window_end_by"] == "next_user_onset"
    early = EventView(event_id="e", event_type="TURN_SHIFT", input_start=2.0, input_end=14.0,
                      event_start=4.0, event_end=4.5, segments=(_seg(3.0, 5.0),),
                      metadata={"next_user_onset": 5.5})
    assert _dim(early)[0] == {"match ↑": 1, "latency ↓": pytest.approx(1.0)}


def test_two_onsets_in_one_pause_count_once() -> None:
    """::

        user    uuuuuu|              |uuuu     pause [4.0, 6.0)
        one             MM   MM                two onsets (4.5, 5.2): one false positive
        edge                         MMM       an onset at the pause end: none
        before      MMMMMMMMM                  a segment that started before: no onset
    """
    two = _event("TURN_HOLD", [_seg(4.5, 4.8), _seg(5.2, 5.6)], end=6.0)
    values, _, info = _dim(two)
    assert values == {"false_positive ↓": 1} and info["onsets"] == 2
    assert _dim(_event("TURN_HOLD", [_seg(6.0, 7.0)], end=6.0))[0] == {"false_positive ↓": 0}
    assert _dim(_event("SHORTPAUSE", [_seg(3.0, 5.0)], end=6.0))[0] == {"false_positive ↓": 0}
    rows = {(r["event_type"], r["metric"]): r for r in official_aggregate(score_events(
        [two, _event("TURN_HOLD", [], end=6.0), _event("TURN_HOLD", [], end=6.0),
         _event("TURN_HOLD", [_seg(4.1, 4.3)], end=6.0)], get_variant("turnbench")))}
    assert rows[("TURN_HOLD", "false_positive ↓")]["mean"] == pytest.approx(0.5)  # 2 of 4


def test_a_false_stop_costs_the_rest_of_the_reference_turn() -> None:
    """The system's turn would have run to 9.0 (the reference turn end, dialogue time)::

        user      |bc|                   BC [4.0, 4.5]
        yields  MMMMMM|                  stops at 4.6: false stop, penalty 9.0 - 4.6 = 4.4
        ignores MMMMMMMMMMMMMMMMMMM|     runs to 9.0: no false stop, penalty 0
        late    MMMMMMMMMM|              stops at 6.0 > 4.5 + 1.0: not a reaction, penalty 0
    """
    yields = _dim(_event("BC", [_seg(1.0, 4.6)], reference_turn_end=9.0))
    assert yields[0] == {"false_stop ↓": 1, "stop_latency": pytest.approx(0.6)}
    assert yields[1]["penalty_s ↓"] == pytest.approx(4.4)
    ignores = _dim(_event("BC", [_seg(1.0, 9.0)], reference_turn_end=9.0))
    assert ignores[0]["false_stop ↓"] == 0 and ignores[1]["penalty_s ↓"] == 0.0
    late = _dim(_event("BC", [_seg(1.0, 6.0)], reference_turn_end=9.0))
    assert late[0]["false_stop ↓"] == 0 and late[1]["penalty_s ↓"] == 0.0
    # without the dialogue, the turn is charged to the window end W = 12
    assert _dim(_event("BC", [_seg(1.0, 4.6)]))[1]["penalty_s ↓"] == pytest.approx(7.4)
    # the sample starts at the onset: a turn whose speech resumes 10 ms later is the turn
    lead_in = _dim(_event("BC", [_seg(4.01, 4.6)], reference_turn_end=9.0))
    assert lead_in[0]["false_stop ↓"] == 1 and lead_in[1]["penalty_s ↓"] == pytest.approx(4.4)
    silent = _dim(_event("BC", [_seg(4.5, 6.0)], reference_turn_end=9.0))
    assert silent[0]["false_stop ↓"] is None and silent[1]["penalty_s ↓"] is None


def test_a_missed_stop_costs_the_time_until_the_system_yields() -> None:
    """::

        user    |uuuuuuuuuuu|            barge-in at 4.0
        timely  MMMM|                    stops at 4.3 (<= 0.5 s): penalty 0
        missed  MMMMMMMMMMMMMMM|         stops at 6.5: missed, penalty 2.5
        never   MMMMMMMMMMMMMMMMMMMMMMM| to the window end 12: penalty 8, censored
    """
    timely = _dim(_event("BARGE_IN", [_seg(1.0, 4.3)], end=6.0))
    assert timely[0] == {"missed_stop ↓": 0, "stop_latency ↓": pytest.approx(0.3)}
    assert timely[1]["penalty_s ↓"] == 0.0
    missed = _dim(_event("BARGE_IN", [_seg(1.0, 6.5)], end=6.0))
    assert missed[0]["missed_stop ↓"] == 1 and missed[1]["penalty_s ↓"] == pytest.approx(2.5)
    never = _dim(_event("BARGE_IN", [_seg(1.0, 12.0)], end=6.0))
    assert never[1]["penalty_s ↓"] == pytest.approx(8.0) and never[2]["censored"] is True


def test_a_system_that_yields_to_every_backchannel_pays_more() -> None:
    """Three backchannels in one reference turn to 10.0; one system stops 0.3 s into each,
    the other talks on::

        user       |b|    |b|    |b|        BCs at 3, 5, 7
        yields  MMMM|  MMM|  MMM|   M       penalties 10 - 3.3, 10 - 5.3, 10 - 7.3
        ignores MMMMMMMMMMMMMMMMMMMMMMM|    none
    """
    variant = get_variant("turnbench")
    yields = [_event("BC", [_seg(0.0, a + 0.3)], start=a, end=a + 0.4, reference_turn_end=10.0)
              for a in (3.0, 5.0, 7.0)]
    ignores = [_event("BC", [_seg(0.0, 10.0)], start=a, end=a + 0.4, reference_turn_end=10.0)
               for a in (3.0, 5.0, 7.0)]

    def penalty(events: list[EventView]) -> float:
        rows = [r for r in aggregate_rows(score_events(events, variant),
                                          variant.quantile_metrics)
                if r["metric"] == "penalty_s ↓" and r["language"] == "all"]
        return float(rows[0]["mean"])

    assert penalty(yields) == pytest.approx((6.7 + 4.7 + 2.7) / 3)
    assert penalty(ignores) == 0.0


def test_background_speech_is_charged_to_the_annotated_reply_end() -> None:
    """``mtr_round`` annotates background speech [6.0, 7.0] over a reply [5.0, 11.0]::

        other          |bg|
        system   MMMMMMM|           stops at 6.2: false stop, penalty 11.0 - 6.2 = 4.8
    """
    round_ = {"background_span": [6.0, 7.0], "reply_span": [5.0, 11.0]}
    dims = get_variant("turnbench").score(
        _event("TURN_SHIFT", [_seg(4.5, 6.2)], mtr_round=round_)).dimensions
    background = {d.dimension: d for d in dims}["background"]
    assert background.values["false_stop ↓"] == 1
    assert background.extras["penalty_s ↓"] == pytest.approx(4.8)


def test_the_rules_alone() -> None:
    assert false_stop([_seg(0.0, 2.0)], 3.0, 3.5, 8.0, 12.0) is None
    cost = missed_stop([_seg(0.0, 3.6)], 3.0, 12.0)
    assert cost is not None and cost.wrong == 1 and cost.penalty_s == pytest.approx(0.6)


def test_quantiles_of_a_known_set_and_only_on_the_rows_asked_for() -> None:
    """Linear interpolation between order statistics (numpy's default): of 1..10, p10 = 1.9,
    p50 = 5.5, p90 = 9.1; latencies 0.1 .. 1.0 s."""
    assert quantiles(range(1, 11)) == pytest.approx({"p10": 1.9, "p50": 5.5, "p90": 9.1})
    assert quantiles([2.0]) == {"p10": 2.0, "p50": 2.0, "p90": 2.0}
    assert quantiles([]) is None
    variant = get_variant("turnbench")
    events = [_event("TURN_SHIFT", [_seg(T + k / 10, T + 2.0)]) for k in range(1, 11)]
    scores = score_events(events, variant)
    rows = {r["metric"]: r for r in aggregate_rows(scores, variant.quantile_metrics)}
    assert rows["latency ↓"]["quantiles"] == pytest.approx({"p10": 0.19, "p50": 0.55,
                                                           "p90": 0.91})
    assert "quantiles" not in rows["match ↑"]
    assert all("quantiles" not in r for r in official_aggregate(scores))
    assert all("quantiles" not in r for r in aggregate_rows(scores))


def test_the_dialogue_says_where_the_user_speaks_next_and_the_reference_turn_ends() -> None:
    """::

        ch0 (user)   |==TURN==|        |bc|    |==TURN==|
        ch1 (ref)                |===TURN=========|
                     0       2.0 2.5   4  4.5 6  7     9
    """
    dialogue = Dialogue(id="d", events=(
        Event(EventKind.TURN, 0, 0.0, 2.0), Event(EventKind.TURN, 1, 2.5, 7.0),
        Event(EventKind.BC, 0, 4.0, 4.5), Event(EventKind.TURN, 0, 6.0, 9.0)))
    assert turn_context(dialogue, 0, 2.0) == {"next_user_onset": 4.0}
    assert turn_context(dialogue, 0, 4.0) == {"next_user_onset": 6.0, "reference_turn_end": 7.0}
    assert turn_context(dialogue, 0, 9.0) == {}


def _point(threshold: float, fp: float, match: float, p50: float) -> TurnTakingPoint:
    return TurnTakingPoint(threshold, match, fp, {"p10": p50, "p50": p50, "p90": p50}, 10, 10)


def test_the_operating_point_under_a_false_positive_ceiling() -> None:
    """The module docstring's table::

        threshold   0.2   0.4   0.6   0.9
        FP rate     0.50  0.30  0.20  0.10
        match       1.00  1.00  0.90  0.90
        p50 (s)     0.5   0.7   0.9   1.2
    """
    points = [_point(0.2, 0.5, 1.0, 0.5), _point(0.4, 0.3, 1.0, 0.7),
              _point(0.6, 0.2, 0.9, 0.9), _point(0.9, 0.1, 0.9, 1.2)]
    assert operating_point(points, 0.25) == points[2]
    assert operating_point(points, 0.3) == points[1]
    assert operating_point(points, 1.0) == points[0]
    assert operating_point(points, 0.05) is None


def test_a_point_from_turnbench_scores() -> None:
    """Two turn ends (one matched at 0.4 s, one missed) and two pauses (one with an onset)."""
    events = [_event("TURN_SHIFT", [_seg(T + 0.4, T + 2.0)]), _event("TURN_SHIFT", []),
              _event("TURN_HOLD", [_seg(4.2, 4.4)], end=6.0), _event("TURN_HOLD", [], end=6.0)]
    scores = score_events(events, get_variant("turnbench"))
    point = turn_taking_point(0.6, [d for s in scores for d in s.dimensions])
    assert (point.match_rate, point.false_positive_rate) == (0.5, 0.5)
    assert point.latency == pytest.approx({"p10": 0.4, "p50": 0.4, "p90": 0.4})
    assert (point.turn_ends, point.pauses) == (2, 2)
