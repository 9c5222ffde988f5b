"""``duplexeval annotate``: M3 events from word alignments or from stereo audio.

Both paths end in :func:`duplexeval.events.annotate_spans`: words (alignments) or voice
activity spans (audio, one detector run per channel) are the speech spans of each channel.
Dialogue ids are the file stems; dialogues come out sorted by id.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import numpy as np

from duplexeval._audio import AudioReadError, read_audio
from duplexeval.data._dialogue import Dialogue
from duplexeval.data._m3 import ALIGN_DIR, AUDIO_DIR, read_alignment
from duplexeval.errors import DatasetInvalid, DuplexevalError, Problem
from duplexeval.events import AnnotationRules, annotate_spans
from duplexeval.speech._activity import ActivityOptions, detect_activity
from duplexeval.timeline import Span

__all__ = ["SourceKind", "annotate_alignment_files", "annotate_audio_files", "annotate_source",
           "find_sources"]


class SourceKind(StrEnum):
    """What ``annotate`` reads."""

    AUTO = "auto"
    WORDS = "words"
    AUDIO = "audio"


def find_sources(source: Path, kind: SourceKind = SourceKind.AUTO) -> tuple[SourceKind, list[Path]]:
    """The alignment (``*.txt``) or audio (``*.wav``) files under ``source``.

    ``source`` may be a dataset folder (its ``txt_align/`` or ``audio/``), a folder of files, or
    one file.  With ``AUTO``, alignments win over audio.
    """
    if not source.exists():
        raise DuplexevalError(f"{source}: no such file or folder")
    if source.is_file():
        found = SourceKind.AUDIO if source.suffix.lower() == ".wav" else SourceKind.WORDS
        if kind not in (SourceKind.AUTO, found):
            raise DuplexevalError(f"{source}: not a {kind.value} source")
        return found, [source]
    candidates = {
        SourceKind.WORDS: [source / ALIGN_DIR, source],
        SourceKind.AUDIO: [source / AUDIO_DIR, source],
    }
    order = [SourceKind.WORDS, SourceKind.AUDIO] if kind == SourceKind.AUTO else [kind]
    pattern = {SourceKind.WORDS: "*.txt", SourceKind.AUDIO: "*.wav"}
    for candidate_kind in order:
        for folder in candidates[candidate_kind]:
            files = sorted(folder.glob(pattern[candidate_kind])) if folder.is_dir() else []
            if files:
                return candidate_kind, files
    wanted = " or ".join(f"{pattern[k]} files" for k in order)
    raise DuplexevalError(f"{source}: found no {wanted} (looked in {source} and its "
                          f"{ALIGN_DIR}/ and {AUDIO_DIR}/ folders)")


def annotate_alignment_files(
    files: list[Path], rules: AnnotationRules = AnnotationRules()
) -> list[Dialogue]:
    """One dialogue per alignment file, events from its words; raises on malformed files."""
    problems: list[Problem] = []
    dialogues = []
    for path in files:
        words, file_problems = read_alignment(path)
        problems += file_problems
        spans: dict[int, list[Span]] = {0: [], 1: []}
        for word in words:
            if word.end >= word.start:
                spans[word.channel].append(word.span)
        dialogues.append(Dialogue(id=path.stem, events=tuple(annotate_spans(spans, rules)),
                                  words=tuple(words)))
    if problems:
        raise DatasetInvalid(problems)
    return sorted(dialogues, key=lambda d: d.id)


def annotate_audio_files(
    files: list[Path],
    rules: AnnotationRules = AnnotationRules(),
    activity: ActivityOptions = ActivityOptions(),
) -> list[Dialogue]:
    """One dialogue per stereo wav: voice activity per channel, then the annotation rules."""
    problems: list[Problem] = []
    dialogues = []
    for path in files:
        try:
            audio, sample_rate = read_audio(path)
        except AudioReadError as exc:
            problems.append(Problem(path, None, f"unreadable audio: {exc.reason}"))
            continue
        problem = _audio_problem(audio, sample_rate)
        if problem is not None:
            problems.append(Problem(path, None, problem))
            continue
        spans = {
            ch: detect_activity(np.ascontiguousarray(audio[:, ch]), sample_rate, activity)
            for ch in (0, 1)
        }
        dialogues.append(Dialogue(id=path.stem, events=tuple(annotate_spans(spans, rules))))
    if problems:
        raise DatasetInvalid(problems)
    return sorted(dialogues, key=lambda d: d.id)


def annotate_source(
    source: Path,
    kind: SourceKind = SourceKind.AUTO,
    rules: AnnotationRules = AnnotationRules(),
    activity: ActivityOptions = ActivityOptions(),
) -> tuple[SourceKind, list[Dialogue]]:
    """Find the files under ``source`` and annotate them."""
    found, files = find_sources(source, kind)
    if found == SourceKind.WORDS:
        return found, annotate_alignment_files(files, rules)
    return found, annotate_audio_files(files, rules, activity)


MIN_RATE = 8000
"""The lowest sample rate (Hz) voice activity is found at (Silero and webrtc take 8 kHz)."""


def _audio_problem(audio: np.ndarray, sample_rate: int) -> str | None:
    """Why a wav cannot be annotated, or ``None``: not stereo, empty, a rate under
    :data:`MIN_RATE`, samples that are not finite (NaN read as silence annotated nothing)."""
    if audio.shape[1] != 2:
        return f"audio is not stereo ({audio.shape[1]} channel(s)); expected one speaker " \
            "per channel"
    if len(audio) == 0:
        return "audio has no frames (an empty recording)"
    if sample_rate < MIN_RATE:
        return f"sample rate {sample_rate} Hz, under the {MIN_RATE} Hz speech needs"
    bad = int(np.count_nonzero(~np.isfinite(audio)))
    return f"{bad} non-finite sample(s) (NaN or inf)" if bad else None
