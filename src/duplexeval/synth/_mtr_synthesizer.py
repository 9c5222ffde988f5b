"""Synthesizing MTR-DuplexBench dialogues: the record's ``mtr`` round annotations.

:class:`MtrSynthesizer` is the ordinary :class:`~duplexeval.synth._build.Synthesizer` (same
placement, same seed, same audio) that also records where each spec turn and each of its
backchannels was placed, and turns that into the record's ``mtr`` field for specs with
``mtr`` (format: :mod:`duplexeval.data._mtr_record`; layout: :mod:`duplexeval.synth._mtr_spec`).  It
keeps every prepared utterance (TTS output, trimmed and resampled) for the rest of the build,
keyed by language, text, voice and speed: the MTR suite voices the same conversations under
several features, so each text is synthesized once.  The engines are deterministic in the
text (piper seeds its noise from it), so the cache does not change the audio.

Times are seconds from the start of the dialogue, rounded to the millisecond like the words.
The spans, per round (user on channel 0, system on channel 1)::

    system  |==opener====..|(overlap)       |=====reply 1=====|
    user               |==user 1==..pause..==|  |bc|      (background, quiet)
                       ^ interruption_span (= user_span when the user barges in)
                       |----------- window 1: to the end of user 2 --------------...
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from duplexeval.data._dialogue import AudioInfo, Dialogue
from duplexeval.data._mtr_record import MTR_FIELD, MTR_VERSION
from duplexeval.errors import DuplexevalError
from duplexeval.synth._build import SynthesizedDialogue, Synthesizer, SynthSettings
from duplexeval.synth._spec import DialogueSpec, Turn, mtr_layout

if TYPE_CHECKING:
    from duplexeval.speech._tts import TimedWord
    from duplexeval.synth._build import _Piece

__all__ = ["MtrSynthesized", "MtrSynthesizer", "mtr_record", "synthesizer_for"]

Span2 = tuple[float, float]


@dataclass(frozen=True)
class PlacedUtterance:
    """A spec turn as placed: its words' spans and its listener's backchannels' spans."""

    words: tuple[Span2, ...]
    backchannels: tuple[Span2, ...]

    @property
    def span(self) -> Span2:
        """From the first word's start to the last word's end."""
        return self.words[0][0], self.words[-1][1]


@dataclass(frozen=True)
class MtrSynthesized(SynthesizedDialogue):
    """A built dialogue with its ``mtr`` record (``None`` for specs without ``mtr``)."""

    mtr: Mapping[str, Any] | None = None

    def dialogue(self, audio: AudioInfo | None = None) -> Dialogue:
        """The dialogue, with the ``mtr`` record among its extra fields."""
        base = super().dialogue(audio)
        if self.mtr is None:
            return base
        return dataclasses.replace(base, extra={**base.extra, MTR_FIELD: dict(self.mtr)})


class MtrSynthesizer(Synthesizer):
    """The synthesizer, recording placements for the ``mtr`` record and reusing utterances."""

    def __init__(self, settings: SynthSettings | None = None,
                 cache_utterances: bool = True) -> None:
        super().__init__(settings or SynthSettings(), cache_utterances)
        self._pieces: dict[tuple[str, str, str, float], _Piece] = {}
        self._placed: list[PlacedUtterance] = []

    def _prepare_voice(self, spec: DialogueSpec, text: str, voice: str,
                       speed: float = 1.0) -> _Piece:
        key = (spec.language, text, voice, speed)
        if key not in self._pieces:
            self._pieces[key] = super()._prepare_voice(spec, text, voice, speed)
        piece = self._pieces[key]
        return dataclasses.replace(piece, words=list(piece.words))  # callers reassign fields

    def forget_reused(self) -> None:
        """Drop the kept utterances (the next dialogues share no text with the last)."""
        self._pieces.clear()

    def _backchannels(self, spec: DialogueSpec, turn: Turn, piece: _Piece, start: float,
                      channel: int, busy: list[float], rng: np.random.Generator,
                      ) -> list[tuple[int, float, np.ndarray, list[TimedWord]]]:
        """The base placement, recording the turn (called once per turn, in order)."""
        out = super()._backchannels(spec, turn, piece, start, channel, busy, rng)
        words = tuple((round(start + w.start, 3), round(start + w.end, 3)) for w in piece.words)
        bcs = tuple((round(at + ws[0].start, 3), round(at + ws[-1].end, 3))
                    for _, at, _, ws in out if ws)
        self._placed.append(PlacedUtterance(words, bcs))
        return out

    def build(self, spec: DialogueSpec) -> MtrSynthesized:
        """Synthesize one dialogue; with ``mtr``, its round annotations too."""
        self._placed = []
        built = super().build(spec)
        fields = {f.name: getattr(built, f.name) for f in dataclasses.fields(built)}
        record = None
        if spec.mtr is not None:
            record = mtr_record(spec, self._placed, built.background,
                                len(built.audio) / built.sample_rate)
        return MtrSynthesized(**fields, mtr=record)


def synthesizer_for(specs: Sequence[DialogueSpec], settings: SynthSettings) -> Synthesizer:
    """:class:`MtrSynthesizer` when a spec has ``mtr``, else the plain synthesizer."""
    if any(s.mtr is not None for s in specs):
        return MtrSynthesizer(settings)
    return Synthesizer(settings)


def _longest_gap(words: Sequence[Span2]) -> Span2:
    """The longest silence between two consecutive words (the spec's pause: engine pauses
    are capped at 0.4 s, a spec pause lasts its ``seconds``)."""
    gaps = [(b[0] - a[1], (a[1], b[0])) for a, b in itertools.pairwise(words)]
    return max(gaps)[1]


def _item_fields(spec: DialogueSpec, k: int, user: Turn) -> dict[str, Any]:
    assert spec.mtr is not None
    declared = spec.mtr.rounds[k]
    if spec.mtr.group == "instruction_following":
        return {"item": declared.item, "question": user.text, "answer": user.answer}
    if spec.mtr.group == "safety":
        return {"item": declared.item, "category": declared.category, "request": user.text}
    return {key: value for key, value in (("item", declared.item),
                                           ("category", declared.category)) if value}


def mtr_record(spec: DialogueSpec, placed: Sequence[PlacedUtterance],
               background: Sequence[Mapping[str, Any]], duration: float) -> dict[str, Any]:
    """The record's ``mtr`` field (:mod:`duplexeval.data._mtr_record`) from the placed turns (in
    spec order), the background placements (in spec order) and the audio's length (s)."""
    assert spec.mtr is not None
    layout = mtr_layout(spec)
    users = [placed[u].span for _, u, _ in layout]
    rounds = []
    for k, (p, u, r) in enumerate(layout):
        features = spec.mtr.rounds[k].features
        end = users[k + 1][1] if k + 1 < len(users) else round(duration, 3)
        row: dict[str, Any] = {"round": k + 1, "features": list(features),
                               "user_span": list(users[k]), "window": [users[k][0], end],
                               "reply_span": list(placed[r].span)}
        if "pause" in features:
            row["pause_span"] = list(_longest_gap(placed[u].words))
        if "interruption" in features and p is not None:
            row["interruption_span"] = list(users[k])
            row["overlap_span"] = [users[k][0], max(users[k][0], placed[p].span[1])]
        for b, where in zip(spec.background, background, strict=True):
            if b.at_turn == r and "background" in features:
                row.update(background_span=[where["start"], where["end"]],
                           background_text=where["text"], background_gain_db=where["gain_db"])
        if "backchannel" in features:
            if not placed[r].backchannels:
                raise DuplexevalError(f"{spec.id}: round {k + 1}: no backchannel fitted in "
                                      "the reply; move it earlier in the spec")
            row["backchannel_spans"] = [list(s) for s in placed[r].backchannels]
        row.update(_item_fields(spec, k, spec.turns[u]))
        rounds.append(row)
    return {"version": MTR_VERSION, "group": spec.mtr.group, "label": spec.mtr.label,
            "user_channel": 0, "rounds": rounds}
