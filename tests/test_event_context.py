"""What a dialogue's annotations add to its events before scoring: the round (annotated
``mtr`` rounds first, else the annotator's), the round's annotation, and a FLEXI item's record
on its anchor event; and how the ``mtr`` variant reads them."""

from __future__ import annotations

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.data import Dialogue
from duplexeval.events import Event, EventKind
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._score_run import with_rounds
from duplexeval.metrics.content._rounds import RoundFinder

MTR = {"version": 1, "group": "feature", "label": "background", "user_channel": 0,
       "rounds": [{"round": 1, "features": ["smooth"], "user_span": [0.0, 2.0],
                   "window": [0.0, 7.0], "reply_span": [2.5, 5.0]},
                  {"round": 2, "features": ["background"], "user_span": [6.0, 7.0],
                   "window": [6.0, 12.0], "reply_span": [7.5, 11.0],
                   "background_span": [8.0, 10.0], "background_text": "other voice"}]}
FLEXI = {"version": 1, "scenario": "user_backchannel", "user_channel": 0,
         "system_channel": 1, "anchor": {"event": "BC", "channel": 0, "time": [3.0, 3.4]},
         "backchannel": [3.0, 3.4], "backchannel_text": "mm-hm"}


def _event(kind: str, start: float, end: float, segments: tuple[SpeechSegment, ...] = (),
           input_start: float = 0.0) -> EventView:
    return EventView(event_id=f"{kind}{start}", event_type=kind, input_start=input_start,
                     input_end=input_start + 12.0, event_start=start, event_end=end,
                     segments=segments, sample_id="d1", language="en", domain="chat",
                     metadata={"user_channel": 0, "system_channel": 1})


def test_annotated_rounds_number_events_and_bring_their_annotation() -> None:
    """The annotated rounds say round 2 starts at 6.0 (the annotator would see other turns)::

        user   |==r1==|              |r2|
        events        ^SHIFT 2.0         ^SHIFT 7.0
    """
    dialogue = Dialogue(id="d1", events=(Event(EventKind.TURN, 0, 0.0, 2.0),),
                        extra={"mtr": MTR})
    events = with_rounds([_event("TURN_SHIFT", 2.0, 2.5), _event("TURN_SHIFT", 7.0, 7.5)],
                         {"d1": dialogue}, RoundFinder())
    assert [e.metadata["round"] for e in events] == [1, 2]
    assert events[1].metadata["mtr_round"]["background_text"] == "other voice"


def test_a_flexi_record_goes_to_its_anchor_event_only() -> None:
    dialogue = Dialogue(id="d1", events=(Event(EventKind.TURN, 0, 0.0, 2.0),),
                        extra={"flexi": FLEXI})
    anchor, other = with_rounds([_event("BC", 3.0, 3.4), _event("TURN_SHIFT", 2.0, 2.5)],
                                {"d1": dialogue}, RoundFinder())
    assert anchor.metadata["flexi"]["backchannel_text"] == "mm-hm"
    assert "flexi" not in other.metadata


def test_mtr_reads_the_round_window_and_background() -> None:
    """Round 2 of the annotation, sample from 6.0 (wav time = dialogue time - 6)::

        background          [8.0 ... 10.0]     -> wav [2.0, 4.0], window [2.3, 4.0]
        system   w w w w w w w w w w w w       continuous words 7.5-11.0 -> success
        window   [6.0 ................. 12.0]  ends at 12.0: wav 6.0
    """
    words = tuple(Chunk(1.5 + 0.25 * i, 1.75 + 0.25 * i, "w") for i in range(14))
    segment = SpeechSegment.of(1, words[0].start, words[-1].end, "", words)
    event = _event("TURN_SHIFT", 7.0, 7.5, (segment,), input_start=6.0)
    dialogue = Dialogue(id="d1", events=(), extra={"mtr": MTR})
    (event,) = with_rounds([event], {"d1": dialogue}, RoundFinder())
    dims = {d.dimension: d.values for d in get_variant("mtr").score(event).dimensions}
    assert dims["background"]["success ↑"] == 1
    assert dims["smooth_turn_taking"]["success ↑"] == 1
