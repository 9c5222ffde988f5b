"""``m3-toy-ja-voiced``: the official M3 toy annotations with synthesized Japanese speech.

Every stretch of words without a silence of 0.1 s or more inside it (a "chunk": an IPU, or
part of one where it pauses) is spoken by OpenJTalk and fitted to its aligned span: first at a
speed that brings the synthesized duration close to the span, then resampled to the span's
exact length, so the audio carries the official timing and text.  Events and words are the
official ones, unchanged.  Voices: ``mei-high`` on channel 0, ``mei`` on channel 1.

:func:`annotation_round_trip` annotates the voiced audio from voice activity alone and reports
how many official TURN_SHIFT events it recovers within 100 ms.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import soxr
from tqdm import tqdm

from duplexeval._audio import read_audio, write_audio
from duplexeval.data._dialogue import AudioInfo, Dataset, Dialogue, Word
from duplexeval.data._locate import find_m3_toy
from duplexeval.data._m3 import audio_path, write_dataset
from duplexeval.data._validate import load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.events import EventKind
from duplexeval.speech._tts import load_engine
from duplexeval.synth._word_timing import speech_bounds

__all__ = ["CHUNK_GAP", "annotation_round_trip", "voice_toy"]

CHUNK_GAP = 0.1
"""Silences of at least this (seconds) between words split a chunk."""
RATE = 16000
VOICES = ("mei-high", "mei")
TOY_SETS = ("chat/magicdata_toy", "task/topiocqa_ja_toy")


def _chunks(words: list[Word]) -> list[list[Word]]:
    out: list[list[Word]] = []
    for w in words:
        if w.end <= w.start:
            continue
        if out and w.start - out[-1][-1].end < CHUNK_GAP:
            out[-1].append(w)
        else:
            out.append([w])
    return out


def _spoken(engine: Any, text: str, voice: str, speed: float = 1.0) -> tuple[np.ndarray, int]:
    """The engine's speech for ``text``, trimmed to its speech, and its sample rate."""
    utt = engine.synthesize(text, voice, speed)
    a, b = speech_bounds(utt.audio, utt.sample_rate)
    return utt.audio[a:b], utt.sample_rate


def _fitted(engine: Any, text: str, voice: str, seconds: float) -> np.ndarray:
    """``text`` spoken to last exactly ``seconds`` (at :data:`RATE`)."""
    n = max(1, round(seconds * RATE))
    first, rate = _spoken(engine, text, voice)
    natural = len(first) / rate
    speed = float(np.clip(natural / seconds, 0.5, 2.5)) if seconds > 0 else 1.0
    audio = first if abs(speed - 1.0) < 0.03 else _spoken(engine, text, voice, speed)[0]
    if len(audio) == 0:
        return np.zeros(n, np.float32)
    # resample to exactly n samples: the residual stretch changes the pitch a little
    out = soxr.resample(audio, len(audio), n).astype(np.float32) if len(audio) > 1 else audio
    if len(out) < n:
        out = np.pad(out, (0, n - len(out)))
    out = out[:n].copy()
    fade = min(len(out) // 2, RATE // 200)
    if fade:
        ramp = np.linspace(0, 1, fade, dtype=np.float32)
        out[:fade] *= ramp
        out[-fade:] *= ramp[::-1]
    return out


def voice_dialogue(dialogue: Dialogue, engine: Any) -> np.ndarray:
    """Stereo float32 audio (samples, 2) at :data:`RATE` with every chunk voiced in place."""
    n = round((dialogue.annotation_end + 1.0) * RATE)
    audio = np.zeros((n, 2), dtype=np.float32)
    for channel in (0, 1):
        for chunk in _chunks(dialogue.words_on(channel)):
            text = "".join(w.text for w in chunk)
            a, b = round(chunk[0].start * RATE), round(chunk[-1].end * RATE)
            audio[a:b, channel] = _fitted(engine, text, VOICES[channel], (b - a) / RATE)[:b - a]
    peak = float(np.abs(audio).max())
    if peak > 0.99:
        audio *= 0.99 / peak
    return audio


def find_toy() -> Path:
    """The official M3 toy data folder; :class:`DuplexevalError` when it is absent."""
    toy = find_m3_toy()
    if toy is None:
        raise DuplexevalError("the official M3 toy data was not found: set DUPLEXEVAL_M3_TOY to "
                              "its ja/ folder")
    return toy


def voice_toy(out: Path, progress: bool = True, limit: int | None = None) -> Dataset:
    """Voice every toy dialogue (both sets; the first ``limit`` if given) into one dataset at
    ``out``."""
    toy = find_toy()
    engine = load_engine("openjtalk")
    dialogues: list[Dialogue] = []
    sources = [load_dataset(toy / rel)[0] for rel in TOY_SETS]
    todo = [(ds, d) for ds in sources for d in ds.dialogues][:limit]
    for ds, d in tqdm(todo, desc="voicing m3 toy", unit="dialogue", file=sys.stderr,
                      disable=not progress):
        audio = voice_dialogue(d, engine)
        target = audio_path(out, d.id)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_audio(target, audio, RATE, subtype="PCM_16")
        dialogues.append(Dialogue(id=d.id, events=d.events, channel_order=d.channel_order,
                                  words=d.words, audio=AudioInfo(target, RATE, len(audio), 2),
                                  language="ja", domain=ds.domain, extra=d.extra))
    write_dataset(out, "test", dialogues, {
        "name": "m3-toy-ja-voiced", "language": "ja", "domain": "mixed",
        "description": "Official M3-DuplexBench toy annotations, voiced chunk by chunk with "
                       "OpenJTalk fitted to the aligned spans (third-party annotations)",
        "tts": engine.settings()})
    return load_dataset(out)[0]


def annotation_round_trip(dataset: Dataset, tolerance: float = 0.1) -> dict[str, Any]:
    """Annotate the voiced audio from voice activity (energy VAD) and count the official
    TURN_SHIFT events recovered: same channel, start and end within ``tolerance`` s."""
    from duplexeval.events import annotate_spans
    from duplexeval.speech._activity import detect_activity

    total = found = 0
    for d in dataset.dialogues:
        if d.audio is None:
            continue
        x, rate = read_audio(d.audio.path)
        spans = {ch: detect_activity(x[:, ch], rate) for ch in (0, 1)}
        derived = [e for e in annotate_spans(spans) if e.kind == EventKind.TURN_SHIFT]
        for e in d.events:
            if e.kind != EventKind.TURN_SHIFT:
                continue
            total += 1
            found += any(o.channel == e.channel and abs(o.start - e.start) <= tolerance
                         and abs(o.end - e.end) <= tolerance for o in derived)
    return {"turn_shift_events": total, "recovered_within_100ms": found,
            "rate": found / total if total else None}
