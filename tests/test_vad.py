"""Voice activity engines on real speech (clip bank) at hand-placed intervals."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import soxr

from duplexeval.speech import _activity
from duplexeval.speech._activity import (
    ActivityOptions,
    VadEngine,
    detect_activity,
    detect_activity_many,
)
from duplexeval.speech._clipbank import ClipBank, fill_span
from duplexeval.timeline import Span

pytest.importorskip("faster_whisper", reason="needs the asr extra: pip install duplexeval[asr]")

SR = 16_000
SILERO = ActivityOptions(engine=VadEngine.SILERO)


def audible(clip: np.ndarray) -> tuple[int, int]:
    """``[first, last + 1)``: samples within 50 dB of the clip's peak (its audible extent)."""
    loud = np.flatnonzero(np.abs(clip) >= np.abs(clip).max() * 10 ** (-50 / 20))
    return int(loud[0]), int(loud[-1]) + 1


def placed(noise_dbfs: float | None = -65.0) -> tuple[np.ndarray, list[Span]]:
    """Four clip-bank items at hand-placed times in 6 s of 16 kHz audio, and their truth.

    ::

        t (s)  0    0.5       1.0       1.5       2.0       2.5       3.0  ...   4.5   5.0  5.3  6.0
               |    |=====en_000 "Sure, I can help..."=====|  |en_015|  |==ja_003==| |cut|    |
                    0.50                          2.06  2.40  2.71 3.30      4.50 5.00 5.30
                                                        "Yeah."     まだ試して   ja_007 cut to 0.3 s

    The truth of an item is its audible extent (trimmed TTS lead-in/tail, 10-30 ms).
    """
    bank = ClipBank.load()
    items = [
        (0.50, bank.get("en_000").audio),
        (2.40, bank.get("en_015").audio),
        (3.30, bank.get("ja_003").audio),
        (5.00, fill_span(bank.get("ja_007").audio, round(0.3 * SR), SR)),
    ]
    x = np.zeros(6 * SR, dtype=np.float32)
    truth = []
    for start, clip in items:
        a = round(start * SR)
        x[a:a + len(clip)] = clip
        lead, tail = audible(clip)
        truth.append(Span((a + lead) / SR, (a + tail) / SR))
    if noise_dbfs is not None:
        x += np.random.default_rng(0).normal(0, 10 ** (noise_dbfs / 20), len(x)).astype(np.float32)
    return x, truth


def boundary_errors(spans: list[Span], truth: list[Span]) -> list[tuple[float, float]]:
    """(onset error, offset error) per truth item from the spans overlapping it."""
    out = []
    for item in truth:
        hits = [s for s in spans if s.overlaps(item)]
        assert hits, f"missed {item}"
        out.append((hits[0].start - item.start, hits[-1].end - item.end))
    return out


@pytest.mark.parametrize("noise", [None, -65.0])
def test_silero_refined_boundaries_within_50ms(noise: float | None) -> None:
    x, truth = placed(noise)
    spans = detect_activity(x, SR, SILERO)
    errors = boundary_errors(spans, truth)
    assert all(abs(on) <= 0.05 and abs(off) <= 0.05 for on, off in errors), errors
    # no speech outside the items
    assert all(any(s.overlaps(t) for t in truth) for s in spans), spans


def test_refinement_beats_raw_silero_onsets() -> None:
    x, truth = placed()
    raw = boundary_errors(detect_activity(x, SR, ActivityOptions(engine=VadEngine.SILERO,
                                                                 refine=False)), truth)
    refined = boundary_errors(detect_activity(x, SR, SILERO), truth)
    assert sum(abs(on) for on, _ in refined) < sum(abs(on) for on, _ in raw)


def test_silero_at_24khz_matches_16khz() -> None:
    x, truth = placed()
    x24 = soxr.resample(x, SR, 24_000).astype(np.float32)
    errors = boundary_errors(detect_activity(x24, 24_000, SILERO), truth)
    assert all(abs(on) <= 0.05 and abs(off) <= 0.05 for on, off in errors), errors


def test_webrtc_fallback_on_24khz_speech() -> None:
    x, truth = placed()
    x24 = soxr.resample(x, SR, 24_000).astype(np.float32)
    spans = detect_activity(x24, 24_000, ActivityOptions(engine=VadEngine.WEBRTC))
    errors = boundary_errors(spans, truth)
    # onsets are sharp; WebRTC holds speech ~100 ms after it ends (its hangover)
    assert all(abs(on) <= 0.05 and -0.05 <= off <= 0.15 for on, off in errors), errors


@pytest.mark.parametrize("engine", list(VadEngine))
@pytest.mark.parametrize("sr", [16_000, 24_000])
def test_empty_and_silent_input_give_no_spans(engine: VadEngine, sr: int) -> None:
    opts = ActivityOptions(engine=engine)
    assert detect_activity(np.zeros(0, dtype=np.float32), sr, opts) == []
    assert detect_activity(np.zeros(100, dtype=np.float32), sr, opts) == []
    assert detect_activity(np.zeros(2 * sr, dtype=np.float32), sr, opts) == []


def test_silero_is_not_run_on_digital_silence_and_would_find_nothing_there() -> None:
    """An all-zero channel (a silent system's) gets probability 0 without running Silero;
    the model itself, run on it, stays far below the speech threshold, so the spans are the
    same (none)."""
    from faster_whisper.vad import get_vad_model

    for sr in (16_000, 24_000):
        assert detect_activity(np.zeros(3 * sr, dtype=np.float32), sr, SILERO) == []
    zeros = np.zeros(3 * 16_000 // 512 * 512, dtype=np.float32)
    probs = np.asarray(get_vad_model()(zeros.copy())).reshape(-1)
    assert len(probs) == len(zeros) // 512
    assert float(probs.max()) < SILERO.silero_threshold - 0.15  # the default end threshold
    assert not _activity._silero_probs(zeros).any()


def test_many_channels_on_two_threads_give_each_channel_s_own_spans() -> None:
    """``detect_activity_many`` on two threads: the spans of one ``detect_activity`` call per
    channel, in order (speech, noise, silence, a 24-kHz copy)."""
    speech, _ = placed()
    noise = np.random.default_rng(1).normal(0, 0.01, 3 * SR).astype(np.float32)
    at24 = soxr.resample(speech, SR, 24_000).astype(np.float32)
    items = [(speech, SR), (noise, SR), (np.zeros(SR, dtype=np.float32), SR), (at24, 24_000),
             (speech[::-1].copy(), SR)]
    alone = [detect_activity(x, sr, SILERO) for x, sr in items]
    assert alone[0] and alone[2] == []
    assert detect_activity_many(items, SILERO, threads=2) == alone
    assert detect_activity_many(items, SILERO, threads=1) == alone


def test_silero_ignores_steady_noise_and_a_tone() -> None:
    rng = np.random.default_rng(3)
    t = np.arange(4 * SR) / SR
    noise = rng.normal(0, 10 ** (-40 / 20), 4 * SR).astype(np.float32)
    tone = np.where((t > 1) & (t < 1.4), 0.1 * np.sin(2 * np.pi * 440 * t), 0).astype(np.float32)
    assert detect_activity(noise, SR, SILERO) == []
    assert detect_activity(tone, SR, SILERO) == []


def test_rescue_finds_a_short_item_that_silero_misses() -> None:
    # 0.1 s of speech alone on the channel; Silero's probability peaks at about 0.5 there
    bank = ClipBank.load()
    x = np.zeros(3 * SR, dtype=np.float32)
    clip = fill_span(bank.get("ja_000").audio, round(0.1 * SR), SR)
    x[SR:SR + len(clip)] = clip
    lead, tail = audible(clip)
    truth = [Span((SR + lead) / SR, (SR + tail) / SR)]
    strict = ActivityOptions(engine=VadEngine.SILERO, silero_threshold=0.9)
    assert SILERO.rescue_threshold is None
    assert detect_activity(x, SR, strict) == []
    rescued = detect_activity(x, SR, replace(strict, rescue_threshold=0.2))
    errors = boundary_errors(rescued, truth)
    assert all(abs(on) <= 0.05 and abs(off) <= 0.05 for on, off in errors), errors
