"""``data import mtr``: MTR-DuplexBench's dialogue-quality data (``Jeff0918/MTR-DuplexBench`` on
Hugging Face, a copy you have) in the M3 layout, with its rounds as the record's ``mtr`` field.

Source (``datasets.md`` section 5; the fields read are those of MTR's evaluators)::

    SOURCE/ (or SOURCE/data/)
      Dialogue_Quality/{id}.mp3          stereo, 120 s; the README's convention: left = user
      Scenarios_encoding/dialogue_quality/semantic_turned_time_v3.jsonl
          {"id": ..., "filtered_turn": [{"start": s, "end": e}, ...], ...}   one line per clip

Each clip becomes a dialogue: stereo audio with the user on channel 0 (``--user-side right``
swaps the channels: MTR's own quality script maps right = user), events from the annotator on
the audio (voice activity per channel; no words: the clips come without alignments), and the
record's ``mtr`` field (:mod:`duplexeval.data._mtr_record`, group ``dialogue_quality``): round k's
user span is ``filtered_turn[k]`` and its assistant window runs from its start to the end of round
k+1's user turn (the last round's to the end of the audio), MTR's definition.  Rounds with an
empty or overlapping span are dropped and counted.  A malformed line is one ``file:line``
error, exit 2, and nothing is written.  The conversational-feature, instruction-following and
safety encodings are not read: their schema is not published (``datasets.md``).  Without
words there are no alignment files, so ``duplexeval validate --annotations-only`` is the check
that passes (audio and annotations).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._audio import write_audio
from duplexeval._fileio import loads_json
from duplexeval.data._dialogue import AudioInfo, Dialogue
from duplexeval.data._m3 import write_dataset
from duplexeval.data.recipes._common import read_audio, source_error
from duplexeval.data.recipes._registry import Recipe
from duplexeval.events import AnnotationRules, annotate_spans
from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity

__all__ = ["RECIPE", "quality_rounds"]

TURNS_FILE = Path("Scenarios_encoding/dialogue_quality/semantic_turned_time_v3.jsonl")
AUDIO_DIR = Path("Dialogue_Quality")


def _root(source: Path) -> Path:
    for root in (source, source / "data"):
        if (root / TURNS_FILE).is_file():
            return root
    source_error(source, None, f"no {TURNS_FILE} (in SOURCE or SOURCE/data)")


def quality_rounds(turns: list[dict[str, Any]], duration: float) -> tuple[list[dict[str, Any]],
                                                                           int]:
    """The ``mtr`` rounds of one clip's ``filtered_turn`` list (user spans in order, windows to
    the next user turn's end) and how many turns were dropped (empty, outside the audio, or
    overlapping the previous one)."""
    spans: list[tuple[float, float]] = []
    dropped = 0
    for t in turns:
        s, e = float(t["start"]), float(t["end"])
        if e <= s or s < 0 or e > duration + 1e-3 or (spans and s < spans[-1][1]):
            dropped += 1
            continue
        spans.append((s, min(e, duration)))
    rounds = []
    for k, (s, e) in enumerate(spans):
        end = spans[k + 1][1] if k + 1 < len(spans) else duration
        rounds.append({"round": k + 1, "features": ["smooth"], "user_span": [s, e],
                       "window": [s, end]})
    return rounds, dropped


def _clip(root: Path, record: dict[str, Any], out: Path, swap: bool,
          where: tuple[Path, int]) -> tuple[Dialogue, int]:
    clip = str(record["id"])
    mp3 = root / AUDIO_DIR / f"{clip}.mp3"
    if not mp3.is_file():
        source_error(where[0], where[1], f"no audio {AUDIO_DIR / (clip + '.mp3')} for id {clip!r}")
    audio, rate = read_audio(mp3)
    if audio.shape[1] != 2:
        source_error(mp3, None, f"expected stereo audio, got {audio.shape[1]} channel(s)")
    if swap:
        audio = audio[:, ::-1]
    wav = out / "audio" / f"{clip}.wav"
    wav.parent.mkdir(parents=True, exist_ok=True)
    write_audio(wav, np.ascontiguousarray(audio), rate)
    duration = len(audio) / rate
    rounds, dropped = quality_rounds(list(record["filtered_turn"]), duration)
    activity = ActivityOptions(engine=VadEngine.SILERO)
    spans = {ch: detect_activity(np.ascontiguousarray(audio[:, ch]), rate, activity)
             for ch in (0, 1)}
    extra = {"mtr": {"version": 1, "group": "dialogue_quality", "label": "quality",
                     "user_channel": 0, "rounds": rounds},
             "source": {"corpus": "MTR-DuplexBench", "id": clip, "user_side":
                        "right" if swap else "left"}}
    dialogue = Dialogue(id=clip, events=tuple(annotate_spans(spans, AnnotationRules())),
                        audio=AudioInfo(wav, rate, len(audio), 2), language="en",
                        domain="chat", extra=extra)
    return dialogue, dropped


def _run(args: argparse.Namespace, staging: Path) -> str:
    root = _root(Path(args.source))
    path = root / TURNS_FILE
    dialogues, dropped = [], 0
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads_json(line)
            if not isinstance(record.get("filtered_turn"), list) or "id" not in record:
                raise ValueError("needs 'id' and a list 'filtered_turn'")
            dialogue, n = _clip(root, record, staging, args.user_side == "right", (path, no))
        except (json.JSONDecodeError, ValueError, KeyError, TypeError) as exc:
            source_error(path, no, f"not a dialogue-quality line ({exc})")
        dialogues.append(dialogue)
        dropped += n
    if not dialogues:
        source_error(path, None, "no dialogue")
    write_dataset(staging, args.split, dialogues, {"name": "mtr-dialogue-quality",
                                                   "language": "en", "domain": "chat"})
    rounds = sum(len(d.extra["mtr"]["rounds"]) for d in dialogues)
    return (f"{len(dialogues)} dialogue(s), {rounds} round(s)"
            + (f"; {dropped} turn(s) dropped (empty or overlapping)" if dropped else ""))


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user-side", choices=["left", "right"], default="left",
                   help="the stereo side of the user (MTR's README: left; its quality script "
                        "reads right)")


RECIPE = Recipe(name="mtr", help="MTR-DuplexBench's dialogue-quality clips and their rounds",
                source_help="the MTR data folder (Dialogue_Quality/, Scenarios_encoding/)",
                add_arguments=_arguments, run=_run)
