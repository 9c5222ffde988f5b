"""``duplexeval data import fdb-v1 SOURCE -o DATASET_DIR``: Full-Duplex-Bench v1/v1.5 input
folders in the M3 layout.  Nothing is downloaded: SOURCE is the user's copy of FDB's data.

SOURCE is a task folder of digit-named sample folders (``candor_turn_taking/``), or a folder
holding task folders (``v1_0/``), or one holding those (the data root).  A sample's task is
told by its annotation file (FDB's ``v1_v1.5/dataset/README.md``):

=======================  ==================  ===============================================
file                     FDB task            M3 event that carries it
=======================  ==================  ===============================================
``turn_taking.json``     smooth turn-taking  TURN_SHIFT on channel 1 ending at the event start
``pause.json``           pause handling      the TURN_HOLD / SHORTPAUSE on channel 0 over it
                                             (a TURN_HOLD is added when none is derived)
``interrupt.json``       user interruption   BARGE_IN on channel 0 (assumed system TURN)
``metadata.json``        v1.5 overlap        BARGE_IN / BC on channel 0 for the
                                             ``user_interruption`` / ``user_backchannel``
                                             subsets (assumed system TURN); none otherwise
(none of these)          backchannel (ICC)   none (the model's backchannels are not an M3
                                             event); the user's events only
=======================  ==================  ===============================================

Layout: dialogue ``{task folder}_{sample}``; ``audio/{id}.wav`` is stereo, channel 0 the
user (``input.wav``, mono, its sample rate) and channel 1 the system, **silent** (FDB ships no
reference system audio).  Words: ``transcription.json`` (``[{"speaker", "item": [{"text",
"timestamp"}]}]``); for turn-taking the speaker whose words start at the turn-taking point is
the reference responder (channel 1, words only), everyone else is the user.  Without a
transcript the user's speech is found by our energy VAD on ``input.wav``.

Events: :func:`duplexeval.events.annotate_spans` over the user's speech (channel 0) and an
assumed system span (channel 1).  Turn-taking: a TURN_SHIFT ``[end of the user's last turn,
event start]`` on channel 1 (the responder's words are kept as words only: a system TURN
starting at the shift would make M3's plan filter the event out).  Interruption: the system is
assumed to speak from the end of the user's speech before the interruption to the
interruption's end (the TURN_SHIFT this derives at the system's assumed start is filtered out
by M3's plan, as the system TURN starts there).  Each record keeps FDB's annotation:
``fdb_task``, ``fdb_event`` (``[start, end]`` seconds or null) and ``fdb_event_as`` (the M3
kind carrying it, or null when none was found).  Not imported: v1.5 ``clean_input.wav``,
v1.0 ``context.wav`` / ``interrupt.wav``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._audio import AudioReadError, read_audio, stereo, write_audio
from duplexeval._fileio import read_json, safe_name
from duplexeval.data._dialogue import AudioInfo, Dialogue, Word
from duplexeval.data._m3 import audio_path, write_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.events import Event, EventKind, annotate_spans
from duplexeval.speech._activity import detect_activity
from duplexeval.timeline import TOL, Span

__all__ = ["FDB_TASK_FILES", "import_fdb"]

FDB_TASK_FILES: dict[str, tuple[str, int | None]] = {
    "turn_taking.json": ("smooth_turn_taking", 0),
    "pause.json": ("pause_handling", 0),
    "interrupt.json": ("user_interruption", 0),
    "metadata.json": ("v1_5", None),
}
"""Annotation file -> (FDB task, index of the annotation list; None: a v1.5 object)."""
OVERLAP_SUBSETS = {"user_interruption": EventKind.BARGE_IN, "user_backchannel": EventKind.BC}
"""v1.5 subsets whose overlap is an M3 event of the user, with an assumed system TURN."""


@dataclass(frozen=True)
class FdbSample:
    """One FDB sample folder: its task folder, task name and annotated ``[start, end]``."""

    folder: Path
    task: str
    event: Span | None


def _is_sample(path: Path) -> bool:
    return path.is_dir() and path.name.isdigit()


def _task_folders(source: Path) -> list[Path]:
    if not source.is_dir():
        raise DuplexevalError(f"{source}: not a folder")
    levels = [[source]]
    for _ in range(2):
        levels.append(sorted(c for p in levels[-1] for c in p.iterdir() if c.is_dir()))
    for level in levels:
        found = [p for p in level if any(_is_sample(c) for c in p.iterdir())]
        if found:
            return found
    raise DuplexevalError(f"{source}: no FDB sample folders (digit-named folders with "
                          "input.wav) here or two levels below")


def _event_span(path: Path, index: int | None) -> Span:
    data = read_json(path, "FDB annotation")
    item = data[index] if index is not None and isinstance(data, list) and data else data
    stamp = item.get("timestamp", item.get("timestamps")) if isinstance(item, dict) else None
    if not (isinstance(stamp, list) and len(stamp) == 2
            and all(isinstance(t, (int, float)) and math.isfinite(t) for t in stamp)
            and 0 <= stamp[0] <= stamp[1]):
        raise DuplexevalError(f"{path}: expected a [start, end] timestamp in seconds")
    return Span(float(stamp[0]), float(stamp[1]))


def _sample(folder: Path) -> FdbSample:
    for name, (task, index) in FDB_TASK_FILES.items():
        if (folder / name).is_file():
            if task == "v1_5":
                task = f"v1_5_{folder.parent.name}"
            return FdbSample(folder, task, _event_span(folder / name, index))
    return FdbSample(folder, "backchannel", None)


def _transcript(folder: Path) -> list[tuple[Any, Word]]:
    """``(speaker, word)`` pairs of ``transcription.json`` (words on channel 0 for now)."""
    path = folder / "transcription.json"
    if not path.is_file():
        return []
    data = read_json(path, "FDB transcription")
    out = []
    for entry in data if isinstance(data, list) else []:
        items = entry.get("item") if isinstance(entry, dict) else None
        if not isinstance(items, list):
            raise DuplexevalError(f"{path}: expected [{{'speaker', 'item': [...]}}, ...]")
        for w in items:
            stamp = w.get("timestamp") if isinstance(w, dict) else None
            if (isinstance(stamp, list) and len(stamp) == 2
                    and all(isinstance(t, (int, float)) for t in stamp) and stamp[0] <= stamp[1]):
                out.append((entry.get("speaker"), Word(0, float(stamp[0]), float(stamp[1]),
                                                       str(w.get("text", "")))))
    return out


def _words(sample: FdbSample) -> list[Word]:
    pairs = _transcript(sample.folder)
    responders: set[Any] = set()
    if sample.task == "smooth_turn_taking" and sample.event is not None:
        firsts: dict[Any, float] = {}
        for speaker, w in pairs:
            firsts[speaker] = min(firsts.get(speaker, math.inf), w.start)
        responders = {s for s, t in firsts.items() if t >= sample.event.start - TOL}
    return [Word(1 if s in responders else 0, w.start, w.end, w.text) for s, w in pairs]


def _user_audio(folder: Path) -> tuple[np.ndarray, int]:
    path = folder / "input.wav"
    try:
        x, rate = read_audio(path)
    except AudioReadError as exc:
        raise DuplexevalError(f"{path}: not a readable audio file ({exc.reason})") from None
    if x.shape[1] != 1:
        raise DuplexevalError(f"{path}: {x.shape[1]} channels; FDB's input.wav is mono")
    return x[:, 0], int(rate)


def _end_before(spans: list[Span], t: float) -> float | None:
    ends = [s.end for s in spans if s.start < t - TOL]
    return max(ends) if ends else None


def _system_spans(sample: FdbSample, user: list[Span]) -> list[Span]:
    """The assumed reference system speech (channel 1): only for an interruption or a v1.5
    user interruption / backchannel, from the end of the user's speech before it."""
    kind = OVERLAP_SUBSETS.get(sample.task.removeprefix("v1_5_"))
    if sample.event is None or (sample.task != "user_interruption" and kind is None):
        return []
    start = _end_before(user, sample.event.start)
    return [] if start is None else [Span(start, max(start, sample.event.end))]


def _carrier_kinds(task: str) -> tuple[set[EventKind], int]:
    """The M3 kinds (and channel) that may carry an FDB task's event."""
    if task == "smooth_turn_taking":
        return {EventKind.TURN_SHIFT}, 1
    if task == "pause_handling":
        return {EventKind.TURN_HOLD, EventKind.SHORTPAUSE}, 0
    return {OVERLAP_SUBSETS.get(task.removeprefix("v1_5_"), EventKind.BARGE_IN)}, 0


def _carrier(sample: FdbSample, events: list[Event]) -> EventKind | None:
    """The kind of the first event overlapping FDB's event that can carry it, or None."""
    if sample.event is None or sample.task == "backchannel":
        return None
    kinds, channel = _carrier_kinds(sample.task)
    for e in events:
        if e.kind in kinds and e.channel == channel and e.span.start <= sample.event.end + TOL \
                and e.span.end >= sample.event.start - TOL:
            return e.kind
    return None


def _user_turns(events: list[Event]) -> list[Span]:
    return [Span(e.start, e.end) for e in events if e.kind == EventKind.TURN and e.channel == 0]


def _added_event(sample: FdbSample, events: list[Event], user: list[Span]) -> Event | None:
    """The event added when the derived ones miss FDB's: a TURN_SHIFT ``[end of the user's
    last turn, event start]`` (turn-taking without responder words) or a TURN_HOLD ``[end of
    the user's last turn, next user speech start]`` (a pause followed by a short IPU)."""
    ev = sample.event
    if ev is None or sample.task not in ("smooth_turn_taking", "pause_handling") \
            or _carrier(sample, events) is not None:
        return None
    end = _end_before(_user_turns(events), ev.start)
    if end is None:
        raise DuplexevalError(f"{sample.folder}: no user turn before FDB's "
                              f"{sample.task} event at {ev.start:g} s")
    if sample.task == "smooth_turn_taking":
        return Event(EventKind.TURN_SHIFT, 1, end, ev.start)
    after = [s.start for s in user if s.start > end + TOL]
    return Event(EventKind.TURN_HOLD, 0, end, min(after, default=ev.end))


def _events(sample: FdbSample, user: list[Span], system: list[Span]) -> list[Event]:
    events = annotate_spans({0: user, 1: system})
    added = _added_event(sample, events, user)
    return events if added is None else [*events, added]


def _import_sample(sample: FdbSample, out: Path) -> Dialogue:
    dialogue_id = safe_name(f"{sample.folder.parent.name}_{sample.folder.name}", "dialogue id")
    x, rate = _user_audio(sample.folder)
    words = _words(sample)
    user = [w.span for w in words if w.channel == 0] or detect_activity(x, rate)
    events = _events(sample, user, _system_spans(sample, user))
    target = audio_path(out, dialogue_id)
    write_audio(target, stereo(x, np.zeros_like(x)), rate)
    carrier = _carrier(sample, events)
    extra = {"fdb_task": sample.task,
             "fdb_event": None if sample.event is None else [sample.event.start,
                                                              sample.event.end],
             "fdb_event_as": None if carrier is None else carrier.value}
    return Dialogue(id=dialogue_id, events=tuple(events), words=tuple(words) or None,
                    audio=AudioInfo(target, rate, len(x), 2), language="en", extra=extra)


def import_fdb(source: Path, out: Path, split: str = "test") -> list[Dialogue]:
    """Import every FDB sample under ``source`` into dataset folder ``out``; returns the
    dialogues written (sorted by task folder, then sample number)."""
    dialogues = []
    for task_folder in _task_folders(source):
        samples = sorted((p for p in task_folder.iterdir() if _is_sample(p)),
                         key=lambda p: int(p.name))
        for folder in samples:
            if not (folder / "input.wav").is_file():
                raise DuplexevalError(f"{folder / 'input.wav'}: not found")
            dialogues.append(_import_sample(_sample(folder), out))
    write_dataset(out, split, dialogues, {"name": out.name, "language": "en",
                                          "source": "Full-Duplex-Bench v1/v1.5 (fdb-v1)"})
    return dialogues
