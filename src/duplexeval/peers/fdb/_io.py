"""Reading Full-Duplex-Bench v1/v1.5 sample folders the way its evaluators do, and writing
the re-scoring's two output files.

A sample folder holds ``output.json`` (ASR word chunks of ``output.wav``:
``{"text": ..., "chunks": [{"text": w, "timestamp": [start, end]}, ...]}``, seconds, either
time may be null), ``turn_taking.json`` or ``interrupt.json`` (a one-element list whose
``timestamp`` is ``[start, end]`` in seconds), ``output.wav`` and, for v1.5, ``input.wav``.

Speech segments: where FDB runs Silero VAD (the backchannel task and v1.5 timing), a
``vad_segments.json`` in the sample folder (:mod:`.vad_segments`, real seconds of the wav)
replaces it.  Without one, our Silero engine runs (:data:`FDB_VAD_OPTIONS`), which differs
from FDB's ``silero_vad.get_speech_timestamps`` defaults as follows: the model is the Silero
v6 ONNX shipped in faster-whisper, not the ``silero_vad`` package's; the 0.5 / 0.35
hysteresis, 100 ms minimum silence and 250 ms minimum speech are applied to whole-signal
probabilities rather than by Silero's streaming state machine; the 30 ms padding is added
afterwards by :func:`silero_padding` (halving gaps under 60 ms, as Silero does).  Segment
boundaries may therefore move by a window (32 ms) or so.

FDB's backchannel call passes no sampling rate (Silero assumes 16 kHz) and asks for seconds
(rounded to 0.1 s): :func:`as_fdb_backchannel_seconds` reproduces both in compat mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._audio import AudioReadError, read_audio
from duplexeval._audio import audio_info as wav_info
from duplexeval._fileio import atomic_write_json, atomic_write_text, json_line, read_json
from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing._fdb_rules import Word
from duplexeval.peers._vad_segments import VAD_SEGMENTS_FILE, read_vad_segments
from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity
from duplexeval.timeline import Span

__all__ = ["FDB_VAD_OPTIONS", "PER_SAMPLE_FILE", "SILERO_ASSUMED_RATE", "AudioInfo",
           "as_fdb_backchannel_seconds", "audio_info", "on_16k_grid", "read_chunks",
           "read_event_time",
           "read_reference_distribution", "silero_padding", "speech_segments", "write_outputs"]

PER_SAMPLE_FILE = "per_sample.jsonl"
"""One JSON line per sample, ``{"sample": <folder>, ...}`` with FDB's metric names."""
AGGREGATE_FILE = "aggregate.json"
"""The aggregate under the names FDB's evaluators print."""
SILERO_ASSUMED_RATE = 16_000
"""The rate Silero assumes when ``get_speech_timestamps`` is given none (Hz)."""
SILERO_PAD_S = 0.030
"""Silero's default ``speech_pad_ms`` (seconds)."""
FDB_VAD_OPTIONS = ActivityOptions(engine=VadEngine.SILERO, silero_threshold=0.5,
                                  silero_min_silence_ms=100.0, refine=False,
                                  min_speech_ms=250.0)
"""Our VAD settings nearest FDB's Silero defaults (see the module docstring)."""


def _number_or_null(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                             and math.isfinite(value))


def read_chunks(path: Path) -> list[Word]:
    """The word chunks of an ``output.json``; a missing or malformed file is a one-line
    :class:`DuplexevalError` naming it."""
    data = read_json(path, "FDB output.json (ASR word chunks)")
    chunks = data.get("chunks") if isinstance(data, dict) else None
    if not isinstance(chunks, list):
        raise DuplexevalError(f"{path}: expected an object with a 'chunks' list")
    words = []
    for i, chunk in enumerate(chunks):
        stamp = chunk.get("timestamp") if isinstance(chunk, dict) else None
        if not (isinstance(stamp, list) and len(stamp) == 2
                and all(_number_or_null(t) for t in stamp)):
            raise DuplexevalError(f"{path}: chunks[{i}].timestamp must be [start, end] "
                                  "(seconds or null)")
        text = chunk.get("text", "")
        if not isinstance(text, str):
            raise DuplexevalError(f"{path}: chunks[{i}].text must be a string")
        words.append(Word(text, stamp[0], stamp[1]))
    return words


def read_event_time(path: Path, index: int) -> float:
    """``data[0]["timestamp"][index]`` of a ``turn_taking.json`` (index 0: the event start,
    which FDB calls ``input_end_time``) or an ``interrupt.json`` (index 1: its end)."""
    data = read_json(path, "FDB event annotation")
    first = data[0] if isinstance(data, list) and data else None
    stamp = first.get("timestamp") if isinstance(first, dict) else None
    if not (isinstance(stamp, list) and len(stamp) > index and stamp[index] is not None
            and _number_or_null(stamp[index])):
        raise DuplexevalError(f"{path}: expected [{{'timestamp': [start, end], ...}}] with "
                              "times in seconds")
    return stamp[index]


@dataclass(frozen=True)
class AudioInfo:
    """A wav's ``frames`` (samples per channel), ``rate`` (Hz) and ``channels``."""

    frames: int
    rate: int
    channels: int

    @property
    def duration(self) -> float:
        """``frames / rate`` seconds (FDB's ``wav.shape[-1] / sr``)."""
        return self.frames / self.rate


def audio_info(path: Path) -> AudioInfo:
    """The header of a wav; missing or unreadable is a one-line error naming it."""
    if not path.is_file():
        raise DuplexevalError(f"{path}: not found")
    try:
        info = wav_info(path)
    except AudioReadError as exc:
        raise DuplexevalError(f"{path}: not a readable audio file ({exc.reason})") from None
    return AudioInfo(int(info.frames), int(info.sample_rate), int(info.channels))


def silero_padding(spans: list[Span], duration_s: float, pad_s: float = SILERO_PAD_S
                   ) -> list[Span]:
    """Silero's padding: each segment grows by ``pad_s`` on both sides (within the audio);
    where two segments are closer than ``2 * pad_s``, each takes half of the gap instead."""
    out = [[s.start, s.end] for s in sorted(spans)]
    for i, seg in enumerate(out):
        if i == 0:
            seg[0] = max(0.0, seg[0] - pad_s)
        if i + 1 < len(out):
            gap = out[i + 1][0] - seg[1]
            half = gap / 2 if gap < 2 * pad_s else pad_s
            seg[1] += half
            out[i + 1][0] = max(0.0, out[i + 1][0] - half)
        else:
            seg[1] = min(duration_s, seg[1] + pad_s)
    return [Span(a, b) for a, b in out]


def _run_vad(wav: Path) -> list[Span]:
    try:
        x, rate = read_audio(wav)
    except AudioReadError as exc:
        raise DuplexevalError(f"{wav}: not a readable audio file ({exc.reason})") from None
    if x.shape[1] != 1:
        raise DuplexevalError(f"{wav}: {x.shape[1]} channels; FDB's Silero call takes mono "
                              f"audio (or give {VAD_SEGMENTS_FILE})")
    spans = detect_activity(x[:, 0], int(rate), FDB_VAD_OPTIONS)
    return silero_padding(spans, len(x) / rate)


def speech_segments(folder: Path, wav_name: str) -> tuple[list[Span], str]:
    """Speech segments of ``folder/wav_name`` in seconds, and where they came from
    (``"vad_segments.json"`` or ``"silero"``, our VAD)."""
    given = folder / VAD_SEGMENTS_FILE
    if given.is_file():
        spans = read_vad_segments(given, wav_name)
        if spans is not None:
            return spans, VAD_SEGMENTS_FILE
    return _run_vad(folder / wav_name), "silero"


def as_fdb_backchannel_seconds(spans: list[Span], info: AudioInfo) -> list[Span]:
    """What ``eval_backchannel.py``'s ``get_speech_timestamps(wav, model,
    return_seconds=True)`` makes of speech at ``spans`` (real seconds).

    Silero counts samples of the file as given (boundaries on the file's sample grid, here
    ``round(t * rate)``) but, passed no rate, divides them by 16000 whatever the file's rate
    (a 24 kHz file's times come out 1.5 times too late); seconds are rounded to 0.1 and the
    end clipped to ``frames / 16000``."""
    limit = info.frames / SILERO_ASSUMED_RATE
    out = []
    for seg in spans:
        start = max(round(round(seg.start * info.rate) / SILERO_ASSUMED_RATE, 1), 0)
        end = min(round(round(seg.end * info.rate) / SILERO_ASSUMED_RATE, 1), limit)
        if end >= start:
            out.append(Span(start, end))
    return out


def on_16k_grid(spans: list[Span]) -> list[Span]:
    """``get_timing.py``'s segment times: Silero's sample indices at 16 kHz (FDB resamples to
    16 kHz first) divided by 16000, so ``round(t * 16000) / 16000``.  The same float
    arithmetic matters: a gap of 9600 samples is exactly 0.6 s and merges at 0.6."""
    rate = SILERO_ASSUMED_RATE
    return [Span(round(s.start * rate) / rate, round(s.end * rate) / rate) for s in spans]


def read_reference_distribution(path: Path | None) -> dict[str, list[float]]:
    """A reference distribution file in the shape of FDB's ``icc_gt_distribution.json``:
    ``{"<sample folder>": [p0, p1, ...], ...}`` (at least 2 numbers each)."""
    if path is None:
        raise DuplexevalError("--task backchannel needs --reference-distribution FILE (FDB's "
                              "icc_gt_distribution.json, per-item reference distributions)")
    data = read_json(path, "reference distribution file")
    if not isinstance(data, dict):
        raise DuplexevalError(f"{path}: expected an object of sample -> list of numbers")
    for key, values in data.items():
        if not (isinstance(values, list) and len(values) >= 2
                and all(_number_or_null(v) and v is not None for v in values)):
            raise DuplexevalError(f"{path}: {key!r} must be a list of at least 2 numbers")
    return data


def write_outputs(out_dir: Path, rows: list[dict[str, Any]], aggregate: dict[str, Any]) -> None:
    """``OUT_DIR/per_sample.jsonl`` and ``OUT_DIR/aggregate.json``, each written atomically."""
    atomic_write_text(out_dir / PER_SAMPLE_FILE, "".join(json_line(r) for r in rows))
    atomic_write_json(out_dir / AGGREGATE_FILE, aggregate)
