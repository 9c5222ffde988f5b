"""Voice activity per channel: speech spans (seconds) from one channel of audio.

Engines
-------
``energy``  RMS of consecutive ``frame_ms`` frames against ``threshold_db`` below the channel's
            loudest frame (and never below ``floor_dbfs``).  Exact to one frame on clean speech,
            the right choice for synthetic and system-output channels.
``webrtc``  WebRTC VAD (``webrtcvad-wheels``), audio resampled to 16 kHz with soxr.
``silero``  Silero v6 ONNX, the model that ships inside faster-whisper (extra ``[asr]``), on
            audio resampled to 16 kHz: it decides *where* there is speech (robust to noise and
            non-speech sounds) in 32 ms windows.  Its boundaries come late at onsets (median
            +16 ms, p95 60 ms on clip-bank speech) and later at offsets, so by default each region
            is refined with a ``frame_ms`` energy detector whose threshold is relative to the
            channel's loudest frame and above its noise level (``refine_*`` options)::

                signal       ____▁▃██▇█▅▃▁______
                silero          |-----------|        32 ms windows, late
                energy runs    |--------|            10 ms frames
                result         |--------|

            Measured on clip-bank speech with known intervals (``perf/vad_accuracy.py``):
            97-98 % of onsets and offsets within 50 ms of the audible clip extent, against
            78-80 % for Silero alone; 0.2-0.8 % of the items (0.1-0.15 s cuts) are missed.
            About 15-20 s per hour of two-channel audio on 2 cores (``vad_speed.py``).

A span covers whole frames: ``[i * hop, j * hop]`` seconds for active frames ``i .. j-1``
(Silero regions without an energy run keep 32 ms windows), clipped to the audio length.  Spans
are sorted and do not overlap.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from duplexeval.errors import DuplexevalError
from duplexeval.timeline import Span, merge_spans

__all__ = ["ActivityOptions", "VadEngine", "detect_activity", "detect_activity_many"]


class VadEngine(StrEnum):
    """Available voice activity engines."""

    ENERGY = "energy"
    WEBRTC = "webrtc"
    SILERO = "silero"


@dataclass(frozen=True)
class ActivityOptions:
    """Settings of :func:`detect_activity` (recorded with every result that uses them)."""

    engine: VadEngine = VadEngine.ENERGY
    frame_ms: float = 10.0
    """Frame length in milliseconds (energy; webrtc accepts 10, 20 or 30)."""
    threshold_db: float = 40.0
    """energy: a frame is speech when its RMS is within this many dB of the loudest frame."""
    floor_dbfs: float = -60.0
    """energy: frames quieter than this (dB full scale) are never speech."""
    webrtc_mode: int = 2
    """webrtc aggressiveness, 0 (least) to 3 (most)."""
    silero_threshold: float = 0.5
    """silero: speech probability (0-1) that starts speech."""
    silero_neg_threshold: float | None = None
    """silero: probability below which speech ends (default ``silero_threshold - 0.15``)."""
    silero_min_silence_ms: float = 100.0
    """silero: silences shorter than this (milliseconds) do not split speech."""
    refine: bool = True
    """silero: move each region's boundaries to the energy onset and offset (see below)."""
    refine_threshold_db: float = 50.0
    """silero refinement: a ``frame_ms`` frame is active when its RMS is within this many dB of
    the channel's loudest frame, ..."""
    refine_floor_dbfs: float = -70.0
    """silero refinement: ... above this level (dB full scale), ..."""
    noise_margin_db: float = 6.0
    """silero refinement: ... and this many dB above the channel's noise level (the median frame
    level outside Silero's regions)."""
    refine_bridge_ms: float = 100.0
    """silero refinement: active frames less than this (milliseconds) apart form one run."""
    refine_search_ms: float = 300.0
    """silero refinement: a boundary moves at most this far (milliseconds) outward."""
    rescue_threshold: float | None = None
    """silero refinement: a run that no Silero region overlaps is speech when Silero's
    probability reaches this (0-1) inside it; ``None`` (default): never.  It recovers some very
    short items (0.1-0.15 s) that Silero misses, but isolated tones reach 0.3-0.47 too."""
    rescue_min_ms: float = 50.0
    """silero refinement: ... and the run lasts at least this long (milliseconds)."""
    min_speech_ms: float = 0.0
    """Drop speech spans shorter than this."""


def _runs(active: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` index runs of True values."""
    padded = np.concatenate([[False], active.astype(bool), [False]])
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _energy(x: np.ndarray, sr: int, opts: ActivityOptions) -> tuple[np.ndarray, float]:
    hop = max(1, round(sr * opts.frame_ms / 1000.0))
    n = len(x) // hop
    if n == 0:
        return np.zeros(0, dtype=bool), hop / sr
    frames = x[: n * hop].reshape(n, hop).astype(np.float64)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    peak = float(rms.max())
    threshold = max(peak * 10 ** (-opts.threshold_db / 20), 10 ** (opts.floor_dbfs / 20))
    return rms > threshold, hop / sr


def _webrtc(x: np.ndarray, sr: int, opts: ActivityOptions) -> tuple[np.ndarray, float]:
    import soxr
    import webrtcvad

    if opts.frame_ms not in (10.0, 20.0, 30.0):
        raise DuplexevalError("webrtc VAD frames must be 10, 20 or 30 ms")
    x16 = soxr.resample(x.astype(np.float32), sr, 16000) if sr != 16000 else x
    pcm = (np.clip(x16, -1.0, 1.0) * 32767).astype("<i2")
    hop = int(16000 * opts.frame_ms / 1000)
    vad = webrtcvad.Vad(opts.webrtc_mode)
    n = len(pcm) // hop
    active = np.array(
        [vad.is_speech(pcm[i * hop:(i + 1) * hop].tobytes(), 16000) for i in range(n)], dtype=bool
    )
    return active, hop / 16000


_SILERO_RATE = 16_000
_SILERO_WINDOW = 512  # samples at 16 kHz (32 ms) per Silero speech probability
_SILERO_BLOCK = 10_000  # windows per model call (320 s): bounds memory on long audio


def _silero_probs(x16: np.ndarray) -> np.ndarray:
    """Silero v6 speech probability of every 32 ms window of 16 kHz audio (zero-padded)."""
    try:
        from faster_whisper.vad import get_vad_model
    except ImportError as exc:
        raise DuplexevalError(
            "the silero VAD needs faster-whisper: pip install 'duplexeval[asr]'") from exc
    from duplexeval.speech._onnx import onnxruntime

    n = -(-len(x16) // _SILERO_WINDOW)
    if not np.any(x16):  # digital silence (a silent system's channel): the model finds no
        return np.zeros(n, dtype=np.float32)  # speech there (tested), so it is not run
    onnxruntime()  # telemetry off before its session is made
    model = get_vad_model()
    padded = np.zeros(n * _SILERO_WINDOW, dtype=np.float32)
    padded[:len(x16)] = x16
    block = _SILERO_BLOCK * _SILERO_WINDOW
    out = [np.asarray(model(padded[i:i + block]), dtype=np.float32).reshape(-1)
           for i in range(0, len(padded), block)]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


def _silero_regions(probs: np.ndarray, opts: ActivityOptions) -> list[tuple[int, int]]:
    """``[start, stop)`` window runs of speech: hysteresis, then short silences closed.

    A run of windows with probability >= ``silero_neg_threshold`` is speech when it reaches
    ``silero_threshold`` somewhere; runs separated by less than ``silero_min_silence_ms`` merge.
    """
    neg = (opts.silero_neg_threshold if opts.silero_neg_threshold is not None
           else max(opts.silero_threshold - 0.15, 0.01))
    runs = [(a, b) for a, b in _runs(probs >= neg) if probs[a:b].max() >= opts.silero_threshold]
    min_gap = opts.silero_min_silence_ms / 1000 * _SILERO_RATE / _SILERO_WINDOW
    merged: list[tuple[int, int]] = []
    for a, b in runs:
        if merged and a - merged[-1][1] < min_gap:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def _frame_db(x: np.ndarray, hop: int) -> np.ndarray:
    """RMS level (dB full scale) of consecutive ``hop``-sample frames (a partial last one too)."""
    full = len(x) // hop
    frames = x[: full * hop].reshape(full, hop)
    power = np.einsum("ij,ij->i", frames, frames, dtype=np.float64) / hop
    if len(x) > full * hop:
        rest = x[full * hop:].astype(np.float64)
        power = np.append(power, np.mean(rest**2))
    with np.errstate(divide="ignore"):
        return 10 * np.log10(power)


def _silero(x: np.ndarray, sr: int, opts: ActivityOptions) -> list[Span]:
    import soxr

    x32 = x.astype(np.float32)
    x16 = soxr.resample(x32, sr, _SILERO_RATE) if sr != _SILERO_RATE else x32
    probs = _silero_probs(x16)
    duration = len(x) / sr
    step = _SILERO_WINDOW / _SILERO_RATE
    regions = [Span(a * step, min(b * step, duration)) for a, b in _silero_regions(probs, opts)]
    if not opts.refine or len(x) == 0:
        return [r for r in regions if r]
    return _refine(x32, sr, regions, probs, opts)


def _refine(x: np.ndarray, sr: int, regions: list[Span], probs: np.ndarray,
            opts: ActivityOptions) -> list[Span]:
    """Move each Silero region's boundaries to where the signal energy starts and stops.

    Frames of ``frame_ms`` are active when their RMS level is above the highest of: the
    channel's loudest frame minus ``refine_threshold_db``, ``refine_floor_dbfs``, and the noise
    level (median frame level outside the Silero regions) plus ``noise_margin_db``.  Active
    frames less than ``refine_bridge_ms`` apart form runs; a region becomes the hull of the runs
    that overlap it, at most ``refine_search_ms`` beyond its Silero boundaries.  A region that no
    run overlaps stays as Silero found it.  A run that no region overlaps, at least
    ``rescue_min_ms`` long, where Silero's probability reaches ``rescue_threshold``, is speech
    too (short backchannels that Silero's hysteresis misses).
    """
    hop = max(1, round(sr * opts.frame_ms / 1000.0))
    level = _frame_db(x, hop)
    frame_s = hop / sr
    bounds = [(int(r.start / frame_s), min(len(level), int(np.ceil(r.end / frame_s))))
              for r in regions]
    runs = _energy_runs(level, bounds, opts)
    starts = np.array([a for a, _ in runs], dtype=np.int64)
    search = round(opts.refine_search_ms / opts.frame_ms)
    duration = len(x) / sr
    used = np.zeros(len(runs), dtype=bool)
    out: list[Span] = []
    for (a, b), region in zip(bounds, regions, strict=True):
        # runs overlapping [a, b): those starting before b and ending after a
        hi = int(np.searchsorted(starts, b, side="left"))
        lo = hi
        while lo > 0 and runs[lo - 1][1] > a:
            lo -= 1
        if lo == hi:
            out.append(region)
            continue
        used[lo:hi] = True
        start = max(runs[lo][0], a - search)
        stop = min(runs[hi - 1][1], b + search)
        out.append(Span(start * frame_s, min(stop * frame_s, duration)))
    if opts.rescue_threshold is not None:
        out += _rescued([r for r, taken in zip(runs, used, strict=True) if not taken], probs,
                        frame_s, duration, opts)
    return merge_spans(s for s in out if s)


def _energy_runs(level: np.ndarray, bounds: list[tuple[int, int]], opts: ActivityOptions,
                 ) -> list[tuple[int, int]]:
    """Runs ``[a, b)`` of active frames (bridged), given frame levels (dB) and the Silero
    regions as frame bounds (see :func:`_refine` for the threshold)."""
    speech = np.zeros(len(level), dtype=bool)
    for a, b in bounds:
        speech[a:b] = True
    threshold = max(float(level.max()) - opts.refine_threshold_db, opts.refine_floor_dbfs)
    if (~speech).any():
        threshold = max(threshold, float(np.median(level[~speech])) + opts.noise_margin_db)
    bridge = round(opts.refine_bridge_ms / opts.frame_ms)
    runs: list[tuple[int, int]] = []
    for a, b in _runs(level > threshold):
        if runs and a - runs[-1][1] < bridge:
            runs[-1] = (runs[-1][0], b)
        else:
            runs.append((a, b))
    return runs


def _rescued(runs: list[tuple[int, int]], probs: np.ndarray, frame_s: float, duration: float,
             opts: ActivityOptions) -> list[Span]:
    """Energy runs outside every Silero region that are speech after all: at least
    ``rescue_min_ms`` long where Silero's probability reaches ``rescue_threshold``."""
    assert opts.rescue_threshold is not None
    window_s = _SILERO_WINDOW / _SILERO_RATE
    min_frames = opts.rescue_min_ms / opts.frame_ms
    out = []
    for a, b in runs:
        if b - a < min_frames:
            continue
        wa, wb = int(a * frame_s / window_s), int(np.ceil(b * frame_s / window_s))
        if wa < len(probs) and probs[wa:wb].max() >= opts.rescue_threshold:
            out.append(Span(a * frame_s, min(b * frame_s, duration)))
    return out


def detect_activity(
    x: np.ndarray, sample_rate: int, options: ActivityOptions = ActivityOptions()
) -> list[Span]:
    """Speech spans of one channel ``x`` (float samples in [-1, 1]) at ``sample_rate`` Hz."""
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError("detect_activity takes one channel (a 1-D array)")
    duration = len(x) / sample_rate
    if options.engine == VadEngine.SILERO:
        spans = _silero(x, sample_rate, options)
    else:
        detector = _energy if options.engine == VadEngine.ENERGY else _webrtc
        active, hop = detector(x, sample_rate, options)
        spans = [Span(a * hop, min(b * hop, duration)) for a, b in _runs(active)]
    min_len = options.min_speech_ms / 1000.0
    return [s for s in spans if s.duration >= min_len and s.duration > 0]


def detect_activity_many(items: Sequence[tuple[np.ndarray, int]],
                         options: ActivityOptions = ActivityOptions(),
                         threads: int = 1) -> list[list[Span]]:
    """:func:`detect_activity` of each ``(channel samples, sample rate)``, in order, on up to
    ``threads`` threads.  Silero's session runs one intra-op thread and onnxruntime releases
    the GIL while it runs, so two threads on two cores take about half the wall time of one;
    each channel is computed on its own, so the spans are those of one thread."""
    if threads <= 1 or len(items) < 2:
        return [detect_activity(x, rate, options) for x, rate in items]
    with ThreadPoolExecutor(max_workers=min(threads, len(items)),
                            thread_name_prefix="vad") as pool:
        return list(pool.map(lambda item: detect_activity(item[0], item[1], options), items))

