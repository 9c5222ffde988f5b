"""The wire-audio helpers of the JSON WebSocket adapters: PCM16 base64 and the streaming
resampler (exact frame lengths, a constant sub-millisecond delay, anti-aliasing)."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from duplexeval.systems import SystemFailure
from duplexeval.systems.realtime._pcm import StreamResampler, decode_pcm16, encode_pcm16, mime_rate


def test_pcm16_round_trip_and_garbage() -> None:
    x = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 2.0], np.float32)
    y = decode_pcm16(encode_pcm16(x))
    assert np.allclose(y, np.clip(x, -1, 1), atol=1 / 32768 + 1e-6)
    assert base64.b64decode(encode_pcm16(np.array([0.5], np.float32))) == (16383).to_bytes(
        2, "little", signed=True)
    with pytest.raises(SystemFailure, match="not base64"):
        decode_pcm16("***")
    with pytest.raises(SystemFailure, match="odd length"):
        decode_pcm16(base64.b64encode(b"abc").decode())
    with pytest.raises(SystemFailure, match="not a base64 string"):
        decode_pcm16(None)
    assert mime_rate("audio/pcm;rate=24000", 16000) == 24000
    assert mime_rate("audio/pcm", 16000) == 16000
    with pytest.raises(SystemFailure, match="not audio/pcm"):
        mime_rate("audio/opus", 16000)


def test_24_to_16_khz_frames_are_exact_and_delayed_by_a_constant() -> None:
    r = StreamResampler(24000, 16000)
    t = np.arange(48000) / 24000
    x = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    frames = [r(x[k:k + 480]) for k in range(0, len(x), 480)]
    assert {len(f) for f in frames} == {320}  # nothing held back between 20 ms frames
    y = np.concatenate(frames)
    assert r.delay_s < 0.0005
    ref = 0.5 * np.sin(2 * np.pi * 440 * (np.arange(len(y)) / 16000 - r.delay_s))
    assert np.max(np.abs(y[200:] - ref[200:])) < 0.002
    # a 10 kHz tone has no place below 8 kHz: it is filtered, not folded to 6 kHz
    r = StreamResampler(24000, 16000)
    alias = np.concatenate([r(s) for s in np.split(
        (0.5 * np.sin(2 * np.pi * 10000 * t)).astype(np.float32), 100)])
    assert np.sqrt(np.mean(alias[400:] ** 2)) < 0.01


def test_an_odd_ratio_keeps_the_total_length() -> None:
    r = StreamResampler(22050, 24000)
    x = np.zeros(22050, np.float32)
    total = sum(len(r(x[k:k + 777])) for k in range(0, len(x), 777))
    assert abs(total - 24000) <= 1
    assert np.array_equal(StreamResampler(24000, 24000)(x[:5]), x[:5])
