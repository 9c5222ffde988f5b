"""Derived voices (WORLD pitch and formant shift) and the measures that tell voices apart, on
synthetic vowels whose F0 and formants are known by construction."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import lfilter

from conftest import needs_extra
from duplexeval.speech._voice_features import (
    formants,
    median_f0,
    mfcc_distance,
    mfcc_mean,
    semitones_apart,
    voice_profile,
)
from duplexeval.speech._voice_shift import VoiceShift, shift_voice, warp_frequency

pytestmark = needs_extra("tts-en")  # pyworld ships in the tts-en extra

RATE = 16_000


def vowel(f0: float, formants_hz: tuple[float, ...], seconds: float = 1.5,
          rate: int = RATE) -> np.ndarray:
    """A pulse train at ``f0`` through two-pole resonators at ``formants_hz`` (bandwidth 80 Hz),
    with a slow 5 % vibrato so that the pitch trackers see a voice, peak 0.5."""
    n = round(seconds * rate)
    t = np.arange(n) / rate
    phase = np.cumsum(f0 * (1 + 0.05 * np.sin(2 * np.pi * 3 * t)) / rate)
    x = (np.diff(np.floor(phase), prepend=0.0) > 0).astype(np.float64)
    for f in formants_hz:
        r = np.exp(-np.pi * 80.0 / rate)
        x = lfilter([1.0], [1.0, -2 * r * np.cos(2 * np.pi * f / rate), r * r], x)
    return (0.5 * x / np.max(np.abs(x))).astype(np.float32)


def test_warp_frequency_moves_a_peak_by_the_factor() -> None:
    # bins:      0 1 2 3 4 5 6 7 8 9
    # envelope:  . . . . # . . . . .   peak at bin 4
    # x 1.5:     . . . . . . # . . .   bin k takes bin k / 1.5: the peak lands on bin 6
    env = np.zeros((1, 10))
    env[0, 4] = 1.0
    assert int(np.argmax(warp_frequency(env, 1.5)[0])) == 6
    assert int(np.argmax(warp_frequency(env, 0.5)[0])) == 2
    assert np.array_equal(warp_frequency(env, 1.0), env)
    # past the last bin the last bin's value
    assert warp_frequency(np.arange(10.0)[None], 0.5)[0, -1] == 9.0


def test_voice_shift_validates_its_factors() -> None:
    assert VoiceShift(1.6, 1.15).semitones == pytest.approx(8.137, abs=1e-3)
    assert VoiceShift(2.0, 1.0).semitones == pytest.approx(12.0)
    for bad in (0.0, -1.0, float("nan"), float("inf"), 5.0):
        with pytest.raises(ValueError):
            VoiceShift(bad, 1.0)
        with pytest.raises(ValueError):
            VoiceShift(1.0, bad)


def test_measures_recover_a_known_vowel() -> None:
    x = vowel(120.0, (700.0, 1200.0, 2600.0))
    f0 = median_f0(x, RATE)
    assert f0 is not None and f0 == pytest.approx(120.0, rel=0.03)
    f1, f2, f3 = formants(x, RATE)
    assert f1 == pytest.approx(700.0, rel=0.1) and f2 == pytest.approx(1200.0, rel=0.1)
    assert f3 == pytest.approx(2600.0, rel=0.1)
    assert median_f0(np.zeros(RATE, np.float32), RATE) is None
    assert semitones_apart(240.0, 120.0) == pytest.approx(12.0)
    assert semitones_apart(120.0, 240.0) == pytest.approx(12.0)


def test_shift_moves_pitch_and_formants_and_keeps_length() -> None:
    x = vowel(120.0, (700.0, 1200.0, 2600.0))
    y = shift_voice(x, RATE, VoiceShift(pitch=1.6, formant=1.15))
    assert y.dtype == np.float32 and len(y) == len(x)
    assert float(np.max(np.abs(y))) == pytest.approx(float(np.max(np.abs(x))), rel=1e-5)
    assert shift_voice(x, RATE, VoiceShift(1.6, 1.15)).tobytes() == y.tobytes()  # deterministic
    f0 = median_f0(y, RATE)
    assert f0 is not None and f0 == pytest.approx(192.0, rel=0.05)
    f1, f2, _ = formants(y, RATE)
    assert f1 is not None and f2 is not None
    assert f2 == pytest.approx(1200.0 * 1.15, rel=0.1)
    same = shift_voice(x, RATE, VoiceShift(1.0, 1.0))
    assert median_f0(same, RATE) == pytest.approx(median_f0(x, RATE), rel=0.02)
    assert formants(same, RATE)[1] == pytest.approx(f2 / 1.15, rel=0.1)
    assert not shift_voice(np.zeros(800, np.float32), RATE, VoiceShift(1.6, 1.15)).any()


def test_mfcc_distance_separates_vocal_tracts_not_pitch_alone() -> None:
    a = vowel(120.0, (700.0, 1200.0, 2600.0))
    b = vowel(125.0, (700.0, 1200.0, 2600.0), seconds=1.2)  # the same tract, other F0 and length
    c = vowel(120.0, (800.0, 1400.0, 3000.0))  # a shorter tract
    same, other = mfcc_distance(mfcc_mean(a, RATE), mfcc_mean(b, RATE)), \
        mfcc_distance(mfcc_mean(a, RATE), mfcc_mean(c, RATE))
    assert other > 3 * same
    profile = voice_profile(a, RATE)
    assert profile.seconds == pytest.approx(1.5)
    assert profile.to_json()["f0_hz"] == pytest.approx(120.0, rel=0.03)
    assert len(profile.to_json()["mfcc_mean"]) == 12
