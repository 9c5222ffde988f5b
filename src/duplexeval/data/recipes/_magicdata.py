"""``data import magicdata``: the MagicData Japanese conversation corpus into the M3 layout
(ja, chat).

Source (``/work/shared/references/datasets.md`` section 2; the user brings the files)::

    SOURCE/
      TXT/<id>.txt     one segment per line: [start,end]<TAB>speaker<TAB>gender<TAB>text
      WAV/<id>.wav     stereo, one speaker per channel, or one mono file per speaker:
      WAV/<id>_<speaker>.wav, WAV/<id>-<speaker>.wav or WAV/<id>/<speaker>.wav

TXT lines: times are seconds in brackets (``[3.910,4.670]``); speaker ``0`` marks non-speech and
is skipped; the gender column (``女``, ``男,普通话``) is read leniently and not used; a line whose
text holds ``[*]`` (unintelligible) or ``[PII]`` is dropped; other bracketed markers (``[NPS]``,
``[+]``, ``[LAUGHTER]``, ...) are removed from the text, and a line left empty is dropped.

Channels: the conversation's two speaker ids sorted as text; **channel 0 = the first**
(G0001 before G0002), channel 1 = the second.  The corpus does not say which channel of a
stereo WAV holds which speaker, so the recipe checks: when each speaker's utterances are more
than :data:`SWAP_RATIO` times louder on the other channel than on their own (mean power over
their utterance times), the two channels are swapped and the record says ``"swapped": true``.
The record's ``source.speakers`` lists the speakers in channel order.  Neither is "the user":
roles are decided per event.

Words: the corpus has utterance times only.  Each utterance's text is segmented into words
(:func:`duplexeval.speech._japanese.word_spans`, OpenJTalk when installed) and the utterance's
time is shared among its characters evenly (a word spans its characters' share; punctuation
takes time but is no word).  This stands in for forced alignment (the M3 toy used MFA), which
needs models the recipe does not run.  Events come from the words by the annotator; the audio is
resampled (soxr) to ``--sample-rate``.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from duplexeval.data._dialogue import Dialogue, Word
from duplexeval.data._m3 import write_dataset
from duplexeval.data.recipes._common import (
    DEFAULT_SEGMENTS,
    Recording,
    SegmentOptions,
    add_segment_arguments,
    finish,
    read_audio,
    resample,
    segment_options,
    source_error,
    stereo,
)
from duplexeval.data.recipes._registry import Recipe
from duplexeval.errors import number_type
from duplexeval.speech._japanese import word_spans

__all__ = ["RECIPE", "Utterance", "import_magicdata", "read_transcript"]

_TIMES = re.compile(r"^\[\s*(-?[0-9.]+)\s*,\s*(-?[0-9.]+)\s*\]$")
_MARKER = re.compile(r"\[[^\[\]]*\]")
SWAP_RATIO = 2.0
"""How much louder the other channel must be, over a speaker's utterances, to swap."""
DROP_MARKERS = ("[*]", "[PII]")
"""A line whose text holds one of these is dropped (its words are unknown)."""


@dataclass(frozen=True)
class Utterance:
    """One TXT line kept: ``speaker`` said ``text`` over ``[start, end]`` seconds."""

    line: int
    start: float
    end: float
    speaker: str
    text: str


def _parse_line(path: Path, number: int, raw: str) -> Utterance | None:
    parts = raw.split("\t")
    if len(parts) < 4:
        source_error(path, number, "expected [start,end]<TAB>speaker<TAB>gender<TAB>text")
    match = _TIMES.match(parts[0].strip())
    if match is None:
        source_error(path, number, f"times must be [start,end] in seconds, got {parts[0]!r}")
    try:
        start, end = float(match.group(1)), float(match.group(2))
    except ValueError:
        source_error(path, number, f"times must be numbers, got {parts[0]!r}")
    if start < 0 or end < start:
        source_error(path, number, f"bad time range [{start}, {end}]")
    speaker, text = parts[1].strip(), "\t".join(parts[3:]).strip()
    if not speaker:
        source_error(path, number, "empty speaker")
    if speaker == "0" or any(m in text for m in DROP_MARKERS):
        return None
    text = _MARKER.sub("", text).strip()
    return Utterance(number, start, end, speaker, text) if text else None


def read_transcript(path: Path) -> list[Utterance]:
    """The kept lines of one ``TXT/<id>.txt`` (see the module docstring)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        source_error(path, None, f"not UTF-8: {exc}")
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.strip():
            utt = _parse_line(path, number, raw)
            if utt is not None:
                out.append(utt)
    return out


def utterance_words(channel: int, utt: Utterance) -> list[Word]:
    """The utterance's words, its time shared evenly among its characters."""
    per_char = (utt.end - utt.start) / len(utt.text)
    return [Word(channel, round(utt.start + a * per_char, 4), round(utt.start + b * per_char, 4),
                 utt.text[a:b]) for a, b in word_spans(utt.text)]


def _power(x: np.ndarray, rate: int, spans: list[tuple[float, float]]) -> float:
    parts = [x[round(s * rate): round(e * rate)] for s, e in spans]
    samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return float(np.mean(samples.astype(np.float64) ** 2)) if samples.size else 0.0


def speakers_swapped(audio: np.ndarray, rate: int, utterances: list[Utterance],
                     speakers: list[str]) -> bool:
    """True when both speakers are over :data:`SWAP_RATIO` times louder on the other channel
    (``audio`` is ``(frames, 2)``; speaker k is expected on channel k)."""
    spans = [[(u.start, u.end) for u in utterances if u.speaker == spk] for spk in speakers]
    power = [[_power(audio[:, ch], rate, spans[k]) for k in (0, 1)] for ch in (0, 1)]
    return all(power[1 - k][k] > SWAP_RATIO * power[k][k] for k in (0, 1))


def _speaker_files(wav_dir: Path, stem: str, speakers: list[str]) -> list[Path] | None:
    found = []
    for speaker in speakers:
        names = [wav_dir / f"{stem}_{speaker}.wav", wav_dir / f"{stem}-{speaker}.wav",
                 wav_dir / stem / f"{speaker}.wav"]
        hit = next((p for p in names if p.exists()), None)
        if hit is None:
            return None
        found.append(hit)
    return found


def _audio(wav_dir: Path, stem: str, speakers: list[str], rate: int) -> np.ndarray:
    whole = wav_dir / f"{stem}.wav"
    if whole.exists():
        audio, source_rate = read_audio(whole)
        if audio.shape[1] == 2:
            return resample(audio[:, :2], source_rate, rate)
    files = _speaker_files(wav_dir, stem, speakers)
    if files is None:
        source_error(whole, None, "no stereo WAV for this conversation and no per-speaker "
                     f"files ({stem}_<speaker>.wav, {stem}-<speaker>.wav or "
                     f"{stem}/<speaker>.wav) for {', '.join(speakers)}")
    tracks = []
    for path in files:
        audio, source_rate = read_audio(path)
        tracks.append((audio.mean(axis=1), source_rate))
    return stereo(tracks, rate)


def read_magicdata(txt: Path, wav_dir: Path, rate: int) -> Recording:
    """One conversation (``TXT/<id>.txt`` and its audio) as a :class:`Recording`."""
    utterances = read_transcript(txt)
    speakers = sorted({u.speaker for u in utterances})
    if len(speakers) != 2:
        source_error(txt, None, f"{len(speakers)} speaker(s) ({', '.join(speakers)}) after "
                     "dropping speaker 0; a conversation has two")
    words = [w for u in utterances for w in utterance_words(speakers.index(u.speaker), u)]
    audio = _audio(wav_dir, txt.stem, speakers, rate)
    source: dict[str, object] = {"corpus": "magicdata", "id": txt.stem, "speakers": speakers}
    if speakers_swapped(audio, rate, utterances, speakers):
        audio, source["swapped"] = np.ascontiguousarray(audio[:, ::-1]), True
    extra = {"source": source}
    return Recording(txt.stem, audio, rate, words, extra)


def import_magicdata(source: Path, root: Path, split: str = "test", rate: int = 16000,
                     options: SegmentOptions = DEFAULT_SEGMENTS) -> list[Dialogue]:
    """Import every ``TXT/*.txt`` conversation under ``source`` into ``root``."""
    txt_dir, wav_dir = source / "TXT", source / "WAV"
    if not txt_dir.is_dir() or not wav_dir.is_dir():
        source_error(source, None, "expected the MagicData folders TXT/ and WAV/ here")
    files = sorted(txt_dir.glob("*.txt"))
    if not files:
        source_error(txt_dir, None, "no *.txt transcript")
    dialogues: list[Dialogue] = []
    for txt in files:
        dialogues += finish(read_magicdata(txt, wav_dir, rate), root, options, "ja", "chat")
    write_dataset(root, split, dialogues, {"name": "magicdata", "language": "ja",
                                           "domain": "chat", "source": "MagicData",
                                           "segment_s": options.target})
    return dialogues


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sample-rate", type=number_type(int, 1000, 384000), default=16000,
                   help="output rate (Hz)")
    add_segment_arguments(p)


def _run(args: argparse.Namespace, staging: Path) -> str:
    dialogues = import_magicdata(Path(args.source), staging, args.split, args.sample_rate,
                                 segment_options(args))
    return f"{len(dialogues)} dialogue(s) from MagicData"


RECIPE = Recipe("magicdata", "MagicData Japanese conversations (Japanese chat)",
                "a MagicData folder with TXT/ and WAV/", _add_arguments, _run)
