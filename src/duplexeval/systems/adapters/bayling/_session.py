"""One ``bayling-duplex`` session: BayLing-Duplex's streaming API, block by block, in process
(clock ``frame``).

Rates and frames: the session's native rate is the model's output rate, 22.05 kHz; a frame is
80 ms (1764 samples, one WhisperVQ token); a block is ``x`` frames (``interleave_ratio``
``x:y:z``, 10:5:10 by default, so 0.8 s).  The user audio is kept at 22.05 kHz and resampled
to 16 kHz (soxr) for the tokenizer, window by window (:mod:`.tokens`).

Per block ``b`` (at the end of its last frame)::

    user      |---- block 0 ----|---- block 1 ----|---- block 2 ----|    0.8 s each
    model                       ^ tokens of block 0 in: y text tokens, z audio tokens out
    decoder                       chunk 0 = decode(audio tokens of block 0), streaming
    output    . . . . . . . . . . . . . . . . |<- D ->| chunk 0 | chunk 1 | chunk 2 ...
              0                 0.8 s            0.8 s + H

* tokens: :func:`.tokens.block_tokens` (causal: the audio heard so far);
* model: ``stream_audio_tokens(tokens, state, temperature, top_p, silence_penalty,
  max_epad_count)`` on the session's ``DuplexStreamState`` (its KV cache, tokens, counters);
  text pieces are returned on the block's last frame;
* audio: ``stream_tokens_to_audio(audio_tokens, stream_id)`` decodes the block's audio tokens
  with the streaming flow + HiFT decoder, which holds back the end of each chunk to cross-fade
  it with the next (``H`` = 34 mel frames + 256 samples, 0.41 s, for the GLM-4-Voice
  decoder).  The chunks play back to back from ``D = time_offset + H`` (``time_offset`` = 0.8 s,
  the model's own block delay, which the M3 wrapper prepends as silence); ``H`` is measured
  on the first chunk (nominal 0.8 s minus the samples it returned).  A chunk is never placed
  before the end of the block that produced it.

The M3 wrapper decodes all audio tokens at once after the whole file, with look-ahead across
blocks, and prepends only ``time_offset``: its replies start ``H`` earlier than here, where
nothing is decoded before its tokens exist.  After ``max_epad_count`` end-of-response tokens
(50 by default, as in M3; the model's own default is 1) the model stops: its last block is
decoded with ``finalize`` (the held-back end is flushed) and the rest is silence.

Snapshot: a deep copy of the stream state (the KV cache included), the user audio of the open
tokenizer windows, the queued output, the text log, the decoder's per-stream caches (the
``mel_overlap_dict`` and ``hift_cache_dict`` entries of the session's stream id in
``bayling_duplex_runtime/flow_inference.py``'s ``AudioDecoder``) and, when the model module
uses torch, torch's random state (sampling draws from torch's global generator); restore
copies it again, so a snapshot can be restored any number of times.  ``reseed`` seeds torch.
"""

from __future__ import annotations

import copy
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import soxr

from duplexeval.systems._base import Forced, Session, StepOutput, SystemFailure
from duplexeval.systems.adapters.bayling._tokens import HOP, WINDOW, block_tokens

__all__ = ["BayLingSession", "Sampling"]

IN_RATE = 16000
OUT_RATE = 22050
FRAME = 1764
"""Samples per 80 ms frame at 22.05 kHz."""
TOKEN_RATE = 12.5
_DECODER_CACHES = ("mel_overlap_dict", "hift_cache_dict")


@dataclass(frozen=True)
class Sampling:
    """``stream_audio_tokens``' sampling arguments."""

    temperature: float = 0.8
    top_p: float = 0.8
    silence_penalty: float = 0.0
    max_epad_count: int = 50


@dataclass
class _State:
    """Everything a session changes (copied whole by snapshot)."""

    stream: Any
    frames: int = 0
    audio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """User audio at 22.05 kHz from session sample ``origin`` (a tokenizer window start)."""
    origin: int = 0
    """In 16 kHz samples."""
    queued: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """Output at 22.05 kHz from session sample ``queued_from`` on."""
    queued_from: int = 0
    place_at: int | None = None
    hold_back: int | None = None
    text: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    replies: list[int] = field(default_factory=list)
    """Session samples where decoded audio chunks were placed."""


class BayLingSession(Session):
    """See the module docstring."""

    def __init__(self, model: Any, sampling: Sampling, seed: int) -> None:
        self.model, self.sampling = model, sampling
        self.block_frames = int(model.x_ratio)
        self.stream_id = f"duplexeval-{uuid.uuid4()}"
        self.reseed(seed)
        self._s = _State(stream=model.create_stream_state())

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        s = self._s
        s.audio = np.concatenate([s.audio, np.asarray(user, dtype=np.float32)])
        s.frames += 1
        text = ""
        if s.frames % self.block_frames == 0:
            try:
                text = self._block(s.frames // self.block_frames - 1)
            except SystemFailure:
                raise
            except Exception as exc:  # the model's own errors (CUDA OOM, shapes) fail the sample
                raise SystemFailure(f"block {s.frames // self.block_frames - 1}: "
                                    f"{type(exc).__name__}: {exc}") from None
        start = (s.frames - 1) * FRAME - s.queued_from
        out = np.zeros(FRAME, np.float32)
        piece = s.queued[max(0, start):start + FRAME]
        out[:len(piece)] = piece
        drop = max(0, s.frames * FRAME - s.queued_from)
        s.queued, s.queued_from = s.queued[drop:], s.queued_from + drop
        return StepOutput(out, text)

    def _block(self, b: int) -> str:
        s = self._s
        x = self.block_frames
        audio16 = _fit(soxr.resample(s.audio, OUT_RATE, IN_RATE).astype(np.float32),
                       x * (b + 1) * HOP - s.origin)
        tokens = block_tokens(self._tokenize, audio16, s.origin, x * b, x)
        s.tokens.extend(tokens)
        texts: list[str] = []
        audio_tokens: list[int] = []
        p = self.sampling
        for event in self.model.stream_audio_tokens(
                tokens, state=s.stream, temperature=p.temperature, top_p=p.top_p,
                silence_penalty=p.silence_penalty, max_epad_count=p.max_epad_count):
            if event.kind == "text" and event.text:
                texts.append(event.text)
            elif event.kind == "audio":
                audio_tokens.extend(event.audio_tokens)
        now = s.frames * FRAME
        if texts:
            s.text.append({"sample": now, "text": "".join(texts)})
        if audio_tokens:  # the stream's last block flushes what the decoder holds back
            last = bool(getattr(s.stream, "stop_requested", False))
            self._place(self._decode(audio_tokens, finalize=last), len(audio_tokens), now)
        window = (x * (b + 1) * HOP // WINDOW) * WINDOW
        if window > s.origin:  # the next block starts in a later window: forget the old one
            s.audio = s.audio[(window - s.origin) * 441 // 320:]
            s.origin = window
        return "".join(texts)

    def _tokenize(self, audio16: np.ndarray) -> list[int]:
        tokens, _ = self.model.tokenize_audio((_waveform(audio16), IN_RATE))
        return [int(t) for t in tokens]

    def _decode(self, audio_tokens: list[int], finalize: bool) -> np.ndarray:
        speech = self.model.stream_tokens_to_audio(audio_tokens, self.stream_id,
                                                   finalize=finalize)
        return _numpy(speech).reshape(-1).astype(np.float32)

    def _place(self, chunk: np.ndarray, tokens: int, now: int) -> None:
        """Queue a decoded chunk at the playhead (see the module docstring)."""
        s = self._s
        if s.place_at is None:
            s.hold_back = round(tokens / TOKEN_RATE * OUT_RATE) - len(chunk)
            s.place_at = round(self.model.time_offset * OUT_RATE) + s.hold_back
        at = max(s.place_at, now)
        end = at + len(chunk)
        if end - s.queued_from > len(s.queued):
            grown = np.zeros(end - s.queued_from, np.float32)
            grown[:len(s.queued)] = s.queued
            s.queued = grown
        s.queued[at - s.queued_from:end - s.queued_from] = chunk
        s.place_at = end
        if np.any(chunk):
            s.replies.append(at)

    def snapshot(self) -> Any:
        return {"state": copy.deepcopy(self._s), "decoder": self._decoder_caches(),
                "rng": _rng_state()}

    def restore(self, state: Any) -> None:
        self._s = copy.deepcopy(state["state"])
        decoder = getattr(self.model, "decoder", None)
        for name, value in state["decoder"].items():
            table = getattr(decoder, name)
            if value is None:
                table.pop(self.stream_id, None)
            else:
                table[self.stream_id] = copy.deepcopy(value)
        _set_rng_state(state["rng"])

    def _decoder_caches(self) -> dict[str, Any]:
        decoder = getattr(self.model, "decoder", None)
        found = {}
        for name in _DECODER_CACHES:
            table = getattr(decoder, name, None)
            if table is not None:
                found[name] = copy.deepcopy(dict.get(table, self.stream_id))
        return found

    def reseed(self, seed: int) -> None:
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.manual_seed(seed)

    def trace(self) -> dict[str, Any]:
        s = self._s
        stream = s.stream
        return {"sample_rate": OUT_RATE, "text": s.text, "bayling": {
            "blocks": s.frames // self.block_frames, "tokens": s.tokens,
            "hold_back_samples": s.hold_back, "chunks_at": s.replies,
            "stopped": bool(getattr(stream, "stop_requested", False)),
            "assistant_count": getattr(stream, "assistant_count", None),
            "epad_count": getattr(stream, "epad_count", None)}}

    def close(self) -> None:
        decoder = getattr(self.model, "decoder", None)
        for name in _DECODER_CACHES:
            table = getattr(decoder, name, None)
            if table is not None:
                table.pop(self.stream_id, None)


def _fit(x: np.ndarray, n: int) -> np.ndarray:
    """``x`` trimmed or zero-padded at its end to ``n`` samples (resampler rounding)."""
    if len(x) >= n:
        return x[:n]
    return np.concatenate([x, np.zeros(n - len(x), np.float32)])


def _waveform(audio16: np.ndarray) -> Any:
    """``[1, T]`` audio as ``load_audio`` takes it: a torch tensor when the model module runs
    on torch (the real one), else a numpy array."""
    torch = sys.modules.get("torch")
    batch = audio16[None, :].copy()
    return torch.from_numpy(batch) if torch is not None else batch


def _numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy()
    return np.asarray(x, dtype=np.float32)


def _rng_state() -> Any:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return {"cpu": torch.get_rng_state(), "cuda": cuda}


def _set_rng_state(state: Any) -> None:
    torch = sys.modules.get("torch")
    if torch is None or state is None:
        return
    torch.set_rng_state(state["cpu"])
    if state["cuda"] is not None:
        torch.cuda.set_rng_state_all(state["cuda"])
