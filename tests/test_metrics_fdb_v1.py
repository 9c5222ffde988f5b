"""The ``fdb-v1`` variant on M3 events: FDB's rules mapped onto our samples.

Every case is an output wav starting at input_start = 0; ``T`` the event start, ``E`` the
barge-in end.  ``w`` a system word (channel 1), ``u`` user speech (channel 0)."""

from __future__ import annotations

import pytest

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.metrics import EventView, get_variant


def _seg(channel: int, words: list[tuple[float, float]]) -> SpeechSegment:
    chunks = tuple(Chunk(s, e, f"w{i}") for i, (s, e) in enumerate(words))
    return SpeechSegment.of(channel, words[0][0], words[-1][1], "", chunks)


def _event(kind: str, segments: list[SpeechSegment], start: float = 2.0,
           end: float = 2.0) -> EventView:
    return EventView(event_id="e", event_type=kind, input_start=0.0, input_end=12.0,
                     event_start=start, event_end=end, segments=tuple(segments))


def _dims(event: EventView) -> dict[str, dict[str, object]]:
    score = get_variant("fdb-v1").score(event)
    return {d.dimension: {**d.values, **d.info} for d in score.dimensions}


def test_turn_taking_by_the_one_second_or_three_words_rule() -> None:
    """::

        user    uuuuuu|
        system        |  w w         2 words over 0.6 s: no takeover
        system        |  w w w w     4 words: takeover, latency 2.3 - 2.0 = 0.3 s
                      T=2.0
    """
    short = _event("TURN_SHIFT", [_seg(1, [(2.3, 2.5), (2.7, 2.9)])])
    assert _dims(short)["smooth_turn_taking"]["tor ↑"] == 0
    long = _event("TURN_SHIFT", [_seg(1, [(2.3, 2.4), (2.5, 2.6), (2.7, 2.8), (2.8, 2.9)])])
    dims = _dims(long)["smooth_turn_taking"]
    assert dims["tor ↑"] == 1 and dims["latency ↓"] == pytest.approx(0.3)


def test_an_early_start_is_clamped_to_zero_latency() -> None:
    """::

        user    uuuuuu|
        system     w  |   w          first word starts 1.5, the last ends 2.6: a 1.1 s span
                      T=2.0          -> takeover; latency 1.5 - 2.0 = -0.5 -> 0
    """
    dims = _dims(_event("TURN_SHIFT", [_seg(1, [(1.5, 1.7), (2.4, 2.6)])]))["smooth_turn_taking"]
    assert dims["tor ↑"] == 1 and dims["latency ↓"] == 0 and dims["latency_raw"] == \
        pytest.approx(-0.5)


def test_pause_tor_is_judged_on_the_whole_sample() -> None:
    silent = _event("TURN_HOLD", [_seg(0, [(0.0, 2.0)])])
    assert _dims(silent)["pause_handling"]["tor ↓"] == 0
    talks = _event("TURN_HOLD", [_seg(1, [(5.0, 6.2)])])  # one word over 1.2 s
    assert _dims(talks)["pause_handling"]["tor ↓"] == 1


def test_interruption_counts_only_words_after_it_ends() -> None:
    """::

        user    |~~~ barge-in ~~~|
        system  w w w w w        |  w w w w     the first four words are before E
                0                E=3.0 3.5
    """
    before = [(0.2 * i, 0.2 * i + 0.1) for i in range(5)]
    after = [(3.5, 3.7), (3.8, 4.0), (4.1, 4.3), (4.4, 4.6)]
    dims = _dims(_event("BARGE_IN", [_seg(1, before + after)], start=0.0, end=3.0))
    assert dims["user_interruption"]["tor ↑"] == 1
    assert dims["user_interruption"]["latency ↓"] == pytest.approx(0.5)
    assert dims["user_interruption"]["words"] == 4
    only_before = _dims(_event("BARGE_IN", [_seg(1, before)], start=0.0, end=3.0))
    assert only_before["user_interruption"]["tor ↑"] == 0


def test_v15_stop_and_response_latencies() -> None:
    """::

        user    uuuuuuu                uuu
        system       MMMMMMMMM             MMMM
                0   1.0    2.0  3.0    4.0  4.5
        stop: the overlap [1.0, 2.0] -> 1.0 s.  response: after the first user segment (ends
        2.0) the next system start is 4.5 (the one at 1.0 began before); after the second
        (ends 4.2) also 4.5: the later user end wins -> [4.2, 4.5], 0.3 s.
    """
    event = _event("BC", [_seg(0, [(0.0, 2.0)]), _seg(0, [(4.0, 4.2)]),
                          _seg(1, [(1.0, 3.0)]), _seg(1, [(4.5, 5.0)])], start=0.0, end=0.5)
    dims = _dims(event)["overlap_timing"]
    assert dims["latency_stop_list"] == [[1.0, 2.0]]
    assert dims["stop_latency ↓"] == pytest.approx(1.0)
    assert dims["latency_resp_list"] == [[4.2, 4.5]]
    assert dims["response_latency ↓"] == pytest.approx(0.3)


def test_the_variant_asks_for_full_transcripts() -> None:
    variant = get_variant("fdb-v1")
    assert set(variant.full_transcript_events) >= {"TURN_SHIFT", "TURN_HOLD", "BARGE_IN"}
    assert variant.dimensions("BARGE_IN") == ("user_interruption", "overlap_timing")


def test_model_backchannel_on_a_flexi_item() -> None:
    """A 10 s narrative with the reference mass at 2.0 and 6.0; the system backchannels there
    (two short one-word segments): TOR 0, freq 0.2 /s, a JSD below the silent system's 1::

        narrative  =======================|10.0
        system          mm          mm
    """
    dist = [0.0] * 51
    dist[10] = dist[30] = 0.5
    record = {"scenario": "model_backchannel",
              "reference_backchannels": {"bin_s": 0.2, "distribution": dist}}
    bcs = [_seg(1, [(2.0, 2.3)]), _seg(1, [(6.0, 6.3)])]
    good = _event("TURN_SHIFT", bcs, start=10.0, end=10.5)
    good = EventView(**{**good.__dict__, "metadata": {"flexi": record}})
    silent = EventView(**{**_event("TURN_SHIFT", [], start=10.0, end=10.5).__dict__,
                          "metadata": {"flexi": record}})
    dims = _dims(good)["backchannel"]
    assert dims["TOR ↓"] == 0 and dims["freq"] == pytest.approx(0.2)
    assert dims["JSD ↓"] < _dims(silent)["backchannel"]["JSD ↓"] == 1.0
