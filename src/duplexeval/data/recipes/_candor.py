"""``data import candor``: CANDOR conversation folders into the M3 layout (en, chat).

Source (``/work/shared/references/datasets.md`` section 1; the user brings the files)::

    SOURCE/<uuid>/                      or SOURCE itself is one <uuid>/ folder
      metadata.json                     {"speakers": [{"user_id", "channel": "L"|"R"}], ...}
      processed/<uuid>.mp3              stereo, L/R = the two speakers (a <uuid>.wav also works)
      processed/channel_map.json        {"L": user_id, "R": user_id}  (else metadata.json)
      processed/<user_id>.wav  (x2)     only for a mono <uuid>.mp3: each speaker's own track,
                                        extracted by the user from <user_id>.mp4 (ffmpeg)
      transcription/transcribe_output.json   AWS Transcribe: results.items[] words
      transcription/transcript_audiophile.csv  turn_id,speaker,start,stop,utterance,...

Channels: **channel 0 = L**, channel 1 = R (the speakers' ``user_id``s are kept in the record's
``source.speakers``, in channel order).  Neither is "the user": the roles are decided per event.

Words: the AWS items of type ``pronunciation`` (``start_time``/``end_time`` are strings of
seconds).  Their channel comes from ``results.channel_labels`` (``ch_0`` = L) when AWS labelled
channels; otherwise each word goes to the speaker of the transcript turn (``--transcript``
variant, default ``audiophile``) that contains its midpoint (the latest-starting one when two
overlap, the nearest when none does), and, when ``results.speaker_labels`` is present, each
AWS speaker label goes to the channel most of its words landed on.  Without
``transcribe_output.json`` the turns' utterances are spread over their ``[start, stop]``
(:func:`~duplexeval.data.recipes._common.spread_words`: no pauses inside a turn).  Events come
from the words by the annotator; the audio is resampled (soxr) to ``--sample-rate``.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._fileio import loads_json
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
    spread_words,
    stereo,
)
from duplexeval.data.recipes._registry import Recipe
from duplexeval.errors import number_type

__all__ = ["RECIPE", "Turn", "import_candor", "read_candor", "read_turns"]

REQUIRED_COLUMNS = ("turn_id", "speaker", "start", "stop", "utterance")


@dataclass(frozen=True)
class Turn:
    """One transcript row: ``speaker`` (user_id, a string) over ``[start, stop]`` seconds."""

    speaker: str
    start: float
    stop: float
    utterance: str
    line: int | None = None
    """The CSV line (1-based) it was read from."""


def _json(path: Path) -> Any:
    try:
        return loads_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        source_error(path, None, "file not found")
    except json.JSONDecodeError as exc:
        source_error(path, exc.lineno, f"malformed JSON: {exc.msg}")
    except UnicodeDecodeError as exc:
        source_error(path, None, f"not UTF-8: {exc}")


def _float(path: Path, line: int, name: str, text: str | None) -> float:
    try:
        value = float(text or "")
    except ValueError:
        source_error(path, line, f"{name} must be seconds, got {text!r}")
    if value != value or value in (float("inf"), float("-inf")):
        source_error(path, line, f"{name} must be finite, got {text!r}")
    return value


def read_turns(path: Path) -> list[Turn]:
    """The rows of a ``transcript_*.csv`` (columns by header name; speaker ids kept as text);
    a backbiter row's ``backchannel_*`` columns add a turn of the backchanneler."""
    try:
        handle = path.open(encoding="utf-8", newline="")
    except FileNotFoundError:
        source_error(path, None, "file not found")
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            source_error(path, 1, f"missing column(s) {', '.join(missing)}")
        turns = []
        for row in reader:
            turns += _row_turns(path, reader.line_num, row)
    return turns


def _row_turns(path: Path, line: int, row: dict[str, str]) -> list[Turn]:
    """A row's turn, and (backbiter) its backchannel as a turn of the backchanneler."""
    start = _float(path, line, "start", row.get("start"))
    stop = _float(path, line, "stop", row.get("stop"))
    if stop < start:
        source_error(path, line, f"stop ({stop}) before start ({start})")
    speaker = (row.get("speaker") or "").strip()
    if not speaker:
        source_error(path, line, "empty speaker")
    out = [Turn(speaker, start, stop, row.get("utterance") or "", line)]
    bc_speaker = (row.get("backchannel_speaker") or "").strip()
    if bc_speaker:
        bc_start = _float(path, line, "backchannel_start", row.get("backchannel_start"))
        bc_stop = _float(path, line, "backchannel_stop", row.get("backchannel_stop"))
        out.append(Turn(bc_speaker, bc_start, max(bc_start, bc_stop),
                        row.get("backchannel") or "", line))
    return out


def channel_speakers(folder: Path) -> tuple[str, str]:
    """``(user_id on L, user_id on R)`` from ``processed/channel_map.json``, else from
    ``metadata.json``'s ``speakers[].channel``."""
    cmap = folder / "processed" / "channel_map.json"
    if cmap.exists():
        obj = _json(cmap)
        if not isinstance(obj, dict) or not all(isinstance(obj.get(k), str) for k in "LR"):
            source_error(cmap, None, 'expected {"L": user_id, "R": user_id}')
        return str(obj["L"]), str(obj["R"])
    meta = folder / "metadata.json"
    obj = _json(meta)
    speakers = obj.get("speakers") if isinstance(obj, dict) else None
    by_side = {s.get("channel"): str(s.get("user_id")) for s in speakers or []
               if isinstance(s, dict)}
    if set(by_side) != {"L", "R"}:
        source_error(meta, None, 'speakers[] must give one user_id on channel "L" and one on "R"'
                     " (and there is no processed/channel_map.json)")
    return by_side["L"], by_side["R"]


def _audio(folder: Path, speakers: tuple[str, str], rate: int) -> Any:
    processed = folder / "processed"
    for name in (f"{folder.name}.mp3", f"{folder.name}.wav"):
        if (processed / name).exists():
            audio, source_rate = read_audio(processed / name)
            if audio.shape[1] >= 2:
                return resample(audio[:, :2], source_rate, rate)
            break
    tracks = []
    for user in speakers:
        path = processed / f"{user}.wav"
        if not path.exists():
            source_error(path, None, f"no stereo processed/{folder.name}.mp3; each speaker's "
                         "track is needed as processed/<user_id>.wav (extract it from the "
                         "<user_id>.mp4, e.g. with ffmpeg -i X.mp4 -vn X.wav)")
        audio, source_rate = read_audio(path)
        tracks.append((audio.mean(axis=1), source_rate))
    return stereo(tracks, rate)


def _item_words(path: Path, items: Any) -> list[tuple[float, float, str]]:
    if not isinstance(items, list):
        source_error(path, None, "results.items must be a list")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or item.get("type") != "pronunciation":
            continue
        alts = item.get("alternatives")
        first = alts[0] if isinstance(alts, list) and alts else {}
        text = str(first.get("content", "")).strip() if isinstance(first, dict) else ""
        where = f"results.items[{i}]"
        try:
            start, end = float(item["start_time"]), float(item["end_time"])
        except (KeyError, TypeError, ValueError):
            source_error(path, None, f"{where}: a pronunciation needs start_time and end_time")
        if end < start:
            source_error(path, None, f"{where}: end_time before start_time")
        if text:
            out.append((start, end, text))
    return out


def _norm(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum() or c == "'")


def _turn_channel(turns: list[Turn], channel_of: dict[str, int], t: float, word: str) -> int:
    """The channel of the turn holding time ``t``: among turns containing it, those whose
    utterance has the word, then the latest-starting; the nearest turn when none contains it."""
    inside = [x for x in turns if x.start <= t <= x.stop]
    if not inside:
        best = min(turns, key=lambda x: min(abs(t - x.start), abs(t - x.stop)))
        return channel_of[best.speaker]
    key = _norm(word)
    saying = [x for x in inside if key in {_norm(w) for w in x.utterance.split()}]
    return channel_of[max(saying or inside, key=lambda x: x.start).speaker]


def _label_channels(path: Path, results: dict[str, Any], words: list[tuple[float, float, str]],
                    guess: list[int]) -> list[int]:
    """Each AWS speaker label to the channel most of its words were guessed on."""
    segments = (results.get("speaker_labels") or {}).get("segments") or []
    label_at: dict[tuple[float, float], str] = {}
    for seg in segments:
        for item in seg.get("items") or [] if isinstance(seg, dict) else []:
            try:
                label_at[(float(item["start_time"]), float(item["end_time"]))] = \
                    str(item["speaker_label"])
            except (KeyError, TypeError, ValueError):
                source_error(path, None, "results.speaker_labels: malformed item")
    votes: dict[str, Counter[int]] = {}
    for (s, e, _), ch in zip(words, guess, strict=True):
        if (s, e) in label_at:
            votes.setdefault(label_at[(s, e)], Counter())[ch] += 1
    label_channel = {lab: c.most_common(1)[0][0] for lab, c in votes.items()}
    return [label_channel.get(label_at.get((s, e), ""), ch)
            for (s, e, _), ch in zip(words, guess, strict=True)]


def read_words(folder: Path, turns: list[Turn], speakers: tuple[str, str]) -> list[Word]:
    """The conversation's words with their channels (see the module docstring)."""
    channel_of = {speakers[0]: 0, speakers[1]: 1}
    path = folder / "transcription" / "transcribe_output.json"
    if not path.exists():
        return [w for t in turns for w in spread_words(channel_of[t.speaker], t.start, t.stop,
                                                       t.utterance.split())]
    obj = _json(path)
    results = obj.get("results") if isinstance(obj, dict) else None
    if not isinstance(results, dict):
        source_error(path, None, "expected an AWS Transcribe object with results")
    labelled = (results.get("channel_labels") or {}).get("channels")
    if labelled:
        out = []
        for entry in labelled:
            channel = 1 if str(entry.get("channel_label")) in ("ch_1", "1") else 0
            out += [Word(channel, s, e, t) for s, e, t in _item_words(path, entry.get("items"))]
        return out
    words = _item_words(path, results.get("items"))
    guess = [_turn_channel(turns, channel_of, (s + e) / 2, w) for s, e, w in words]
    if results.get("speaker_labels"):
        guess = _label_channels(path, results, words, guess)
    return [Word(ch, s, e, t) for (s, e, t), ch in zip(words, guess, strict=True)]


def read_candor(folder: Path, transcript: str, rate: int) -> Recording:
    """One conversation folder as a :class:`Recording` (channel 0 = L)."""
    speakers = channel_speakers(folder)
    csv_path = folder / "transcription" / f"transcript_{transcript}.csv"
    turns = read_turns(csv_path)
    for turn in turns:
        if turn.speaker not in speakers:
            source_error(csv_path, turn.line, f"speaker {turn.speaker!r} is neither channel's "
                         f"user_id ({speakers[0]} on L, {speakers[1]} on R)")
    if not turns:
        source_error(csv_path, None, "no turns")
    words = read_words(folder, turns, speakers)
    audio = _audio(folder, speakers, rate)
    extra = {"source": {"corpus": "candor", "id": folder.name, "speakers": list(speakers)}}
    return Recording(folder.name, audio, rate, words, extra)


def conversation_folders(source: Path) -> list[Path]:
    """``source`` when it is one conversation folder, else its conversation subfolders."""
    if not source.is_dir():
        source_error(source, None, "not a folder")
    if (source / "transcription").is_dir():
        return [source]
    found = sorted(p for p in source.iterdir() if (p / "transcription").is_dir())
    if not found:
        source_error(source, None, "no CANDOR conversation folder (<uuid>/transcription/) here")
    return found


def import_candor(source: Path, root: Path, split: str = "test", transcript: str = "audiophile",
                  rate: int = 16000, options: SegmentOptions = DEFAULT_SEGMENTS) -> list[Dialogue]:
    """Import every conversation under ``source`` into ``root`` (one folder at a time)."""
    dialogues: list[Dialogue] = []
    for folder in conversation_folders(source):
        rec = read_candor(folder, transcript, rate)
        dialogues += finish(rec, root, options, "en", "chat")
    write_dataset(root, split, dialogues, {"name": "candor", "language": "en", "domain": "chat",
                                           "source": "CANDOR", "segment_s": options.target})
    return dialogues


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--transcript", choices=["audiophile", "backbiter", "cliffhanger"],
                   default="audiophile", help="the transcript variant whose turns give each "
                   "word's speaker when AWS did not label channels")
    p.add_argument("--sample-rate", type=number_type(int, 1000, 384000), default=16000,
                   help="output rate (Hz)")
    add_segment_arguments(p)


def _run(args: argparse.Namespace, staging: Path) -> str:
    dialogues = import_candor(Path(args.source), staging, args.split, args.transcript,
                              args.sample_rate, segment_options(args))
    return f"{len(dialogues)} dialogue(s) from CANDOR"


RECIPE = Recipe("candor", "CANDOR conversation folders (English chat)",
                "a CANDOR folder of <uuid>/ conversation folders, or one of them",
                _add_arguments, _run)
