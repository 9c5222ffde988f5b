"""The ``mtr`` variant: MTR-DuplexBench's rules (``Eval/eval_1_scenario.py`` and friends) on our
events, and the round-by-round rows.

Output wav time (input_start = 0); ``w`` system words (channel 1), ``T`` event start, ``E``
event end, window end ``W`` = 12 s."""

from __future__ import annotations

import pytest

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._scoring import aggregate_rows, score_events
from duplexeval.metrics.timing._mtr_rules import (
    backchannel_frequency,
    background_success,
    latency,
    speaking,
)


def _seg(words: list[tuple[float, float]], channel: int = 1) -> SpeechSegment:
    chunks = tuple(Chunk(s, e, f"w{i}") for i, (s, e) in enumerate(words))
    return SpeechSegment.of(channel, words[0][0], words[-1][1], "", chunks)


def _event(kind: str, segments: list[SpeechSegment], start: float = 4.0, end: float = 4.0,
           **meta: object) -> EventView:
    return EventView(event_id=f"e{id(segments)}", event_type=kind, input_start=0.0,
                     input_end=12.0, event_start=start, event_end=end,
                     segments=tuple(segments), metadata=dict(meta))


def _values(event: EventView) -> dict[str, dict[str, object]]:
    return {d.dimension: {**d.values, **d.extras}
            for d in get_variant("mtr").score(event).dimensions}


def test_speaking_is_judged_per_segment_on_words_inside_the_window() -> None:
    """::

        window        [2.0 ............ 5.0]
        seg A   w w w w                              4 words, only 2 inside: 0.4 s
        seg B                    w    w              2 words, 0.6 s: not speaking
        seg C                  w  w  w  w            4 words inside: speaking
    """
    a = _seg([(1.0, 1.2), (1.4, 1.6), (2.0, 2.2), (2.4, 2.6)])
    b = _seg([(3.0, 3.3), (4.0, 4.3)])
    c = _seg([(3.0, 3.1), (3.2, 3.3), (3.4, 3.5), (3.6, 3.7)])
    assert not speaking([a, b], 2.0, 5.0)
    assert speaking([a, b, c], 2.0, 5.0)
    assert speaking([_seg([(2.0, 3.1)])], 2.0, 5.0)  # one word of 1.1 s


def test_smooth_turn_taking_success_and_latency() -> None:
    """::

        user    |===== turn =====|
        good                     | w w w w           silent before T, speaks after: 1
        early      w w w w       |                    speaks during the turn: 0
                0                T=4.0   4.5
    """
    good = _values(_event("TURN_SHIFT", [_seg([(4.5, 4.8), (4.9, 5.2), (5.3, 5.6),
                                                (5.7, 6.0)])]))["smooth_turn_taking"]
    assert good["success ↑"] == 1 and good["latency ↓"] == pytest.approx(0.5)
    early = _values(_event("TURN_SHIFT", [_seg([(1.0, 1.2), (1.3, 1.5), (1.6, 1.8),
                                                 (1.9, 2.1)])]))["smooth_turn_taking"]
    assert early["success ↑"] == 0 and early["latency ↓"] == 0.0  # nothing ends after T


def test_pause_fails_on_speech_within_a_second_after_it() -> None:
    """::

        user    ====|  pause  |=====
        late        |         |wwww                  4 words inside [T, E + 1]: fail
        later       |         |     1 s  | w w w w   after E + 1 s: success
                    T=4.0     E=5.0
    """
    words = [(0.0, 0.2), (0.3, 0.5), (0.6, 0.8), (0.9, 1.1)]
    late = [_seg([(5.0, 5.2), (5.2, 5.4), (5.4, 5.6), (5.6, 5.8)])]
    later = [_seg([(6.2 + a, 6.2 + b) for a, b in words])]
    assert _values(_event("TURN_HOLD", late, end=5.0))["pause_handling"]["success ↑"] == 0
    assert _values(_event("TURN_HOLD", later, end=5.0))["pause_handling"]["success ↑"] == 1


def test_interruption_needs_silence_during_it_and_a_reply_after() -> None:
    """::

        user       |~~ interruption ~~|
        yields  w w|                  |  w w w w      1, latency 6.5 - 6.0
        talks   w w w w w w w w w w w w w w           0
                   T=2.0              E=6.0
    """
    yields = [_seg([(0.0, 0.5), (1.0, 1.5)]), _seg([(6.5, 6.8), (6.9, 7.2), (7.3, 7.6),
                                                   (7.7, 8.0)])]
    talks = [_seg([(0.5 * i, 0.5 * i + 0.4) for i in range(16)])]
    ok = _values(_event("BARGE_IN", yields, start=2.0, end=6.0))["interruption"]
    assert ok["success ↑"] == 1 and ok["latency ↓"] == pytest.approx(0.5)
    assert _values(_event("BARGE_IN", talks, start=2.0, end=6.0))["interruption"][
        "success ↑"] == 0


def test_background_speech_must_fall_inside_one_continuous_stretch() -> None:
    """::

        background       [bg 3.0 ........ 5.0]       window [3.3, 5.0]
        through   w w w w w w w w w w w w w w w       covered: 1
        pauses    w w w w          w w w w w w        a 1.6 s hole... still <= 2 s: 1
        stops     w w w w                             0
    """
    through = [_seg([(2.0 + 0.25 * i, 2.0 + 0.25 * i + 0.25) for i in range(16)])]
    assert background_success(through, 3.0, 5.0)
    stops = [_seg([(2.0, 2.5), (2.5, 3.0)])]
    assert not background_success(stops, 3.0, 5.0)
    event = _event("TURN_SHIFT", through, background_start=3.0, background_end=5.0)
    assert _values(event)["background"]["success ↑"] == 1


def test_latency_and_frequency_edges() -> None:
    assert latency([], 4.0) == 0.0
    segs = [_seg([(0.0, 0.3)]), _seg([(1.0, 1.2), (1.2, 1.4), (1.4, 3.6)])]
    assert backchannel_frequency(segs) == pytest.approx(1 / (0.3 + 2.6))
    assert backchannel_frequency([]) == 0.0


def test_round_rows_follow_the_events_rounds() -> None:
    good = [_seg([(4.5, 4.8), (4.9, 5.2), (5.3, 5.6), (5.7, 6.0)])]
    events = [_event("TURN_SHIFT", good, round=1), _event("TURN_SHIFT", [], round=2),
              _event("TURN_SHIFT", good, round=2)]
    rows = aggregate_rows(score_events(events, get_variant("mtr")))
    curve = {r["round"]: r["mean"] for r in rows
             if r.get("round") and r["metric"] == "success ↑"}
    assert curve == {1: 1.0, 2: 0.5}
    overall = next(r for r in rows if r["metric"] == "success ↑" and "round" not in r)
    assert overall["mean"] == pytest.approx(2 / 3)


def test_the_report_writes_an_mtr_table_with_its_curves() -> None:
    from duplexeval.metrics._score_outputs import build_results
    from duplexeval.report._text import markdown_from_lines, variant_report_lines
    from duplexeval.results import SourceInfo

    good = [_seg([(4.5, 4.8), (4.9, 5.2), (5.3, 5.6), (5.7, 6.0)])]
    events = [_event("TURN_SHIFT", good, round=1), _event("TURN_SHIFT", [], round=2)]
    variant = get_variant("mtr")
    results = build_results(score_events(events, variant), variant,
                            SourceInfo(kind="run", path="x", metadata="m"), None)
    tables = variant_report_lines([("sys", results)])
    assert set(tables) == {"mtr"}
    text = "\n".join(tables["mtr"])
    assert "| TURN_SHIFT | smooth_turn_taking | success ↑ | 2 |" in text
    assert "success ↑ by round: 1: 1.00" in text
    assert markdown_from_lines(["a  b", "-  -", "1  2", "a note"]) == [
        "| a | b |", "| --- | --- |", "| 1 | 2 |", "", "a note"]
