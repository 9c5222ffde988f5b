"""The dialogue data model: words, audio reference, events, and a dataset of dialogues.

Conventions: times in seconds from the start of the dialogue audio; channels are the stereo
channels of that audio (0 = left, 1 = right), one speaker per channel.  Which channel is the
"user" is decided per evaluation event (see :mod:`duplexeval.plan._samples`), not here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from duplexeval.events import Event, EventKind
from duplexeval.timeline import Span

__all__ = ["AudioInfo", "Dataset", "Dialogue", "Word"]


@dataclass(frozen=True, slots=True)
class Word:
    """One aligned word: ``text`` spoken on ``channel`` over ``[start, end]`` seconds."""

    channel: int
    start: float
    end: float
    text: str

    @property
    def span(self) -> Span:
        """The word's time span."""
        return Span(self.start, self.end)


@dataclass(frozen=True, slots=True)
class AudioInfo:
    """A stereo audio file: path, sample rate (Hz), length in frames, channel count."""

    path: Path
    sample_rate: int
    num_frames: int
    channels: int

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.num_frames / self.sample_rate


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Dialogue:
    """One two-party dialogue.

    ``events`` keep the order of the source file (channel lists in ``channel_order``, each in
    list order): the official sample ids count events in that order.  ``words`` keep the order
    of the alignment file; use :meth:`words_on` for a channel's words sorted by time.
    """

    id: str
    events: tuple[Event, ...]
    channel_order: tuple[int, ...] = (0, 1)
    words: tuple[Word, ...] | None = None
    audio: AudioInfo | None = None
    language: str | None = None
    domain: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))
    """Other top-level fields of the jsonl record, written back unchanged."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", _frozen(self.extra))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with ``extra`` as a plain dict (a mapping proxy does not pickle), so that a
        dialogue can travel to a worker process (the Dask executor)."""
        values = tuple(dict(self.extra) if f.name == "extra" else getattr(self, f.name)
                       for f in fields(self))
        return (type(self), values)

    def events_of(self, kind: EventKind, channel: int | None = None) -> list[Event]:
        """Events of one kind (optionally on one channel), in file order."""
        return [
            e for e in self.events if e.kind == kind and (channel is None or e.channel == channel)
        ]

    def turns(self, channel: int) -> list[Span]:
        """TURN spans of a channel sorted by (start, end); TURNs with start > end are ignored."""
        spans = [
            Span(e.start, e.end)
            for e in self.events
            if e.kind == EventKind.TURN and e.channel == channel and e.start <= e.end
        ]
        return sorted(spans)

    def words_on(self, channel: int) -> list[Word]:
        """A channel's words sorted by start time."""
        return sorted(
            (w for w in (self.words or ()) if w.channel == channel), key=lambda w: (w.start, w.end)
        )

    @property
    def annotation_end(self) -> float:
        """The latest time any event or word reaches (seconds)."""
        times = [max(e.start, e.end) for e in self.events]
        times += [w.end for w in self.words or ()]
        return max(times, default=0.0)

    @property
    def duration(self) -> float:
        """Audio duration when the audio is known, else the end of the annotations."""
        if self.audio is not None:
            return self.audio.duration
        return self.annotation_end

    def events_by_channel_json(self) -> dict[str, list[dict[str, object]]]:
        """The M3 ``events`` object: ``{"0": [...], "1": [...]}`` in ``channel_order``."""
        channels = list(self.channel_order)
        for event in self.events:
            if event.channel not in channels:
                channels.append(event.channel)
        out: dict[str, list[dict[str, object]]] = {str(c): [] for c in channels}
        for event in self.events:
            out[str(event.channel)].append(event.to_json())
        return out

    def shifted(self, dt: float) -> Dialogue:
        """The same dialogue with every event and word moved by ``dt`` seconds (no audio)."""
        words = None
        if self.words is not None:
            words = tuple(Word(w.channel, w.start + dt, w.end + dt, w.text) for w in self.words)
        return replace(
            self, events=tuple(e.shift(dt) for e in self.events), words=words, audio=None
        )


@dataclass(frozen=True)
class Dataset:
    """One split of a dataset folder in the M3 layout."""

    root: Path
    split: str
    dialogues: tuple[Dialogue, ...]
    name: str = ""
    language: str | None = None
    domain: str | None = None
    user_channels: tuple[int, ...] = (0, 1)
    """The channels that play the user in its evaluation plans, unless a plan names others:
    ``dataset.json``'s ``user_channels`` (every suite writes its own: QA suites ask from one
    channel), else both channels, as in M3's chat sets."""

    def __iter__(self) -> Iterator[Dialogue]:
        return iter(self.dialogues)

    def __len__(self) -> int:
        return len(self.dialogues)

    def get(self, dialogue_id: str) -> Dialogue:
        """The dialogue with this id (KeyError if absent)."""
        for dialogue in self.dialogues:
            if dialogue.id == dialogue_id:
                return dialogue
        raise KeyError(dialogue_id)

    @property
    def has_audio(self) -> bool:
        """True when every dialogue has its audio file."""
        return all(d.audio is not None for d in self.dialogues)
