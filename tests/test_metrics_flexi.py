"""The ``flexi`` variant on FLEXI items: for every scenario a system that behaves well and one
that behaves badly, and the metric separates them.  Wav time (input_start = 0 unless said);
``w`` a system word (channel 1)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._scoring import score_events


def _words(*spans: tuple[float, float]) -> tuple[SpeechSegment, ...]:
    """One segment per run of words closer than 0.5 s."""
    out: list[list[Chunk]] = []
    for i, (s, e) in enumerate(spans):
        chunk = Chunk(s, e, f"w{i}")
        if out and s - out[-1][-1].end < 0.5:
            out[-1].append(chunk)
        else:
            out.append([chunk])
    return tuple(SpeechSegment.of(1, g[0].start, g[-1].end, "", tuple(g)) for g in out)


def _event(kind: str, start: float, end: float, record: dict[str, Any],
           segments: tuple[SpeechSegment, ...]) -> EventView:
    return EventView(event_id=f"{record['scenario']}-{id(segments)}", event_type=kind,
                     input_start=0.0, input_end=start + 10.0, event_start=start,
                     event_end=end, segments=segments, metadata={"flexi": record})


def _one(event: EventView, **settings: Any) -> dict[str, Any]:
    (score,) = score_events([event], get_variant("flexi", **settings))
    (dim,) = score.dimensions
    return {**dim.values, **dim.extras}


FOUR = [(0.0, 0.2), (0.3, 0.5), (0.6, 0.8), (0.9, 1.1)]


def _at(t: float, spans: list[tuple[float, float]] = FOUR) -> list[tuple[float, float]]:
    return [(t + a, t + b) for a, b in spans]


def test_turn_taking_latency_and_jump_in() -> None:
    """::

        user   ========|4.0
        good            |  w w w w      latency 0.3
        early      w w w w              starts 3.0: a jump-in, latency left out
    """
    record = {"scenario": "turn_taking", "user_turn": [0.0, 4.0]}
    good = _one(_event("TURN_SHIFT", 4.0, 4.3, record, _words(*_at(4.3))))
    early = _one(_event("TURN_SHIFT", 4.0, 4.3, record, _words(*_at(3.0))))
    assert good["TOR ↑"] == 1 and good["latency ↓"] == pytest.approx(0.3)
    assert good["jump_in ↓"] == 0 and early["jump_in ↓"] == 1 and early["latency ↓"] is None


def test_pause_handling_window_with_the_allowance() -> None:
    """::

        user   =====|  pause  |(muted; the reference continues to 6.0)
                    2.0      3.0
        bad              w w w w        first word 2.5: inside the pause -> TOR 1
        good                       w w w w     first word 4.0: after the window -> 0
    """
    record = {"scenario": "pause_handling", "user_turn": [0.0, 6.0], "pause": [2.0, 3.0]}
    bad = _one(_event("TURN_HOLD", 2.0, 3.0, record, _words(*_at(2.5))), latency=0.5)
    good = _one(_event("TURN_HOLD", 2.0, 3.0, record, _words(*_at(4.0))), latency=0.5)
    assert bad["TOR ↓"] == 1 and good["TOR ↓"] == 0
    # an allowance of 2.5 s stretches the window to 4.5: the same reply now counts as cutting in
    assert _one(_event("TURN_HOLD", 2.0, 3.0, record, _words(*_at(4.0))),
                latency=2.5)["TOR ↓"] == 1


def test_the_pause_window_is_the_pause_plus_l_in_the_paper_and_max_in_the_code() -> None:
    """A 1 s pause, L = 0.5 s, a reply at 3.3 s::

        user   =====|  pause  |
                    2.0      3.0
        paper       [--------------|3.5     window = pause + L: 3.3 is inside -> TOR 1
        compat      [---------|3.0          window = max(pause, L): 3.3 is after -> TOR 0
        reply                     w 3.3
    """
    record = {"scenario": "pause_handling", "user_turn": [0.0, 6.0], "pause": [2.0, 3.0]}
    event = _event("TURN_HOLD", 2.0, 3.0, record, _words(*_at(3.3)))
    assert _one(event, latency=0.5)["TOR ↓"] == 1
    assert _one(event, latency=0.5, compat=True)["TOR ↓"] == 0
    assert get_variant("flexi").definition() == "paper"
    assert get_variant("flexi", compat=True).definition() == "compat"


def test_user_interrupt_yields_or_talks_over() -> None:
    """The cluster is the system's speech overlapping the interruption::

        user             |===== interruption =====|
                         5.0                      9.0
        yields   w w w w w|                            |w w w w   cluster 4.9-5.3: yields
        talks    w w w w w w w w w w w w w w w w w w w w|    |w   cluster 4.9-9.0 (>= 3 s)
    """
    record = {"scenario": "user_interrupt", "interruption": [5.0, 9.0]}
    yields = _words(*[(4.0 + 0.3 * i, 4.2 + 0.3 * i) for i in range(5)], *_at(10.5))
    talks = _words(*[(4.0 + 0.3 * i, 4.2 + 0.3 * i) for i in range(17)], *_at(11.0))
    good = _one(_event("BARGE_IN", 5.0, 9.0, record, yields))
    bad = _one(_event("BARGE_IN", 5.0, 9.0, record, talks))
    assert good["TTR ↑"] == 1 and bad["TTR ↑"] == 0


def test_model_interrupt_cuts_in_on_the_emergency() -> None:
    """::

        user   ======== fire! =======|8.0          recognisable at 4.0
        good            w w w w                    first word 5.0: 3 s before the end
        bad                               w w w w  after the end: did not interrupt
    """
    record = {"scenario": "model_interrupt", "user_turn": [0.0, 8.0], "emergency": True,
              "recognisable_at": 4.0}
    good = _one(_event("TURN_SHIFT", 8.0, 8.5, record, _words(*_at(5.0))))
    bad = _one(_event("TURN_SHIFT", 8.0, 8.5, record, _words(*_at(8.5))))
    assert good["interrupted ↑"] == 1 and bad["interrupted ↑"] == 0
    assert good["reaction_s"] == pytest.approx(1.0)


def test_user_backchannel_keeps_talking_or_stops() -> None:
    """::

        user                  mm-hm (3.0)
        keeps   w w w w w w w w w w w w      no gap at 3.0: resumed
        stops   w w w w w|          |w w     a 2 s gap at the backchannel: interrupted
    """
    record = {"scenario": "user_backchannel", "backchannel": [3.0, 3.4]}
    keeps = _words(*[(1.0 + 0.4 * i, 1.3 + 0.4 * i) for i in range(12)])
    stops = _words(*[(1.0 + 0.4 * i, 1.3 + 0.4 * i) for i in range(5)], (5.0, 5.3),
                   (5.4, 5.7))
    good = _one(_event("BC", 3.0, 3.4, record, keeps))
    bad = _one(_event("BC", 3.0, 3.4, record, stops))
    assert (good["interrupted ↓"], good["resumed ↑"]) == (0, 1)
    assert (bad["interrupted ↓"], bad["resumed ↑"]) == (1, 0)


def test_model_backchannel_rate_and_jsd_against_the_reference() -> None:
    """A 10 s narrative (T = 10.0); the reference puts its mass at 2.0 and 6.0::

        narrative  ===========================|10.0
        matches         mm          mm               backchannels at 2.0 and 6.0: low JSD
        misplaced                         mm  mm     at 8.0 and 9.0: higher JSD
        talks        w w w w w w w w w w w w         a turn: TOR 1
    """
    dist = [0.0] * 51
    dist[10] = dist[30] = 0.5
    record = {"scenario": "model_backchannel",
              "reference_backchannels": {"bin_s": 0.2, "distribution": dist}}
    matches = _one(_event("TURN_SHIFT", 10.0, 10.5, record, _words((2.0, 2.3), (6.0, 6.3))))
    misplaced = _one(_event("TURN_SHIFT", 10.0, 10.5, record, _words((8.0, 8.3), (9.0, 9.3))))
    talks = _one(_event("TURN_SHIFT", 10.0, 10.5, record,
                        _words(*[(1.0 + 0.3 * i, 1.2 + 0.3 * i) for i in range(12)])))
    assert matches["TOR ↓"] == 0 and matches["BCR"] == pytest.approx(0.2)
    assert matches["JSD ↓"] < misplaced["JSD ↓"] <= 1.0
    assert talks["TOR ↓"] == 1


def test_the_pause_allowance_is_the_runs_turn_taking_latency() -> None:
    """Two turn-taking items answer after 0.4 and 0.8 s: the allowance is 0.6 s, so a reply
    0.3 s after a 0.2 s pause is inside the window."""
    tt = {"scenario": "turn_taking", "user_turn": [0.0, 4.0]}
    pause = {"scenario": "pause_handling", "user_turn": [0.0, 6.0], "pause": [2.0, 2.2]}
    events = [_event("TURN_SHIFT", 4.0, 4.4, tt, _words(*_at(4.4))),
              _event("TURN_SHIFT", 4.0, 4.8, tt, _words(*_at(4.8))),
              _event("TURN_HOLD", 2.0, 2.2, pause, _words(*_at(2.5)))]
    variant = get_variant("flexi")
    scores = score_events(events, variant)
    assert variant.settings()["pause_allowance_s"] == pytest.approx(0.6)
    assert scores[-1].dimensions[0].values["TOR ↓"] == 1


def _dimension(event: EventView) -> Any:
    (score,) = score_events([event], get_variant("flexi"))
    (dim,) = score.dimensions
    return dim


def test_the_model_backchannel_jsd_is_flexis_value_or_none_with_why_never_nan() -> None:
    """One backchannel at 2.0-2.3 s of a 10 s narrative fills the 0.2 s bins 10 and 11 (p = 1/2
    each; 51 bins); against a uniform reference q = 1/51, m = (p + q) / 2, the base-2 divergence
    is ``(log2(102/53) + (2/51) log2(4/53) + 49/51) / 2 = 0.8796``::

        narrative  =================================|10.0
        system          bb                              bins 10-11
        reference A        .  (0.1 s bins: 2.1 s)       resized to 0.2 s bins: the mass at
                                                        an odd 0.1 s bin falls between them
        reference B                                  .  (12.0 s: outside the sample)
        reference C  none

    FLEXI's ground truth gives every bin 1e-10 and is uniform for an item without a
    backchannel, so both A (NaN before: the resized reference was all 0) and B (None before,
    no reason) are compared with a uniform reference, and the rule is said; a system without a
    backchannel gets FLEXI's 1; an item without a distribution gets None with its reason."""
    expected = (math.log2(102 / 53) + 2 / 51 * math.log2(4 / 53) + 49 / 51) / 2
    fine = [0.0] * 101
    fine[21] = 1.0
    outside = [0.0] * 61
    outside[60] = 1.0
    backchannel = _words((2.0, 2.3))
    for dist, width, rule in ((fine, 0.1, "fall between the bins"),
                              (outside, 0.2, "no reference backchannel in the sample's window")):
        record = {"scenario": "model_backchannel",
                  "reference_backchannels": {"bin_s": width, "distribution": dist}}
        dim = _dimension(_event("TURN_SHIFT", 10.0, 10.5, record, backchannel))
        assert dim.values["JSD ↓"] == pytest.approx(expected, abs=1e-6)
        assert rule in dim.info["jsd_rule"] and "reasons" not in dim.info
    silent = _dimension(_event("TURN_SHIFT", 10.0, 10.5, {
        "scenario": "model_backchannel",
        "reference_backchannels": {"bin_s": 0.2, "distribution": outside}}, ()))
    assert silent.values["JSD ↓"] == 1.0
    assert silent.info["jsd_rule"].startswith("no backchannel from the system: 1")
    none = _dimension(_event("TURN_SHIFT", 10.0, 10.5, {"scenario": "model_backchannel"},
                             backchannel))
    assert none.values["JSD ↓"] is None
    assert none.info["reasons"] == {"JSD ↓": "the item has no reference backchannel "
                                             "distribution"}
