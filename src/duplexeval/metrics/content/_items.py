"""Judged dimensions that a suite's annotations ask for on their own events: MTR's instruction
following and safety (the ``mtr_round`` of the event, :mod:`duplexeval.data._mtr_record`) and
FLEXI's judged scores (the ``flexi`` record on the item's anchor event,
:mod:`duplexeval.data._flexi_record`).

Times are output-wav seconds (``input_start`` = 0); ``T`` the event start, ``E`` its end.
Channel 1 is the system, channel 0 the user as fed.

* ``instruction`` (``mtr.instruction``, 0/1: a correct answer in that round): the round's
  question and reference answer, and the system's words after the user's question (after ``T``
  for a TURN_SHIFT, after the interruption ``E`` for a BARGE_IN round).
* ``safety`` (``mtr.safety``, 0/1: 1 = declined): the round's request and the same response.
* ``topic_shift`` (``flexi.topic_shift``, 0-5, FLEXI's TSS; user_interrupt, BARGE_IN anchor):
  context = the reference system turn that was interrupted (the dataset's words), the user's
  interrupting words (the user channel of the sample), the system's words after ``E``::

      system (forced)  ~~~~~~~~~~~~~~|                 reply
      user                  |== interruption ==|   ~~~~~~~~~~~~
                            T                  E   response: words after E

* ``emergency`` (``flexi.emergency``, 0-5, FLEXI's EDS; model_interrupt, TURN_SHIFT anchor):
  the user's words and every system word of the sample (cutting in early is the point).
* ``coherence`` (``flexi.coherence``, 0-5; user_backchannel, BC anchor): the system's words
  ending by the backchannel onset ``T``, the backchannel text, the words starting after ``T``.

Each returns the prompt fields; the judge, the cache and the records are those of
:mod:`.judged`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from duplexeval.data._dialogue import Dialogue
from duplexeval.metrics._base import EventView
from duplexeval.metrics.content._text import join_words, words_after

__all__ = ["ITEM_PROMPTS", "item_fields"]

ITEM_PROMPTS = {"instruction": "mtr.instruction", "safety": "mtr.safety",
                "topic_shift": "flexi.topic_shift", "emergency": "flexi.emergency",
                "coherence": "flexi.coherence"}
"""Annotated dimension -> prompt id."""

SYSTEM, USER = 1, 0


def _response_after(event: EventView) -> str:
    after = event.event_end if event.event_type == "BARGE_IN" else event.event_start
    return words_after(event.segments, SYSTEM, after - event.input_start, event.language)[0]


def _words_before(event: EventView, t: float) -> str:
    chunks = sorted((c for s in event.segments if s.channel == SYSTEM for c in s.chunks
                     if c.end <= t), key=lambda c: c.start)
    return join_words((c.text for c in chunks), event.language)


def _reference_words(dialogue: Dialogue | None, channel: int, span: Any, language: str) -> str:
    if dialogue is None or not isinstance(span, list) or len(span) != 2:
        return ""
    return join_words((w.text for w in dialogue.words_on(channel)
                       if span[0] - 1e-6 <= w.start <= span[1] + 1e-6), language)


def _mtr_fields(event: EventView) -> dict[str, dict[str, str]]:
    annotated = event.metadata.get("mtr_round")
    if not isinstance(annotated, Mapping):
        return {}
    response = _response_after(event)
    if "question" in annotated and "answer" in annotated:
        return {"instruction": {"question": str(annotated["question"]),
                                "reference": str(annotated["answer"]), "response": response}}
    if "request" in annotated:
        return {"safety": {"request": str(annotated["request"]), "response": response}}
    return {}


def _flexi_fields(event: EventView, dialogue: Dialogue | None) -> dict[str, dict[str, str]]:
    record = event.metadata.get("flexi")
    if not isinstance(record, Mapping):
        return {}
    lang = event.language
    user = words_after(event.segments, USER, float("-inf"), lang)[0]
    scenario = record.get("scenario")
    if scenario == "user_interrupt":
        system_ch = int(record.get("system_channel", 1))
        context = _reference_words(dialogue, system_ch, record.get("system_turn"), lang)
        return {"topic_shift": {"context": context or "(not available)",
                                "interruption": user, "response": _response_after(event)}}
    if scenario == "model_interrupt":
        every = words_after(event.segments, SYSTEM, float("-inf"), lang)[0]
        return {"emergency": {"user": user, "response": every}}
    if scenario == "user_backchannel":
        t = event.event_start - event.input_start
        return {"coherence": {"before": _words_before(event, t),
                              "backchannel": str(record.get("backchannel_text") or "mm-hm"),
                              "after": words_after(event.segments, SYSTEM, t, lang)[0]}}
    return {}


def item_fields(event: EventView, dialogue: Dialogue | None) -> dict[str, dict[str, str]]:
    """Annotated dimension -> its prompt fields, for the event (empty when none applies)."""
    return {**_mtr_fields(event), **_flexi_fields(event, dialogue)}
