"""The M3-DuplexBench dataset layout: read and write it losslessly, collecting every problem.

::

    DATASET_DIR/
      {split}.jsonl          one dialogue per line: {"id": ID, "events": {"0": [EVENT, ...],
                             "1": [...]}}, EVENT = {"event": KIND, "time": [start, end]}
      audio/{id}.wav         stereo, one speaker per channel, any sample rate
      txt_align/{id}.txt     one word per line: channel<TAB>start<TAB>end<TAB>word (seconds)
      dataset.json           optional (duplexeval): {"name", "language", "domain"}

Readers here never raise on bad content: they return what they could read and a list of
:class:`~duplexeval.errors.Problem` (file and 1-based line).  :mod:`duplexeval.data._validate`
adds the semantic checks and turns problems into one error.

A dialogue id names files (``audio/{id}.wav``, ``txt_align/{id}.txt``, the run's
``samples/{id}/``), so it must pass :func:`~duplexeval._fileio.safe_name` (no path separator,
no ``..``, no leading dot, no control character): the reader reports any other id as a problem
on its line, and the path builders and :func:`write_dataset` refuse it.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._audio import AudioReadError, audio_info
from duplexeval._fileio import (
    atomic_path,
    atomic_write_json,
    atomic_write_text,
    format_seconds,
    json_line,
    loads_json,
    name_problem,
    safe_name,
)
from duplexeval.data._dialogue import AudioInfo, Dialogue, Word
from duplexeval.errors import Problem
from duplexeval.events import Event, EventKind
from duplexeval.timeline import MAX_FILE_SECONDS, TOL, is_time

__all__ = [
    "ALIGN_DIR",
    "AUDIO_DIR",
    "METADATA_FILE",
    "RawRecord",
    "alignment_path",
    "audio_path",
    "available_splits",
    "format_alignment",
    "read_alignment",
    "read_audio_info",
    "read_dataset_metadata",
    "read_events_jsonl",
    "record_json",
    "write_alignment",
    "write_dataset",
]

AUDIO_DIR = "audio"
ALIGN_DIR = "txt_align"
METADATA_FILE = "dataset.json"
KNOWN_LANGUAGES = {"en", "ja", "zh", "ko", "de", "fr", "es"}


def audio_path(root: Path, dialogue_id: str) -> Path:
    """``root/audio/{id}.wav``; an id that is not a safe file name raises
    :class:`~duplexeval.errors.DuplexevalError`."""
    return root / AUDIO_DIR / f"{safe_name(dialogue_id, 'dialogue id')}.wav"


def alignment_path(root: Path, dialogue_id: str) -> Path:
    """``root/txt_align/{id}.txt``; an id that is not a safe file name raises
    :class:`~duplexeval.errors.DuplexevalError`."""
    return root / ALIGN_DIR / f"{safe_name(dialogue_id, 'dialogue id')}.txt"


def available_splits(root: Path) -> list[str]:
    """Split names with a ``{split}.jsonl`` in ``root``."""
    return sorted(p.stem for p in root.glob("*.jsonl"))


@dataclass(frozen=True)
class RawRecord:
    """One parsed jsonl line: the dialogue id, events in file order and the other fields."""

    line: int
    id: str
    events: tuple[Event, ...]
    channel_order: tuple[int, ...]
    extra: dict[str, Any]


def _parse_time(value: Any) -> float | None:
    """A time of the file (:func:`~duplexeval.timeline.is_time`) as a float, else ``None``."""
    return float(value) if is_time(value) else None


def _parse_record(obj: Any, path: Path, line: int, problems: list[Problem]) -> RawRecord | None:
    def bad(message: str) -> None:
        problems.append(Problem(path, line, message))

    if not isinstance(obj, dict):
        bad("expected a JSON object")
        return None
    raw_id = obj.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or str(raw_id) == "":
        bad('missing or invalid "id" (a non-empty string)')
        return None
    id_problem = name_problem(str(raw_id))
    if id_problem is not None:
        bad(f"dialogue id {str(raw_id)!r} cannot be used in a file name: {id_problem}")
        return None
    events_obj = obj.get("events")
    if not isinstance(events_obj, dict):
        bad(f'dialogue {raw_id}: missing or invalid "events" (an object of channel lists)')
        return None
    events: list[Event] = []
    order: list[int] = []
    for key, items in events_obj.items():
        if key not in ("0", "1"):
            bad(f'dialogue {raw_id}: unknown channel key "{key}" (expected "0" or "1")')
            continue
        channel = int(key)
        order.append(channel)
        if not isinstance(items, list):
            bad(f'dialogue {raw_id}: events["{key}"] is not a list')
            continue
        for index, item in enumerate(items):
            where = f'dialogue {raw_id}: events["{key}"][{index}]'
            if not isinstance(item, dict):
                bad(f"{where}: expected an object")
                continue
            kind_name = item.get("event")
            kind = _event_kind(kind_name)
            if kind is None:
                known = ", ".join(k.value for k in EventKind)
                bad(f"{where}: unknown event kind {kind_name!r} (expected one of {known})")
                continue
            time = item.get("time")
            if not isinstance(time, list) or len(time) != 2:
                bad(f'{where}: "time" must be [start, end]')
                continue
            start, end = _parse_time(time[0]), _parse_time(time[1])
            if start is None or end is None:
                bad(f'{where}: "time" values must be finite numbers of seconds, at most '
                    f'{MAX_FILE_SECONDS:g} in size')
                continue
            events.append(Event(kind, channel, start, end))
    extra = {k: v for k, v in obj.items() if k not in ("id", "events")}
    return RawRecord(line, str(raw_id), tuple(events), tuple(order), extra)


def read_events_jsonl(path: Path) -> tuple[list[RawRecord], list[Problem]]:
    """Parse an M3 ``{split}.jsonl``; malformed lines become problems, blank lines are skipped."""
    problems: list[Problem] = []
    records: list[RawRecord] = []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], [Problem(path, None, "file not found")]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(path, None, f"cannot read: {exc}")]
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw)
        except json.JSONDecodeError as exc:
            message = f"malformed JSON: {exc.msg} (column {exc.colno})"
            problems.append(Problem(path, number, message))
            continue
        except RecursionError:
            problems.append(Problem(path, number, "nested too deeply to read"))
            continue
        record = _parse_record(obj, path, number, problems)
        if record is None:
            continue
        if record.id in seen:
            problems.append(
                Problem(path, number, f"duplicate dialogue id {record.id} (first on line "
                        f"{seen[record.id]})")
            )
            continue
        seen[record.id] = number
        records.append(record)
    return records, problems


def read_alignment(
    path: Path, duration: float | None = None
) -> tuple[list[Word], list[Problem]]:
    """Parse a ``txt_align`` file (``channel<TAB>start<TAB>end<TAB>word``), in file order.

    Also checks, per channel in file order, that words do not end before they start, come in
    time order and do not overlap (within :data:`~duplexeval.timeline.TOL`), and, when the audio
    ``duration`` is known, that they lie inside the audio.
    """
    problems: list[Problem] = []
    words: list[Word] = []
    last: dict[int, tuple[int, float, float]] = {}
    late: list[tuple[int, float]] = []  # (line, end) of the words past the audio's end
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], [Problem(path, None, "alignment file not found")]
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(path, None, f"cannot read: {exc}")]
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split("\t", 3)
        if len(parts) != 4:
            problems.append(Problem(path, number, "expected channel<TAB>start<TAB>end<TAB>word"))
            continue
        channel_text, start_text, end_text, word = parts
        if channel_text not in ("0", "1"):
            problems.append(Problem(path, number, f"channel must be 0 or 1, got {channel_text!r}"))
            continue
        try:
            start, end = float(start_text), float(end_text)
        except ValueError:
            problems.append(Problem(path, number, "start and end must be numbers (seconds)"))
            continue
        if not (math.isfinite(start) and math.isfinite(end)):
            problems.append(Problem(path, number, "start and end must be finite"))
            continue
        if word.strip() == "":
            problems.append(Problem(path, number, "empty word"))
            continue
        channel = int(channel_text)
        problem = _word_problem(start, end, last.get(channel))
        if problem:
            problems.append(Problem(path, number, problem))
        if duration is not None and end > duration + TOL:
            late.append((number, end))
        words.append(Word(channel, start, end, word))
        last[channel] = (number, start, end)
    if late and duration is not None:  # one problem for them all: a short or cut recording
        (number, end), more = late[0], len(late) - 1
        problems.append(Problem(path, number, f"word ends at {end} s, after the audio ends "
                                f"({duration:.3f} s)" + (f"; {more} later word(s) too"
                                                         if more else "")))
        problems.sort(key=lambda p: p.line or 0)
    return words, problems


def _word_problem(start: float, end: float,
                  previous: tuple[int, float, float] | None) -> str | None:
    if start > end + TOL:
        return f"word ends ({end}) before it starts ({start})"
    if start < -TOL:
        return f"word starts before 0 s ({start})"
    if previous is not None:
        prev_line, prev_start, prev_end = previous
        if start < prev_start - TOL:
            return f"word out of order: starts at {start} s, before the word on line {prev_line}"
        if start < prev_end - TOL:
            return f"word overlaps the word on line {prev_line} on the same channel"
    return None


def read_audio_info(path: Path) -> tuple[AudioInfo | None, list[Problem]]:
    """Header of an audio file (no samples read); unreadable files become a problem."""
    if not path.is_file():
        return None, [Problem(path, None, "audio file not found")]
    try:
        info = audio_info(path)
    except AudioReadError as exc:
        return None, [Problem(path, None, f"unreadable audio: {exc.reason}")]
    return AudioInfo(path, int(info.sample_rate), int(info.frames), int(info.channels)), []


def read_dataset_metadata(root: Path) -> tuple[dict[str, Any], list[Problem]]:
    """``dataset.json`` if present, else name/language/domain guessed from the M3 path
    ``.../{lang}/{domain}/{name}``."""
    meta: dict[str, Any] = {"name": root.resolve().name}
    parts = root.resolve().parts
    if len(parts) >= 3 and parts[-3] in KNOWN_LANGUAGES:
        meta["language"], meta["domain"] = parts[-3], parts[-2]
    path = root / METADATA_FILE
    if not path.exists():
        return meta, []
    if not path.is_file():  # a folder, a FIFO (whose read would wait forever)
        return meta, [Problem(path, None, "not a regular file")]
    try:
        obj = loads_json(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return meta, [Problem(path, None, f"malformed JSON: {exc}")]
    except RecursionError:
        return meta, [Problem(path, None, "nested too deeply to read")]
    except OSError as exc:  # a folder, unreadable
        return meta, [Problem(path, None, f"cannot read: {exc.strerror or exc}")]
    if not isinstance(obj, dict):
        return meta, [Problem(path, None, "expected a JSON object")]
    names = [k for k in ("name", "language", "domain")
             if obj.get(k) is not None and not isinstance(obj[k], str)]
    if names:
        return meta, [Problem(path, None, f"{', '.join(names)} must be text")]
    meta.update({k: v for k, v in obj.items() if v is not None})
    return meta, []


def _event_kind(value: object) -> EventKind | None:
    """The event kind ``value`` names, or ``None`` when it names none."""
    if not isinstance(value, str):
        return None
    try:
        return EventKind(value)
    except ValueError:
        return None


def format_alignment(words: Iterable[Word]) -> str:
    """The text of a ``txt_align`` file for ``words`` (in the given order)."""
    return "".join(
        f"{w.channel}\t{format_seconds(w.start)}\t{format_seconds(w.end)}\t{w.text}\n"
        for w in words
    )


def write_alignment(path: Path, words: Iterable[Word]) -> None:
    """Write a ``txt_align`` file atomically."""
    atomic_write_text(path, format_alignment(words))


def record_json(dialogue: Dialogue) -> dict[str, Any]:
    """The jsonl record of a dialogue: ``id``, ``events``, then its other fields."""
    return {"id": dialogue.id, "events": dialogue.events_by_channel_json(), **dialogue.extra}


def write_dataset(
    root: Path,
    split: str,
    dialogues: Sequence[Dialogue],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Write dialogues in the M3 layout: ``{split}.jsonl``, alignments, and a copy of each audio
    file that lives elsewhere.  Every file is written atomically; existing other splits stay.
    Every id is checked (:func:`~duplexeval._fileio.safe_name`) before anything is written."""
    safe_name(split, "split")
    for dialogue in dialogues:
        safe_name(dialogue.id, "dialogue id")
    root.mkdir(parents=True, exist_ok=True)
    for dialogue in dialogues:
        if dialogue.words is not None:
            write_alignment(alignment_path(root, dialogue.id), dialogue.words)
        if dialogue.audio is not None:
            target = audio_path(root, dialogue.id)
            if dialogue.audio.path.resolve() != target.resolve():
                with atomic_path(target, suffix=".wav") as tmp:
                    shutil.copyfile(dialogue.audio.path, tmp)
    if metadata:
        atomic_write_json(root / METADATA_FILE, metadata)
    atomic_write_text(root / f"{split}.jsonl",
                      "".join(json_line(record_json(d)) for d in dialogues))
