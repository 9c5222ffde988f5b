"""Dataset validation: every problem with its file and line, and the guarded loader.

Every command that reads a dataset goes through :func:`load_dataset`, so the checks of
``duplexeval validate`` guard them all.

Checks
------
* ``{split}.jsonl``: malformed JSON, missing id or events, ids that cannot be a file name (a
  path separator, ``..``, a leading dot or a control character: an id names the dialogue's
  files, see :func:`~duplexeval._fileio.safe_name`), unknown channel keys, unknown event kinds,
  malformed times, duplicate ids;
* events: start > end (legal only for an overlapping TURN_SHIFT), negative times, times after
  the end of the audio;
* ``audio/{id}.wav``: missing, unreadable, not stereo;
* the ``mtr`` field of MTR-style suites (rounds, windows, feature spans; see
  :mod:`duplexeval.data._mtr_record`);
* ``txt_align/{id}.txt``: missing, malformed lines, words that end before they start, words out
  of order or overlapping on one channel, words outside the audio;
* a record's ``flexi`` field (FLEXI items, :mod:`duplexeval.data._flexi_record`): the fields its
  scenario needs, consistent with each other, the audio and the events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from duplexeval.data._dialogue import AudioInfo, Dataset, Dialogue, Word
from duplexeval.data._flexi_record import flexi_problems
from duplexeval.data._m3 import (
    METADATA_FILE,
    RawRecord,
    alignment_path,
    audio_path,
    available_splits,
    read_alignment,
    read_audio_info,
    read_dataset_metadata,
    read_events_jsonl,
)
from duplexeval.data._mtr_record import mtr_problems
from duplexeval.errors import DatasetInvalid, Problem
from duplexeval.events import EventKind
from duplexeval.timeline import TOL

__all__ = ["Need", "ValidationReport", "check_dataset", "load_dataset"]


class Need(StrEnum):
    """Whether a per-dialogue file must exist."""

    REQUIRE = "require"
    """Missing files are problems."""
    OPTIONAL = "optional"
    """Missing files are fine (reported as a warning); present files are still checked."""


@dataclass
class ValidationReport:
    """What :func:`check_dataset` found."""

    dataset: Dataset | None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def _event_problems(dialogue: Dialogue, path: Path, line: int) -> list[Problem]:
    problems = []
    duration = dialogue.audio.duration if dialogue.audio is not None else None
    for event in dialogue.events:
        where = f"dialogue {dialogue.id}: {event.kind.value} [{event.start}, {event.end}] on " \
                f"channel {event.channel}"
        if event.start > event.end + TOL and event.kind != EventKind.TURN_SHIFT:
            problems.append(Problem(path, line, f"{where}: start > end (only an overlapping "
                                    "TURN_SHIFT may end before it starts)"))
        if min(event.start, event.end) < -TOL:
            problems.append(Problem(path, line, f"{where}: negative time"))
        if duration is not None and max(event.start, event.end) > duration + TOL:
            problems.append(Problem(path, line, f"{where}: after the end of the audio "
                                    f"({duration:.3f} s)"))
    return problems


def _record_files(root: Path, dialogue_id: str, audio: Need, alignment: Need,
                  problems: list[Problem]) -> tuple[AudioInfo | None, tuple[Word, ...] | None]:
    """A dialogue's audio info and words (``None`` when absent), appending their problems."""
    info: AudioInfo | None = None
    wav = audio_path(root, dialogue_id)
    if wav.exists() or audio == Need.REQUIRE:
        info, audio_problems = read_audio_info(wav)
        problems += audio_problems
        if info is not None and info.channels != 2:
            problems.append(Problem(wav, None, f"audio is not stereo ({info.channels} "
                                    "channel(s)); expected one speaker per channel"))
        if info is not None and info.num_frames == 0:  # one line, not one per word and event
            problems.append(Problem(wav, None, "audio has no frames (an empty recording)"))
            info = None
    words: tuple[Word, ...] | None = None
    txt = alignment_path(root, dialogue_id)
    if txt.exists() or alignment == Need.REQUIRE:
        parsed, align_problems = read_alignment(txt, info.duration if info else None)
        problems += align_problems
        if txt.exists():
            words = tuple(parsed)
    return info, words


def _named_fields(extra: dict[str, Any], record: RawRecord, jsonl: Path,
                  problems: list[Problem]) -> dict[str, Any]:
    """``extra`` without a ``language`` or ``domain`` that is not a string (a problem each)."""
    for key in ("language", "domain"):
        if extra.get(key) is not None and not isinstance(extra[key], str):
            problems.append(Problem(jsonl, record.line, f"dialogue {record.id}: {key!r} must "
                                    f"be a string, got {extra.pop(key)!r}"))
    return extra


def _split_problem(root: Path, jsonl: Path, split: str) -> Problem | None:
    """Why the split file ``jsonl`` of ``root`` cannot be read at all, or ``None``."""
    if not root.is_dir():
        return Problem(root, None, "not a dataset folder")
    if jsonl.is_symlink() and not jsonl.exists():
        return Problem(jsonl, None, "a symbolic link that leads nowhere (a loop, or a target "
                       "that is gone)")
    if not jsonl.exists():
        splits = available_splits(root)
        hint = f"available splits: {', '.join(splits)}" if splits else "no *.jsonl file here"
        return Problem(jsonl, None, f"split {split!r} not found ({hint})")
    if not jsonl.is_file():  # a folder, a FIFO (whose read would wait forever), a device
        return Problem(jsonl, None, "not a regular file")
    return None


def check_dataset(
    root: Path,
    split: str = "test",
    *,
    audio: Need = Need.REQUIRE,
    alignment: Need = Need.REQUIRE,
) -> ValidationReport:
    """Read and check one split of a dataset folder; never raises on bad content."""
    root = Path(root)
    jsonl = root / f"{split}.jsonl"
    missing = _split_problem(root, jsonl, split)
    if missing is not None:
        return ValidationReport(None, [missing])
    meta, problems = read_dataset_metadata(root)
    records, record_problems = read_events_jsonl(jsonl)
    problems += record_problems
    warnings: list[str] = []
    missing_audio = missing_alignment = 0
    dialogues: list[Dialogue] = []
    for record in records:
        info, words = _record_files(root, record.id, audio, alignment, problems)
        missing_audio += info is None and not audio_path(root, record.id).exists()
        missing_alignment += words is None
        extra = _named_fields(dict(record.extra), record, jsonl, problems)
        dialogue = Dialogue(
            id=record.id,
            events=record.events,
            channel_order=record.channel_order,
            words=words,
            audio=info,
            language=extra.get("language", meta.get("language")),
            domain=extra.get("domain", meta.get("domain")),
            extra=extra,
        )
        problems += _event_problems(dialogue, jsonl, record.line)
        problems += [Problem(jsonl, record.line, f"dialogue {record.id}: {p}")
                     for p in flexi_problems(dialogue)]
        problems += [Problem(jsonl, record.line, m) for m in mtr_problems(dialogue)]
        dialogues.append(dialogue)
    if records and missing_audio and audio == Need.OPTIONAL:
        warnings.append(f"{root}: audio missing for {missing_audio} of {len(records)} "
                        "dialogue(s); durations come from the annotations")
    if records and missing_alignment and alignment == Need.OPTIONAL:
        warnings.append(f"{root}: word alignments missing for {missing_alignment} of "
                        f"{len(records)} dialogue(s)")
    if not records and not record_problems:
        problems.append(Problem(jsonl, None, "no dialogues in this split"))
    dataset = Dataset(
        root=root,
        split=split,
        dialogues=tuple(dialogues),
        name=str(meta.get("name", root.name)),
        language=meta.get("language"),
        domain=meta.get("domain"),
        user_channels=_user_channels(meta, root, problems),
    )
    return ValidationReport(dataset, sorted(set(problems), key=_problem_order), warnings)


def _user_channels(meta: dict[str, Any], root: Path, problems: list[Problem]) -> tuple[int, ...]:
    """``dataset.json``'s ``user_channels`` (a non-empty list of distinct channels 0 and 1),
    else both; a malformed value is a problem naming the file."""
    value = meta.get("user_channels")
    if value is None:
        return (0, 1)
    if not (isinstance(value, list) and value and len(set(value)) == len(value)
            and all(isinstance(c, int) and not isinstance(c, bool) and c in (0, 1)
                    for c in value)):
        problems.append(Problem(root / METADATA_FILE, None, f"user_channels must be a "
                                f"non-empty list of distinct channels 0 and 1, got {value!r}"))
        return (0, 1)
    return tuple(value)


def _problem_order(problem: Problem) -> tuple[str, int, str]:
    return (str(problem.path), problem.line or 0, problem.message)


def load_dataset(
    root: Path,
    split: str = "test",
    *,
    audio: Need = Need.OPTIONAL,
    alignment: Need = Need.OPTIONAL,
) -> tuple[Dataset, list[str]]:
    """Load a split after validating it; raises :class:`DatasetInvalid` listing every problem.

    Returns the dataset and the warnings (e.g. audio absent, so durations come from the
    annotations).
    """
    report = check_dataset(root, split, audio=audio, alignment=alignment)
    if report.problems or report.dataset is None:
        raise DatasetInvalid(report.problems)
    return report.dataset, report.warnings
