"""Speech recognition with word timestamps (faster-whisper, extra ``[asr]``).

Conventions
-----------
* Input audio is one channel of float samples in [-1, 1] at any rate; it is resampled to
  16 kHz (soxr) for Whisper.
* Word times are seconds from the start of the audio given, ``0 <= start < end <= duration``.
* Words are Whisper's words with surrounding spaces removed.  English words keep attached
  punctuation (``"Sure,"``); words made only of punctuation are dropped.  Japanese words come
  from :func:`merge_japanese_pieces` (no punctuation).
* Decoding is deterministic: temperature 0 only (no fallback), beam search, no conditioning on
  previous text, Whisper's own VAD off, and CPU kernels pinned (:mod:`.kernels`), so that the
  same audio gives the same words on any x86-64 machine, process or thread count.

Regions
-------
``transcribe(..., regions=spans)`` runs Whisper only on the given speech regions (e.g. from
:func:`duplexeval.speech._activity.detect_activity`)::

    regions         |--a--|   |-b-|                 |--c--|
    chunks         [----a-------b---]             [---c---]
    words            w w w     w w                  w w

Each region is padded by ``region_pad`` (0.2 s) on both sides; padded regions at most
``merge_gap`` (0.3 s) apart form one chunk.

Chunks are cut out and packed, in order, into windows of at most ``pack_seconds`` (28 s)
with ``pack_gap`` (0.6 s) of silence between them: Whisper works on 30-s windows and costs a
whole window per call, so packing short chunks makes region-restricted ASR many times faster.
:meth:`Transcriber.transcribe_many` packs the chunks of several channels (e.g. every sample of
a run) into shared windows the same way.  (faster-whisper's ``BatchedInferencePipeline`` still
encodes one 30-s window per chunk: on 2 CPU cores it was no faster than one call per chunk, while
shared windows were about 4x faster; ``perf/asr_batching.py``.)
``pack_seconds=0`` transcribes each chunk on its own.  Hallucination guards: at most
``tokens_per_second`` tokens per second of window are decoded, and a segment whose text's
compression ratio exceeds ``max_compression`` (2.4, Whisper's own criterion) is dropped (its own
text's, not the window's: packed chunks that repeat each other's phrases are not a loop).  Each word
belongs to the chunk holding its middle; words are then moved back to the full-audio time base
and clipped to the regions
they overlap (Whisper tends to start the first word of a chunk at its very start), to their
chunk and to the audio.  A chunk whose loudest 10 ms frame is below ``silence_dbfs`` is not
transcribed (Whisper invents words such as "You" on digital silence).

Japanese
--------
For ``ja`` Whisper's "words" are sub-word pieces (``天``, ``気``, ``ですね。``).  The pieces of a
segment are joined into its text, the text is segmented into words with
:func:`duplexeval.speech._japanese.word_spans`, and each word takes the times of its characters:
a piece's time is shared equally among its non-punctuation characters.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from duplexeval.speech import _japanese as japanese
from duplexeval.speech._kernels import kernel_settings
from duplexeval.speech._short_window import WHISPER_WINDOW_S, fits, short_window_text
from duplexeval.speech._whisper_model import (
    PACKAGED,
    faster_whisper_versions,
    load_whisper,
    model_provenance,
)
from duplexeval.timeline import Span, merge_spans

__all__ = ["AsrWord", "Transcriber", "merge_japanese_pieces"]

ASR_RATE = 16_000
MIN_WORD_S = 0.01
"""Words whose clipped span is shorter than this get this length (seconds)."""


@dataclass(frozen=True)
class AsrWord:
    """One recognised word; times in seconds relative to the start of the audio, start < end."""

    start: float
    end: float
    text: str

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start) and math.isfinite(self.end)):
            raise ValueError(f"word times must be finite, got [{self.start}, {self.end}]")
        if not self.start < self.end:
            raise ValueError(f"word {self.text!r} must end after it starts: "
                             f"[{self.start}, {self.end}]")

    @property
    def span(self) -> Span:
        """The word's time span."""
        return Span(self.start, self.end)


class Transcriber:
    """Whisper via faster-whisper; the model is loaded on the first :meth:`transcribe`.

    ``model``: ``"base-packaged"`` (offline default, see
    :mod:`duplexeval.speech._whisper_model`), a faster-whisper size/name or a local CTranslate2
    folder.  ``region_pad`` and ``merge_gap`` are seconds; ``silence_dbfs`` is dB full scale.
    Thread-safe (one lock around the model).
    """

    def __init__(self, model: str = PACKAGED, compute_type: str = "int8", cpu_threads: int = 2,
                 beam_size: int = 5, device: str = "cpu", *, region_pad: float = 0.2,
                 merge_gap: float = 0.3, silence_dbfs: float = -60.0,
                 pack_seconds: float = 28.0, pack_gap: float = 0.6,
                 tokens_per_second: float = 12.0, max_compression: float = 2.4,
                 processes: int = 1) -> None:
        # what a pool worker's transcriber is made with: every argument but the worker count,
        # so that no setting can be left out of the workers
        self._arguments = {k: v for k, v in locals().items() if k not in ("self", "processes")}
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        self.processes = processes
        """Worker processes that decode the windows of one :meth:`transcribe_many` call
        (:mod:`.asr_pool`; 1: this process).  Like ``cpu_threads``, it changes speed only."""
        self._pool: Any = None
        self.model = model
        self.compute_type = compute_type
        self.cpu_threads = cpu_threads
        self.beam_size = beam_size
        self.device = device
        self.region_pad = region_pad
        self.merge_gap = merge_gap
        self.silence_dbfs = silence_dbfs
        self.pack_seconds = pack_seconds
        self.pack_gap = pack_gap
        self.tokens_per_second = tokens_per_second
        self.max_compression = max_compression
        self._whisper: Any = None
        self._lock = threading.Lock()

    def settings(self) -> dict[str, Any]:
        """Everything that changes the output, for cache keys and results provenance.

        Does not load the model.  (``cpu_threads`` and ``processes`` are left out: they change
        speed only.)
        """
        return {
            "engine": "faster-whisper",
            **{f"{k}_version": v for k, v in faster_whisper_versions().items()},
            **model_provenance(self.model),
            "device": self.device,
            "compute_type": self.compute_type,
            "beam_size": self.beam_size,
            "temperature": 0.0,
            "condition_on_previous_text": False,
            "whisper_vad_filter": False,
            "region_pad_s": self.region_pad,
            "merge_gap_s": self.merge_gap,
            "silence_dbfs": self.silence_dbfs,
            "pack_seconds": self.pack_seconds,
            "pack_gap_s": self.pack_gap,
            "tokens_per_second": self.tokens_per_second,
            "max_compression": self.max_compression,
            "compression_of": "segment",
            "sample_rate": ASR_RATE,
            "japanese_segmenter": japanese.segmenter(),
            "cpu_kernels": kernel_settings(),
            "mel_product": "einsum",
        }

    def _model(self) -> Any:
        if self._whisper is None:
            self._whisper = load_whisper(self.model, self.device, self.compute_type,
                                         self.cpu_threads)
        return self._whisper

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str | None,
                   regions: Sequence[Span] | None = None) -> list[AsrWord]:
        """Words of one channel ``audio`` at ``sample_rate`` Hz, sorted by start.

        ``language``: a Whisper language code (``"en"``, ``"ja"``) or ``None`` to detect it per
        chunk.  ``regions``: speech spans in seconds to transcribe (``None``: all the audio).
        """
        return self.transcribe_many([(audio, sample_rate, regions)], language)[0]

    def transcribe_many(self, items: Sequence[tuple[np.ndarray, int, Sequence[Span] | None]],
                        language: str | None) -> list[list[AsrWord]]:
        """:meth:`transcribe` of several channels ``(audio, sample_rate, regions)`` at once.

        Their chunks are packed, in item order, into shared windows: a Whisper call costs a
        whole 30-s window however little speech it holds, so many short regions (e.g. the
        model-backchannel candidates of every sample of a run) cost a few calls instead of one
        each.  Returns each item's words (its own time base), in item order.
        """
        kept: list[tuple[int, Span, np.ndarray]] = []
        cores_of: list[list[Span]] = []
        for index, (audio, sample_rate, regions) in enumerate(items):
            x = _at_asr_rate(audio, sample_rate)
            duration = len(x) / ASR_RATE
            cores = ([Span(0.0, duration)] if regions is None else
                     sorted(s for s in (_clip(r, duration) for r in regions)
                            if s is not None and s))
            cores_of.append(cores)
            if duration > 0:
                kept += [(index, chunk, piece) for chunk, piece in self._chunks(x, cores)]
        words: list[list[AsrWord]] = [[] for _ in items]
        windows = self._windows(kept)
        packed = [self._pack(window) for window in windows]
        decoded = self._decode_all([audio for audio, _ in packed], language)
        for window, (_, offsets), found in zip(windows, packed, decoded, strict=True):
            for w in found:
                # the chunk holding the word's middle; times back to that chunk's base
                mid = (w.start + w.end) / 2 * ASR_RATE
                k = max(0, int(np.searchsorted(offsets, mid, side="right")) - 1)
                index, chunk, _ = window[k]
                base = offsets[k] / ASR_RATE
                local = AsrWord(max(0.0, w.start - base), max(w.end - base, MIN_WORD_S), w.text)
                inside = [s for s in cores_of[index] if s.overlaps(chunk)]
                word = _place(local, chunk, inside)
                if word is not None:
                    words[index].append(word)
        return [sorted(ws, key=lambda w: (w.start, w.end)) for ws in words]

    def _chunks(self, x: np.ndarray, cores: Sequence[Span]) -> list[tuple[Span, np.ndarray]]:
        """The padded, merged regions of ``x`` (16 kHz) around ``cores`` that are not silent,
        with their audio (spans in seconds, on the 16 kHz sample grid)."""
        duration = len(x) / ASR_RATE
        chunks = merge_spans((Span(max(0.0, s.start - self.region_pad),
                                   min(duration, s.end + self.region_pad)) for s in cores),
                             self.merge_gap)
        out = []
        for chunk in chunks:
            a, b = round(chunk.start * ASR_RATE), round(chunk.end * ASR_RATE)
            piece = x[a:b]
            if len(piece) == 0 or _peak_dbfs(piece) < self.silence_dbfs:
                continue
            out.append((Span(a / ASR_RATE, b / ASR_RATE), piece))
        return out

    def _windows(self, chunks: list[tuple[int, Span, np.ndarray]]
                 ) -> list[list[tuple[int, Span, np.ndarray]]]:
        """Consecutive chunks ``(item, span, samples)`` packed into windows of at most
        ``pack_seconds`` (one Whisper window is 30 s; each call costs a whole window whatever
        the chunk's length)."""
        if self.pack_seconds <= 0:
            return [[c] for c in chunks]
        out: list[list[tuple[int, Span, np.ndarray]]] = []
        length = 0.0
        for chunk in chunks:
            seconds = len(chunk[2]) / ASR_RATE
            if out and length + self.pack_gap + seconds <= self.pack_seconds:
                out[-1].append(chunk)
                length += self.pack_gap + seconds
            else:
                out.append([chunk])
                length = seconds
        return out

    def _pack(self, window: list[tuple[int, Span, np.ndarray]]) -> tuple[np.ndarray, list[int]]:
        """A window's chunks in one array, ``pack_gap`` of silence between them, and the
        sample offset of each chunk in it."""
        pieces, offsets = [], []
        at = 0
        sep = np.zeros(round(self.pack_gap * ASR_RATE), np.float32)
        for k, (_, _, piece) in enumerate(window):
            if k:
                pieces.append(sep)
                at += len(sep)
            offsets.append(at)
            pieces.append(piece)
            at += len(piece)
        return np.concatenate(pieces), offsets

    def _decode_all(self, windows: list[np.ndarray], language: str | None,
                    ) -> list[list[AsrWord]]:
        """The words of each packed window: in this process, or spread over the worker
        processes when there are several windows and ``processes`` > 1."""
        from duplexeval.speech._asr_pool import WindowPool, can_fork_workers

        if self.processes <= 1 or len(windows) < 2 or not can_fork_workers():
            return [self.decode_window(w, language) for w in windows]
        with self._lock:
            if self._pool is None:
                self._pool = WindowPool(partial(Transcriber, **self._options(), processes=1),
                                        self.processes)
            pool = self._pool
        return [[AsrWord(*w) for w in found] for found in pool.decode(windows, language)]

    def _options(self) -> dict[str, Any]:
        """The keyword arguments that make this transcriber in a pool worker, with the CPU
        threads shared out, so that the workers use the cores this process would have used."""
        return {**self._arguments, "cpu_threads": max(1, self.cpu_threads // self.processes)}

    def close(self) -> None:
        """Stop the worker processes, if any were started (they restart when needed)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _decode(self, piece: np.ndarray, language: str | None, words: bool,
                ) -> tuple[list[Any], str | None]:
        """Whisper's segments of one window (16 kHz), with word timestamps when ``words``,
        and the language decoded in."""
        from faster_whisper.transcribe import get_compression_ratio

        with self._lock:
            model = self._model()
            limit = max(16, math.ceil(len(piece) / ASR_RATE * self.tokens_per_second))
            segments, info = model.transcribe(
                piece, language=language, task="transcribe", beam_size=self.beam_size,
                temperature=0.0, word_timestamps=words, vad_filter=False,
                condition_on_previous_text=False, max_new_tokens=min(limit, 440))
            # decoding happens while iterating; a segment that repeats itself (Whisper's
            # hallucination loop, compression ratio above the limit) is dropped.  The ratio is
            # the segment's own text's: faster-whisper's ``compression_ratio`` is the whole
            # window's, and a packed window of several chunks that say the same phrases (a
            # system's stock replies) lost every chunk's words to it, real speech included
            kept = [s for s in segments
                    if get_compression_ratio(s.text) <= self.max_compression]
        return kept, language or info.language

    def decode_window(self, piece: np.ndarray, language: str | None) -> list[AsrWord]:
        """Words of one packed window (16 kHz), times relative to it (not yet clipped)."""
        segments, decoded = self._decode(piece, language, words=True)
        out: list[AsrWord] = []
        for segment in segments:
            raw = [(float(w.start), float(w.end), str(w.word)) for w in segment.words or ()]
            if decoded == "ja":
                out.extend(merge_japanese_pieces(raw))
            else:
                out.extend(_loose_word(s, e, t) for s, e, t in raw if _has_text(t))
        return out

    def transcribe_text(self, audio: np.ndarray, sample_rate: int, language: str,
                        window: float = WHISPER_WINDOW_S) -> str:
        """The text of one stretch of speech (a user turn, for a system that listens): the
        audio as :meth:`transcribe` cuts it, decoded without word timestamps (no alignment
        pass: 6-10 % less time a turn on 2 cores).  The tokens are the same, so the text is
        the words :meth:`transcribe` gives, joined, up to spacing and punctuation (the same
        after normalising on the bundled suites' 68 English and 33 Japanese turns).

        ``window`` (seconds, at most 30): a piece that leaves a second of it free is encoded
        in a window that long, padded with silence (:mod:`._short_window`: 20 s is half the
        time of 30 s a turn, at the same word error rate on the bundled suites); a longer
        piece gets Whisper's 30 s."""
        if not 1.0 < window <= WHISPER_WINDOW_S:
            raise ValueError(f"window must be in (1, {WHISPER_WINDOW_S:g}] s, got {window}")
        x = _at_asr_rate(audio, sample_rate)
        texts = []
        for _, piece in self._chunks(x, [Span(0.0, len(x) / ASR_RATE)]):
            if fits(len(piece), window):
                texts.append(self._short_window_text(piece, language, window))
            else:
                texts += [seg.text.strip() for seg in self._decode(piece, language, words=False)[0]]
        return ("" if language == "ja" else " ").join(t for t in texts if _has_text(t))

    def _short_window_text(self, piece: np.ndarray, language: str, window: float) -> str:
        with self._lock:
            limit = max(16, math.ceil(len(piece) / ASR_RATE * self.tokens_per_second))
            return short_window_text(self._model(), piece, language, window,
                                     beam_size=self.beam_size, max_new_tokens=min(limit, 440),
                                     max_compression=self.max_compression)


def _has_text(text: str) -> bool:
    return any(not japanese.is_ignorable(ch) for ch in text)


def _loose_word(start: float, end: float, text: str) -> AsrWord:
    """A word whose times may still be equal (fixed by :func:`_place`)."""
    return AsrWord(start, max(end, start + MIN_WORD_S), text.strip())


def merge_japanese_pieces(pieces: Sequence[tuple[float, float, str]]) -> list[AsrWord]:
    """Japanese words from one segment's Whisper pieces ``(start, end, text)`` in order.

    ``[(0.0, 0.3, "天"), (0.3, 0.5, "気"), (0.5, 1.1, "ですね。")]`` gives ``天気`` [0.0, 0.5],
    ``です`` [0.5, 0.9], ``ね`` [0.9, 1.1]: a piece's time is shared equally among its
    non-punctuation characters, and a word spans its characters.
    """
    text = "".join(p[2] for p in pieces)
    starts = np.zeros(len(text))
    ends = np.zeros(len(text))
    pos = 0
    for start, end, piece in pieces:
        slots = [i for i, ch in enumerate(piece) if not japanese.is_ignorable(ch)]
        step = (end - start) / max(1, len(slots))
        for k, i in enumerate(slots):
            starts[pos + i] = start + k * step
            ends[pos + i] = start + (k + 1) * step
        pos += len(piece)
    words = []
    for a, b in japanese.word_spans(text):
        start, end = float(starts[a]), float(ends[b - 1])
        words.append(AsrWord(start, max(end, start + MIN_WORD_S), text[a:b]))
    return words


def _clip(span: Span, duration: float) -> Span | None:
    start, end = max(0.0, span.start), min(duration, span.end)
    return Span(start, end) if end > start else None


def _at_asr_rate(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """One channel as float32 at 16 kHz (soxr); ``ValueError`` for other shapes or rates."""
    x = np.asarray(audio, dtype=np.float32)
    if x.ndim != 1:
        raise ValueError("transcribe takes one channel (a 1-D array)")
    if sample_rate <= 0:
        raise ValueError(f"sample_rate must be positive, got {sample_rate}")
    if sample_rate != ASR_RATE and len(x):
        import soxr

        x = soxr.resample(x, sample_rate, ASR_RATE).astype(np.float32)
    return x


def _peak_dbfs(x: np.ndarray, frame: int = ASR_RATE // 100) -> float:
    """Level of the loudest ``frame``-sample frame (RMS, dB full scale)."""
    n = len(x) // frame
    frames = x[: n * frame].reshape(n, frame) if n else x[None, :]
    peak = float(np.sqrt(np.mean(frames.astype(np.float64) ** 2, axis=1)).max())
    return 20 * math.log10(peak) if peak > 0 else -math.inf


def _place(word: AsrWord, chunk: Span, regions: Sequence[Span]) -> AsrWord | None:
    """``word`` (chunk-relative) in audio time, clipped to the regions it overlaps and chunk."""
    start, end = word.start + chunk.start, word.end + chunk.start
    start, end = max(start, chunk.start), min(end, chunk.end)
    touching = [r for r in regions if r.start < end and r.end > start]
    if touching:
        start, end = max(start, touching[0].start), min(end, touching[-1].end)
    if end - start < MIN_WORD_S:
        end = min(chunk.end, start + MIN_WORD_S)
        start = min(start, end - MIN_WORD_S)
        if start < chunk.start:
            return None  # a chunk shorter than a word: nothing sensible to report
    return AsrWord(start, end, word.text)
