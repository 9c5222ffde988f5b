"""The m3 timing variant, rule by rule, on hand-computed cases drawn as timelines.

Legend: ``u`` user speech (reference), ``M`` a model segment (channel 1), ``|`` the reference
time the rule measures from.  ``input_start`` is 0 so wav time = dialogue time.
"""

from __future__ import annotations

import pytest

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics.timing._m3 import M3Timing

M3 = get_variant("m3")


def seg(start: float, end: float, words: int = 5, channel: int = 1) -> SpeechSegment:
    step = (end - start) / max(words, 1)
    chunks = tuple(Chunk(start + i * step, start + (i + 1) * step, f"w{i}")
                   for i in range(words))
    return SpeechSegment.of(channel, start, end, " ".join(c.text for c in chunks), chunks)


def event(kind: str, start: float, end: float, *segments: SpeechSegment,
          input_end: float = 12.0) -> EventView:
    return EventView(event_id="e", event_type=kind, input_start=0.0, input_end=input_end,
                     event_start=start, event_end=end, segments=tuple(segments))


def values(ev: EventView) -> dict:
    (dim,) = M3.score(ev).dimensions
    return {**dim.values, **dim.extras, "miss": dim.info.get("miss_type")}


# -- smooth turn-taking -------------------------------------------------------------------------

def test_turn_taken_after_the_user_stops() -> None:
    """user uuuuuuuuu|        T = 2.4, human response at 2.9
       model           MMMMM  starts 3.0: TOR 1, latency 0.6, |0.6 - 0.5| = 0.1 to human"""
    v = values(event("TURN_SHIFT", 2.4, 2.9, seg(3.0, 5.0)))
    assert v["tor ↑"] == 1 and v["latency ↓"] == pytest.approx(0.6)
    assert v["tor_err_silence"] == 0 and v["tor_err_long_overlap"] == 0
    assert v["human_latency"] == pytest.approx(0.5)
    assert v["latency_abs_err_to_human"] == pytest.approx(0.1)


def test_segment_starting_exactly_0_4_s_early_counts() -> None:
    """user uuuuuuuuu|        T = 2.4
       model     MMMMMMMMM    starts at T - 0.4 = 2.0 (inclusive): TOR 1, latency -0.4"""
    v = values(event("TURN_SHIFT", 2.4, 2.6, seg(2.0, 4.0)))
    assert v["tor ↑"] == 1 and v["latency ↓"] == pytest.approx(-0.4)


def test_segment_starting_more_than_0_4_s_early_is_a_long_overlap() -> None:
    """user uuuuuuuuu|
       model    MMMMMMMMMM    starts 1.9 < 2.0 and ends after T: long overlap, no turn"""
    v = values(event("TURN_SHIFT", 2.4, 2.6, seg(1.9, 4.0)))
    assert v["tor ↑"] == 0 and v["latency ↓"] is None
    assert v["tor_err_long_overlap"] == 1 and v["tor_err_silence"] == 0
    assert v["miss"] == "long_overlap" and v["latency_abs_err_to_human"] is None


def test_segment_ending_exactly_at_the_turn_end_is_silence() -> None:
    """user uuuuuuuuu|
       model   MMMMMM|        ends at T (end > T fails): the model said nothing after T"""
    v = values(event("TURN_SHIFT", 2.4, 2.6, seg(1.0, 2.4)))
    assert v["tor ↑"] == 0 and v["tor_err_silence"] == 1 and v["miss"] == "silence"


def test_no_segment_at_all_is_silence() -> None:
    v = values(event("TURN_SHIFT", 2.4, 2.6))
    assert v == {"tor ↑": 0, "latency ↓": None, "tor_err_silence": 1,
                 "tor_err_long_overlap": 0, "human_latency": pytest.approx(0.2),
                 "latency_abs_err_to_human": None, "miss": "silence"}


def test_closest_start_wins_even_when_early() -> None:
    """user uuuuuuuuu|
       model       MMM  MMMM  starts 2.2 (0.2 early) and 2.7 (0.3 late): the early one wins"""
    v = values(event("TURN_SHIFT", 2.4, 2.6, seg(2.2, 2.5, 1), seg(2.7, 4.0)))
    assert v["latency ↓"] == pytest.approx(-0.2)


def test_short_model_utterance_takes_the_turn() -> None:
    """No backchannel filter for smooth turn-taking: a one-word 0.3 s reply is a turn."""
    v = values(event("TURN_SHIFT", 2.4, 2.6, seg(2.5, 2.8, 1)))
    assert v["tor ↑"] == 1 and v["latency ↓"] == pytest.approx(0.1)


def test_user_channel_segments_are_ignored() -> None:
    v = values(event("TURN_SHIFT", 2.4, 2.6, seg(2.5, 3.0, channel=0)))
    assert v["tor ↑"] == 0 and v["tor_err_silence"] == 1


# -- pause handling -------------------------------------------------------------------------------

def test_model_keeps_quiet_through_the_pause() -> None:
    """user uuuu|      |uuuu  pause [2.0, 3.0]
       model              MMM  first start after the pause end 4.0: latency 2.0"""
    v = values(event("TURN_HOLD", 2.0, 3.0, seg(4.0, 6.0)))
    assert v["tor ↓"] == 0 and v["latency ↑"] == pytest.approx(2.0)
    assert v["latency_wo_long_overlap"] == pytest.approx(2.0)
    assert v["tor_err_normal"] == 0 and v["tor_err_long_overlap"] == 0 and v["miss"] == "none"


def test_no_segment_at_all_gives_the_whole_window() -> None:
    v = values(event("TURN_HOLD", 2.0, 3.0, input_end=12.0))
    assert v["tor ↓"] == 0 and v["latency ↑"] == pytest.approx(10.0)


def test_short_model_utterance_inside_a_pause_is_a_backchannel() -> None:
    """user uuuu|      |uuuu
       model       MM          0.5 s, 2 words: a model backchannel, not a takeover; the latency
                               falls back to the next start at or after the pause end"""
    v = values(event("TURN_HOLD", 2.0, 3.0, seg(2.2, 2.7, 2), seg(5.0, 6.0)))
    assert v["tor ↓"] == 0 and v["latency ↑"] == pytest.approx(3.0)


def test_one_second_or_four_words_is_not_a_backchannel() -> None:
    v = values(event("TURN_HOLD", 2.0, 4.0, seg(2.2, 3.2, 2)))  # exactly 1.0 s
    assert v["tor ↓"] == 1
    v = values(event("TURN_HOLD", 2.0, 4.0, seg(2.2, 2.7, 4)))  # 4 words
    assert v["tor ↓"] == 1


def test_takeover_during_the_pause() -> None:
    """user uuuu|      |uuuu
       model        MMMMMMMM   starts 2.5: TOR 1 (a takeover), latency 0.5"""
    v = values(event("TURN_HOLD", 2.0, 3.0, seg(2.5, 4.0)))
    assert v["tor ↓"] == 1 and v["latency ↑"] == pytest.approx(0.5)
    assert v["tor_err_normal"] == 1 and v["tor_err_long_overlap"] == 0
    assert v["latency_wo_long_overlap"] == pytest.approx(0.5) and v["miss"] == "takeover"


def test_long_overlap_into_the_pause() -> None:
    """user uuuu|      |uuuu
       model MMMMMMMMMM        started 1.0 (> 0.4 s before the pause): long overlap, latency
                               -1.0 kept but not in latency_wo_long_overlap"""
    v = values(event("TURN_HOLD", 2.0, 3.0, seg(1.0, 2.5)))
    assert v["tor ↓"] == 1 and v["latency ↑"] == pytest.approx(-1.0)
    assert v["latency_wo_long_overlap"] is None
    assert v["tor_err_long_overlap"] == 1 and v["tor_err_normal"] == 0


def test_segment_ending_exactly_at_the_pause_start_does_not_overlap() -> None:
    v = values(event("SHORTPAUSE", 2.0, 2.4, seg(0.5, 2.0), seg(2.4, 3.0, 1)))
    assert v["tor ↓"] == 0 and v["latency ↑"] == pytest.approx(0.4)


# -- pause handling: official window fallback vs the paper's responders-only latency --------------

def test_silent_system_gets_the_window_officially_and_no_responders_latency() -> None:
    """user  uuuu|   |uuuu                     pause [2.0, 3.0], window to 12.0
       model                                  silent: official latency 12.0 - 2.0 = 10.0 (the
                                              best value), flagged as the fallback; the
                                              paper's responders-only latency is undefined"""
    v = values(event("TURN_HOLD", 2.0, 3.0, input_end=12.0))
    assert v["latency ↑"] == pytest.approx(10.0) and v["latency_wo_long_overlap"] == 10.0
    assert v["latency_responders ↑"] is None
    (dim,) = M3.score(event("TURN_HOLD", 2.0, 3.0, input_end=12.0)).dimensions
    assert dim.info["latency_fallback"] is True


def test_responder_after_the_pause_has_the_same_latency_both_ways() -> None:
    """user  uuuu|   |uuuu                     pause [2.0, 3.0]
       model              MMMMM               starts 5.0: both latencies 3.0, no fallback"""
    ev = event("TURN_HOLD", 2.0, 3.0, seg(5.0, 7.0))
    v = values(ev)
    assert v["latency ↑"] == pytest.approx(3.0) and v["latency_responders ↑"] == pytest.approx(3.0)
    assert M3.score(ev).dimensions[0].info["latency_fallback"] is False


def test_takeover_and_long_overlap_are_responses() -> None:
    """user  uuuu|   |uuuu
       model       MMMMMM                     takeover at 2.5: both 0.5
       model MMMMMMMMM                        long overlap from 1.0: both -1.0 (a response)"""
    v = values(event("TURN_HOLD", 2.0, 3.0, seg(2.5, 4.0)))
    assert v["latency_responders ↑"] == pytest.approx(0.5) == v["latency ↑"]
    v = values(event("TURN_HOLD", 2.0, 3.0, seg(1.0, 2.5)))
    assert v["latency_responders ↑"] == pytest.approx(-1.0) == v["latency ↑"]


def test_backchannel_in_the_pause_is_not_the_response() -> None:
    """user  uuuu|   |uuuu
       model      MM                          0.5 s, 2 words in the pause: a backchannel, no
                                              response; then silent: official 10, responders
                                              None"""
    v = values(event("TURN_HOLD", 2.0, 3.0, seg(2.2, 2.7, 2)))
    assert v["tor ↓"] == 0 and v["latency ↑"] == pytest.approx(10.0)
    assert v["latency_responders ↑"] is None


def test_response_more_than_the_window_after_the_pause_start_is_excluded() -> None:
    """A SHORTPAUSE window runs to the TURN end + 10 s, so a response can start more than
    Delta = 10 s after the pause start (inclusive limit):

       user  uu|  |uuuuuuuu|                  pause [1.0, 1.4], turn end 4.0, window to 14.0
       model                    ...    MMM    starts 11.0: official 10.0, responders 10.0
       model                    ...     MMM   starts 11.5: official 10.5, responders None"""
    v = values(event("SHORTPAUSE", 1.0, 1.4, seg(11.0, 12.0), input_end=14.0))
    assert v["latency ↑"] == pytest.approx(10.0)
    assert v["latency_responders ↑"] == pytest.approx(10.0)
    v = values(event("SHORTPAUSE", 1.0, 1.4, seg(11.5, 12.0), input_end=14.0))
    assert v["latency ↑"] == pytest.approx(10.5) and v["latency_responders ↑"] is None
    assert M3Timing(response_window=11.0).pause_handling(
        event("SHORTPAUSE", 1.0, 1.4, input_end=14.0), [seg(11.5, 12.0)]
    ).extras["latency_responders ↑"] == pytest.approx(10.5)


def test_responders_latency_is_an_extra_with_its_own_n() -> None:
    """Three holds, pause [2.0, 3.0], window to 12.0:

       a  model                               silent:       official 10.0, responders -
       b  model             MMM               starts 4.0:   official  2.0, responders 2.0
       c  model              MMM              starts 5.0:   official  3.0, responders 3.0

    Official mean (10 + 2 + 3) / 3 = 5.0 over n = 3 (unchanged, in aggregate.json);
    responders mean 2.5 over n = 2 (results.json only, not official)."""
    from duplexeval.metrics._scoring import aggregate_rows, official_aggregate, score_events

    scores = score_events([event("TURN_HOLD", 2.0, 3.0), event("TURN_HOLD", 2.0, 3.0, seg(4, 6)),
                           event("TURN_HOLD", 2.0, 3.0, seg(5, 6))], M3)
    official = {r["metric"]: r for r in official_aggregate(scores)}
    assert official["latency ↑"]["n"] == 3 and official["latency ↑"]["mean"] == pytest.approx(5.0)
    assert "latency_responders ↑" not in official
    extra = [r for r in aggregate_rows(scores) if r["metric"] == "latency_responders ↑"]
    assert len(extra) == 1 and not extra[0]["official"]
    assert extra[0]["n"] == 2 and extra[0]["mean"] == pytest.approx(2.5)


# -- user backchannel and barge-in ---------------------------------------------------------------

def test_barge_in_stop_latency() -> None:
    """user  |uuuuuu        onset 0 (= input_start)
       model MMMMMMM|       target: earliest start < 0.5; stop latency = its end = 1.2"""
    v = values(event("BARGE_IN", 0.0, 2.0, seg(0.0, 1.2), seg(3.0, 4.0)))
    assert v == {"stop_latency ↓": pytest.approx(1.2), "is_speaking": 1, "miss": None}


def test_segment_starting_0_5_s_after_a_barge_in_onset_is_not_speaking() -> None:
    """user  |uuuuuu
       model      MMMM      starts exactly 0.5 after the onset (start < onset + 0.5 fails)"""
    v = values(event("BARGE_IN", 0.0, 2.0, seg(0.5, 2.0)))
    assert v["stop_latency ↓"] is None and v["is_speaking"] == 0
    v = values(event("BARGE_IN", 0.0, 2.0, seg(0.49, 2.0)))
    assert v["stop_latency ↓"] == pytest.approx(2.0) and v["is_speaking"] == 1


def test_backchannel_uses_the_up_arrow_and_no_end_test() -> None:
    """user      |u           onset 1.0 (input_start 0)
       model MMM            ended before the onset: still the target (no end test), -0.4"""
    v = values(event("BC", 1.0, 1.3, seg(0.2, 0.6), seg(1.2, 3.0)))
    assert v["stop_latency ↑"] == pytest.approx(-0.4) and v["is_speaking"] == 1


def test_backchannel_with_no_model_speech() -> None:
    v = values(event("BC", 0.0, 0.3))
    assert v == {"stop_latency ↑": None, "is_speaking": 0, "miss": None}


def test_variant_records_its_settings_and_unscored_types() -> None:
    assert M3.name == "m3" and M3.version == "1" and "timing.py" in M3.source
    assert M3.settings()["max_overlap"] == 0.4 and M3.settings()["response_window"] == 10.0
    assert M3.dimensions("TURN") == ()
    assert M3Timing(max_overlap=0.2).smooth_turn_taking(
        event("TURN_SHIFT", 2.4, 2.6), [seg(2.1, 3.0)]).values["tor ↑"] == 0


def test_the_paper_mode_counts_only_a_segment_speaking_at_the_onset() -> None:
    """The paper: stop latency only if the model speaks at the onset (1.0)::

        user      |u              onset 1.0
        model MMM   MMMMMM        0.2-0.6 ended before; 1.2-3.0 starts 0.2 s after
        code:  the earliest start before onset + 0.5 -> 0.2-0.6, latency -0.4
        paper: no segment with start <= 1.0 < end -> None, not speaking
        model   MMMMMMMM          0.5-2.5 covers the onset: latency 1.5 in both
    """
    paper = M3Timing(paper=True)
    early_and_late = event("BC", 1.0, 1.3, seg(0.2, 0.6), seg(1.2, 3.0))
    (dim,) = paper.score(early_and_late).dimensions
    assert dim.values == {"stop_latency ↑": None, "is_speaking": 0}
    covering = event("BARGE_IN", 1.0, 2.0, seg(0.5, 2.5))
    assert paper.score(covering).dimensions[0].values["stop_latency ↓"] == pytest.approx(1.5)
    assert values(covering)["stop_latency ↓"] == pytest.approx(1.5)
    assert paper.definition() == "paper" and M3Timing().definition() == "official code"
