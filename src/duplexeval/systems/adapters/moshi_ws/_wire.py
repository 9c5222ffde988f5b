"""The Moshi / PersonaPlex ``/api/chat`` wire format (moshi 0.2.13 ``server.py``, PersonaPlex).

Every WebSocket message is binary; its first byte is the kind:

=====  =========  ==============================================================================
kind   direction  payload
=====  =========  ==============================================================================
0x00   s -> c     handshake (no payload): the server has reset its state (and, for PersonaPlex,
                  run its voice and text prompts) and will now consume audio
0x01   both       Ogg-encapsulated Opus at 24 kHz mono: the first page of a stream carries the
                  OpusHead and OpusTags headers; then one page per packet (``sphn``'s stream
                  writer makes one 80 ms page per 1920-sample append)
0x02   s -> c     a UTF-8 text piece (the model's inner-monologue token, ``▁`` already a space)
0x03   both       control (web client and Rust server only; the Python server ignores it)
0x04   s -> c     metadata (JSON)
0x05   s -> c     error (UTF-8 message)
0x06   both       ping
0x07   s -> c     coloured text
=====  =========  ==============================================================================

The Opus codec is ``sphn`` (the ``servers`` extra): its stream reader does not apply the
header's pre-skip, so decoded audio lags the encoded audio by the encoder's look-ahead
(156 samples = 6.5 ms at 24 kHz, the peak of an impulse through sphn 0.2.1; 312 at Opus's 48 kHz)
in each direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from duplexeval.systems._base import SystemFailure

__all__ = ["AUDIO", "ERROR", "HANDSHAKE", "SAMPLE_RATE", "TEXT", "Message", "OpusCodec",
           "audio_message", "parse"]

SAMPLE_RATE = 24000
"""Hz: Mimi's rate, the rate of both audio directions."""

HANDSHAKE, AUDIO, TEXT, CONTROL, METADATA, ERROR, PING, COLORED_TEXT = range(8)
_IGNORED = {CONTROL, METADATA, PING}
_NAMES = {HANDSHAKE: "handshake", AUDIO: "audio", TEXT: "text", CONTROL: "control",
          METADATA: "metadata", ERROR: "error", PING: "ping", COLORED_TEXT: "coloured text"}


@dataclass(frozen=True)
class Message:
    """One parsed server message: its kind and payload (Ogg bytes for audio, ``str`` for
    text and errors, ``None`` for the handshake and ignored kinds)."""

    kind: int
    payload: bytes | str | None = None

    @property
    def name(self) -> str:
        return _NAMES.get(self.kind, f"kind 0x{self.kind:02x}")


def parse(message: Any) -> Message:
    """One received WebSocket message as a :class:`Message`; anything that is not a message
    of the protocol (a text frame, an empty or unknown-kind binary frame, text that is not
    UTF-8) raises :class:`~duplexeval.systems._base.SystemFailure` naming what was wrong."""
    if isinstance(message, str):
        raise SystemFailure(f"garbage from the server: a text frame ({len(message)} "
                            "characters) where the protocol has only binary frames")
    if not message:
        raise SystemFailure("garbage from the server: an empty binary frame")
    kind, payload = message[0], bytes(message[1:])
    if kind in (TEXT, ERROR, COLORED_TEXT):
        try:
            return Message(kind, payload.decode("utf-8"))
        except UnicodeDecodeError:
            raise SystemFailure(f"garbage from the server: a {_NAMES[kind]} message that is "
                                "not UTF-8") from None
    if kind == AUDIO:
        return Message(kind, payload)
    if kind == HANDSHAKE or kind in _IGNORED:
        return Message(kind)
    raise SystemFailure(f"garbage from the server: unknown message kind 0x{kind:02x} "
                        f"({len(message)} bytes)")


def audio_message(ogg: bytes) -> bytes:
    """The client's audio message for a chunk of Ogg-Opus bytes."""
    return bytes([AUDIO]) + ogg


class OpusCodec:
    """One direction pair of Ogg-Opus streams at 24 kHz (``sphn``): ``encode`` one 1920-sample
    float32 frame to Ogg bytes, ``decode`` Ogg bytes to float32 PCM.  A fresh codec per
    connection, as the server makes one writer and one reader per connection."""

    def __init__(self) -> None:
        try:
            import sphn
        except ImportError:
            raise SystemFailure("the moshi-ws system needs sphn: pip install "
                                "'duplexeval[servers]'") from None
        self._writer = sphn.OpusStreamWriter(SAMPLE_RATE)
        self._reader = sphn.OpusStreamReader(SAMPLE_RATE)

    def encode(self, frame: np.ndarray) -> bytes:
        """Ogg bytes for one frame (the first call's bytes start with the stream headers)."""
        return bytes(self._writer.append_pcm(np.ascontiguousarray(frame, dtype=np.float32)))

    def decode(self, ogg: bytes) -> np.ndarray:
        """PCM decoded from ``ogg`` (possibly empty); bytes that are not Ogg-Opus fail."""
        try:
            pcm = self._reader.append_bytes(ogg)
        except Exception as exc:  # sphn raises ValueError on a broken stream
            raise SystemFailure(f"garbage from the server: undecodable Ogg-Opus audio "
                                f"({type(exc).__name__}: {exc})") from None
        return np.asarray(pcm, dtype=np.float32).reshape(-1)
