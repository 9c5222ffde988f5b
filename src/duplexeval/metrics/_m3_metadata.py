"""Read an output folder of the official M3-DuplexBench pipeline (or a duplexeval analysis).

Layout: a metadata file, one JSON record per line with the M3 sample fields (``event_id``,
``event_type``, ``input_start``, ``input_end``, ``event_start``, ``event_end``, ...) and a
transcript path field (``output_asr_path`` by default), pointing to the per-event transcript JSON of
:mod:`duplexeval.analysis._segments`.  The metadata file is looked for, in this order, as
``metadata_mfa.jsonl`` (after the MFA aligner), then ``metadata.jsonl``, in the folder and in its
``asr/`` subfolder; a path to the file itself also works.  Transcript paths may be absolute,
relative to the working directory (as the official code reads them), or relative to the folder
or to the metadata file's folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from duplexeval._fileio import loads_json
from duplexeval.analysis._segments import read_transcript
from duplexeval.errors import DatasetInvalid, DuplexevalError, Problem
from duplexeval.events import EVENT_TO_TASK
from duplexeval.metrics._base import EventView
from duplexeval.timeline import MAX_FILE_SECONDS, is_time

__all__ = ["METADATA_NAMES", "find_metadata", "read_m3_outputs"]

METADATA_NAMES = ("metadata_mfa.jsonl", "metadata.jsonl")
_REQUIRED = ("event_type", "input_start", "input_end", "event_start", "event_end")
_TIMES = ("input_start", "input_end", "event_start", "event_end")
"""Required fields that are times (s): finite numbers within ``MAX_FILE_SECONDS`` of zero (NaN, inf
or 1e308 is refused, with the line)."""


def find_metadata(path: Path) -> Path:
    """The metadata file of an output folder (see the module docstring for the order)."""
    if path.is_file():
        return path
    if path.exists() and not path.is_dir():
        raise DuplexevalError(f"{path}: not a regular file")
    if not path.is_dir():
        raise DuplexevalError(f"{path}: no such folder")
    for folder in (path, path / "asr"):
        for name in METADATA_NAMES:
            if (folder / name).is_file():
                return folder / name
            if (folder / name).exists():  # a FIFO, a socket, a folder: never opened
                raise DuplexevalError(f"{folder / name}: not a regular file")
    raise DuplexevalError(f"{path}: no {' or '.join(METADATA_NAMES)} found (looked in the "
                          "folder and in asr/)")


def _resolve(value: str, roots: list[Path]) -> Path:
    p = Path(value)
    if p.is_absolute() or p.exists():
        return p
    for root in roots:
        if (root / p).exists():
            return root / p
    return p


def read_m3_outputs(path: Path, transcript_key: str = "output_asr_path", language: str = "",
                    domain: str = "", official: bool = False) -> tuple[list[EventView], Path]:
    """Every record of the folder's metadata with its transcript segments; problems (bad JSON,
    missing fields, missing or malformed transcripts) are reported all at once with file and
    line.  ``official``: a folder the user gives (``score --m3``), where an event type M3 does
    not score, a line given twice and an empty file are problems too (a run's own analysis
    may hold other benchmarks' event types, and no line where every sample failed)."""
    meta = find_metadata(path)
    roots = [path if path.is_dir() else meta.parent, meta.parent]
    events: list[EventView] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}  # transcript -> the line that gave it
    try:
        lines = meta.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DuplexevalError(f"{meta}: not UTF-8 text ({exc.reason})") from None
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record: Any = loads_json(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(meta, no, f"not valid JSON ({exc.msg})"))
            continue
        except RecursionError:
            problems.append(Problem(meta, no, "nested too deeply to read"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(meta, no, "expected a JSON object"))
            continue
        missing = [k for k in (*_REQUIRED, transcript_key) if k not in record]
        if missing:
            problems.append(Problem(meta, no, f"missing field(s) {', '.join(missing)}"))
            continue
        problem = _record_problem(record, transcript_key, seen if official else None)
        if problem is not None:
            problems.append(Problem(meta, no, problem))
            continue
        seen[str(record[transcript_key])] = no
        transcript = _resolve(str(record[transcript_key]), roots)
        if not transcript.is_file():
            problems.append(Problem(meta, no, f"transcript not found: {record[transcript_key]}"))
            continue
        try:
            segments = tuple(read_transcript(transcript))
            events.append(EventView.from_metadata(record, segments, language, domain))
        except DuplexevalError as exc:
            problems.append(Problem(meta, no, str(exc)))
        except (TypeError, ValueError) as exc:
            problems.append(Problem(meta, no, f"bad value ({exc})"))
    if problems:
        raise DatasetInvalid(problems)
    if official and not events:
        raise DuplexevalError(f"{meta}: no event to score (an empty metadata file)")
    return events, meta


def _record_problem(record: dict[str, Any], transcript_key: str,
                    seen: dict[str, int] | None) -> str | None:
    """What is wrong with one metadata record's fields (its transcript aside), or ``None``:
    times that are not finite seconds within ``MAX_FILE_SECONDS``, an input window that ends before
    it starts; with ``seen`` (an official folder) also an event type M3 does not score (it
    would be dropped unsaid) and a transcript an earlier line gave (scored twice)."""
    bad = [k for k in _TIMES if not is_time(record[k])]
    if bad:
        return (f"{', '.join(bad)}: not a finite number of seconds within "
                f"{MAX_FILE_SECONDS:g} of zero")
    if record["input_start"] > record["input_end"]:
        return f"input_start ({record['input_start']}) after input_end ({record['input_end']})"
    if seen is None:
        return None
    kinds = [k.value for k in EVENT_TO_TASK]
    if record["event_type"] not in kinds:
        return f"event_type {record['event_type']!r} is not one M3 scores ({', '.join(kinds)})"
    first = seen.get(str(record[transcript_key]))
    if first is not None:
        return f"{transcript_key} {record[transcript_key]!r} again (first on line {first})"
    return None
