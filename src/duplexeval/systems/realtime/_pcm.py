"""PCM16 audio for JSON WebSocket APIs, and a streaming resampler for their wire rates.

Wire audio is base64 of 16-bit signed little-endian mono samples (``audio/pcm``); session audio
is float32 in [-1, 1].  :class:`StreamResampler` converts a stream cut into frames with a causal
polyphase FIR (a Hamming-windowed sinc of :data:`TAPS_PER_PHASE` taps per phase, cut off at 0.9
of the lower Nyquist rate): it holds nothing back, so each frame of ``n`` input samples gives
``n * out_rate / in_rate`` output samples (exactly, for frames that are a whole number of
rate periods: 480 samples at 24 kHz give 320 at 16 kHz), and it delays the signal by a constant
:attr:`StreamResampler.delay_s` (0.32 ms at 24 to 16 kHz).  soxr's streaming resampler was
measured holding back a varying 97-585 samples at 16 kHz (6-37 ms) between 20 ms frames at its
default quality: a jitter on the input timeline a real-time client must not add.
"""

from __future__ import annotations

import base64
import binascii
from math import gcd

import numpy as np
from scipy.signal import firwin

from duplexeval.systems._base import SystemFailure

__all__ = ["ENCODERS", "TAPS_PER_PHASE", "StreamResampler", "decode_pcm16", "encode_f32le",
           "encode_pcm16", "mime_rate"]


def encode_pcm16(x: np.ndarray) -> str:
    """float32 [-1, 1] as base64 PCM16 little-endian (clipped)."""
    return base64.b64encode((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes()).decode()


def encode_f32le(x: np.ndarray) -> str:
    """float32 as base64 32-bit float little-endian (``pcm_f32le``)."""
    return base64.b64encode(np.asarray(x, dtype="<f4").tobytes()).decode()


ENCODERS = {"pcm16": encode_pcm16, "pcm_f32le": encode_f32le}
"""Wire encodings by their Realtime ``format`` names."""


def decode_pcm16(text: object) -> np.ndarray:
    """base64 PCM16 little-endian as float32; anything else fails as garbage."""
    if not isinstance(text, str):
        raise SystemFailure("garbage from the server: audio data that is not a base64 string")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SystemFailure("garbage from the server: audio data that is not base64") from None
    if len(raw) % 2:
        raise SystemFailure(f"garbage from the server: {len(raw)} bytes of PCM16 (odd length)")
    return np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0


def mime_rate(mime: object, default: int) -> int:
    """The ``rate`` of an ``audio/pcm;rate=N`` MIME type (``default`` when it names none);
    another audio type fails."""
    if not isinstance(mime, str) or not mime.startswith("audio/pcm"):
        raise SystemFailure(f"garbage from the server: audio of type {mime!r}, not audio/pcm")
    for part in mime.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key == "rate":
            try:
                return int(value)
            except ValueError:
                raise SystemFailure(f"garbage from the server: audio type {mime!r}") from None
    return default


TAPS_PER_PHASE = 16
"""Filter taps per polyphase branch (the filter is ``TAPS_PER_PHASE * up`` taps long)."""


class StreamResampler:
    """Mono float32 from ``in_rate`` to ``out_rate`` Hz, one chunk at a time (identity when
    the rates are equal); output sample ``j`` is the filtered input at time ``j / out_rate``
    minus :attr:`delay_s`."""

    def __init__(self, in_rate: int, out_rate: int) -> None:
        self.in_rate, self.out_rate = in_rate, out_rate
        g = gcd(in_rate, out_rate)
        self.up, self.down = out_rate // g, in_rate // g
        taps = TAPS_PER_PHASE * self.up
        cutoff = 0.9 / max(self.up, self.down)
        h = firwin(taps, cutoff) * self.up if self.up * self.down > 1 else np.ones(1)
        self._phases = np.stack([h[p::self.up] for p in range(self.up)]).astype(np.float64)
        self.delay_s = (len(h) - 1) / 2 / (in_rate * self.up)
        self._history = np.zeros(self._phases.shape[1] - 1, dtype=np.float64)
        self._consumed = 0
        """Input samples before ``_history``'s end."""
        self._produced = 0
        """Output samples returned so far."""

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32).reshape(-1)
        if self.up == self.down:
            return x.copy()
        buffer = np.concatenate([self._history, x])
        total = self._consumed + len(x)
        # output j needs the upsampled stream up to index j * down, i.e. input floor(j*down/up)
        stop = (total * self.up - 1) // self.down + 1 if total else 0
        js = np.arange(self._produced, stop)
        positions = js * self.down
        phase = positions % self.up
        newest = positions // self.up - (total - len(buffer))  # index into buffer
        span = self._phases.shape[1]
        window = buffer[newest[:, None] - np.arange(span)[None, :]]
        y = np.einsum("ij,ij->i", window, self._phases[phase])
        self._produced = stop
        self._consumed = total
        self._history = buffer[len(buffer) - (span - 1):] if span > 1 else buffer[:0]
        return y.astype(np.float32)
