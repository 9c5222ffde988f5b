"""``data segment``: cut every dialogue of an existing dataset into ~120 s segments.

The same cuts as the recipes make (:mod:`duplexeval.data._segmentation`): the IPUs are the
dataset's TURN and BC events (an M3 TURN or BC is one IPU) and its words' IPUs, so a cut never
falls inside one.  Each segment keeps the events lying inside it (:func:`cut_events`: floor
events reaching across a cut are dropped, which is what annotating the segment alone gives), its
words, and its slice of the audio, all shifted to the segment's time; channels are unchanged.
Segment ids are ``{id}.{start}-{end}``; a dialogue shorter than the target keeps its id.  The
record keeps its other fields and adds ``source`` (``id``, ``start``, ``end`` in the source
dialogue, seconds; an existing ``source`` is kept and its times offset).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from duplexeval._audio import read_audio, write_audio
from duplexeval.data._dialogue import AudioInfo, Dataset, Dialogue
from duplexeval.data._m3 import audio_path, write_dataset
from duplexeval.data._segmentation import cut_events, cut_words, plan_segments, segment_id
from duplexeval.events import AnnotationRules, EventKind, ipus_from_spans
from duplexeval.timeline import Span

__all__ = ["segment_dataset", "segment_dialogue"]


def _ipus(dialogue: Dialogue, rules: AnnotationRules) -> list[Span]:
    spans = [e.span for e in dialogue.events if e.kind in (EventKind.TURN, EventKind.BC)]
    for ch in (0, 1):
        words = [w.span for w in dialogue.words or () if w.channel == ch]
        spans += [ipu.span for ipu in ipus_from_spans(ch, words, rules)]
    return spans


def _source(dialogue: Dialogue, seg: Span) -> dict[str, object]:
    old = dialogue.extra.get("source")
    base = dict(old) if isinstance(old, Mapping) else {"id": dialogue.id}
    offset = float(base.get("start", 0.0)) if isinstance(base.get("start"), int | float) else 0.0
    base.update(start=round(offset + seg.start, 6), end=round(offset + seg.end, 6))
    return base


def segment_dialogue(dialogue: Dialogue, root: Path, target: float = 120.0,
                     min_last: float = 0.0, rules: AnnotationRules = AnnotationRules()
                     ) -> list[Dialogue]:
    """The segments of one dialogue, their audio written to ``root/audio/`` (PCM_16)."""
    segments = plan_segments(_ipus(dialogue, rules), dialogue.duration, target,
                             min_last=min_last)
    audio = rate = None
    if dialogue.audio is not None:
        audio, rate = read_audio(dialogue.audio.path)
    out = []
    for seg in segments:
        new_id = dialogue.id if len(segments) == 1 else segment_id(dialogue.id, seg)
        info = None
        if audio is not None and rate is not None:
            a, b = round(seg.start * rate), round(seg.end * rate)
            target_path = audio_path(root, new_id)
            write_audio(target_path, audio[a:b], rate, subtype="PCM_16")
            info = AudioInfo(target_path, rate, b - a, audio.shape[1])
        words = None if dialogue.words is None else tuple(cut_words(dialogue.words, seg))
        extra = {**dialogue.extra, "source": _source(dialogue, seg)}
        out.append(Dialogue(id=new_id, events=tuple(cut_events(dialogue.events, seg)),
                            channel_order=dialogue.channel_order, words=words, audio=info,
                            language=dialogue.language, domain=dialogue.domain, extra=extra))
    return out


def segment_dataset(dataset: Dataset, root: Path, target: float = 120.0,
                    min_last: float = 0.0) -> list[Dialogue]:
    """Segment every dialogue of ``dataset`` into the dataset folder ``root`` (same split)."""
    dialogues: list[Dialogue] = []
    for dialogue in dataset:
        dialogues += segment_dialogue(dialogue, root, target, min_last)
    meta = {"name": dataset.name, "language": dataset.language, "domain": dataset.domain,
            "segment_s": target}
    write_dataset(root, dataset.split, dialogues, {k: v for k, v in meta.items() if v})
    return dialogues
