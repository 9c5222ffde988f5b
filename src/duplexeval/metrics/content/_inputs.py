"""What the content metrics read for one TURN_SHIFT event, built from the analysed transcript,
the dataset's reference alignment and (for the generated history) the context audio.

Two modes (``--content-mode``):

``default``
    * user utterance: the user channel's words in the output wav (the user turn that ends at
      the event; the user is muted after it);
    * response: the system's words inside the event window, i.e. those ending after the user's
      turn end ``T`` (what it said while the user was still talking is not its response)::

          user    ====== turn ======|                         (muted)
          system        mm-hm       |  ~~~~~~~ response ~~~~~~~~~~~|  window end
                                    T                               (truncated if still
                                                                     speaking here)
    * QA reference: the *whole* reference response turn (every word of the system channel's
      TURN starting at the reference response onset, pauses included);
    * consistency history: the reference utterances in ``[context_start, input_start)``, the
      context the system actually heard (empty under Single, which has no context), or with
      ``--history generated`` what was said in the context audio of the run, transcribed:
      under Multi (gen) the system's own earlier words, not the human's.
``official``
    The released code's inputs, for comparison: user = every user-channel segment of the output
    wav, response = every system-channel segment of the whole window (including speech during
    the user's turn and, under teacher forcing, the reference system's own pre-event audio), QA
    reference = the reference words from the onset up to the first pause, history = every
    reference word before the event start from time 0, one line per pause, space-joined.

Japanese words are joined without spaces except in the official mode (see :mod:`.text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from duplexeval.data._dialogue import Dialogue
from duplexeval.metrics._base import EventView
from duplexeval.metrics.content._items import item_fields
from duplexeval.metrics.content._offline import TRUNCATION_MARGIN
from duplexeval.metrics.content._rounds import RoundFinder
from duplexeval.metrics.content._text import (
    Utterance,
    channel_text,
    format_history,
    official_history,
    official_reference_answer,
    reference_answer,
    reference_history,
    words_after,
)

__all__ = ["CONTENT_EVENT_TYPES", "ContentInput", "ContentMode", "ContentOptions",
           "HistorySource", "build_input"]

CONTENT_EVENT_TYPES = ("TURN_SHIFT",)
"""The events the content metrics judge (as in M3's registry)."""

USER_CHANNEL, SYSTEM_CHANNEL = 0, 1
"""Channels of an output wav: the user input as fed, the system output."""


class ContentMode(StrEnum):
    """Whose inputs: ours (``default``) or the released M3 code's (``official``)."""

    DEFAULT = "default"
    OFFICIAL = "official"


class HistorySource(StrEnum):
    """The consistency context: the human reference (the paper's) or the run's own audio."""

    REFERENCE = "reference"
    GENERATED = "generated"


@dataclass(frozen=True)
class ContentOptions:
    """How content inputs are built (recorded in the results)."""

    mode: ContentMode = ContentMode.DEFAULT
    history: HistorySource = HistorySource.REFERENCE

    def settings(self) -> dict[str, str]:
        return {"mode": self.mode.value, "history": self.history.value}


@dataclass(frozen=True)
class ContentInput:
    """One event's texts and the offline facts about its response."""

    event_id: str
    sample_id: str
    language: str
    domain: str
    user: str
    response: str
    response_words: int
    truncated: int | None
    """1 when still speaking at the window end, 0 when not, ``None`` for a silent response."""
    reference: str
    """The QA reference answer ('' outside the task domain or when the dataset has none)."""
    history: str
    """The consistency context, one ``Role: text`` line per utterance."""
    round: int | None = None
    """The event's user round in its dialogue, from 1 (:mod:`.rounds`); ``None`` unknown."""
    event_type: str = "TURN_SHIFT"
    items: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Annotated dimensions and their prompt fields (:mod:`.items`)."""


def _truncated(event: EventView) -> int | None:
    t = event.event_start - event.input_start
    ends = [s.end for s in event.segments if s.channel == SYSTEM_CHANNEL and s.end > t]
    if not ends:
        return None
    return int(max(ends) >= event.input_end - event.input_start - TRUNCATION_MARGIN)


def _meta_channel(event: EventView, key: str, default: int) -> int:
    value = event.metadata.get(key)
    return int(value) if value is not None else default


def build_input(event: EventView, dialogue: Dialogue | None, options: ContentOptions,
                generated: Mapping[str, Sequence[Utterance]] | None = None,
                rounds: RoundFinder | None = None) -> ContentInput:
    """The content input of one TURN_SHIFT event.  ``dialogue`` (the reference) may be
    ``None`` when the dataset is not available: then the reference texts are empty.
    ``generated`` maps event ids to their transcribed context (``--history generated``)."""
    lang = event.language
    user_ch = _meta_channel(event, "user_channel", 1)
    system_ch = _meta_channel(event, "system_channel", 1 - user_ch)
    t = event.event_start - event.input_start
    words_text, n_words = words_after(event.segments, SYSTEM_CHANNEL, t, lang)
    reference, history = "", format_history([])
    if options.mode is ContentMode.OFFICIAL:
        user = channel_text(event.segments, USER_CHANNEL)
        response = channel_text(event.segments, SYSTEM_CHANNEL)
        if dialogue is not None:
            reference = official_reference_answer(dialogue, system_ch, event.event_end)
            history = format_history(official_history(dialogue, user_ch, event.event_start))
    else:
        user, _ = words_after(event.segments, USER_CHANNEL, float("-inf"), lang)
        response = words_text
        if dialogue is not None:
            reference = reference_answer(dialogue, system_ch, event.event_end, lang)
        if options.history is HistorySource.GENERATED:
            history = format_history(list((generated or {}).get(event.event_id, ())))
        elif dialogue is not None and event.metadata.get("use_context"):
            start = float(event.metadata.get("context_start", event.input_start))
            history = format_history(reference_history(dialogue, user_ch, start,
                                                       event.input_start, lang))
    if event.domain != "task":
        reference = ""
    return ContentInput(event_id=event.event_id, sample_id=event.sample_id, language=lang,
                        domain=event.domain, user=user, response=response,
                        response_words=n_words, truncated=_truncated(event),
                        reference=reference, history=history,
                        round=(rounds or RoundFinder()).round_of(dialogue, user_ch,
                                                                 event.event_start),
                        event_type=event.event_type, items=item_fields(event, dialogue))
