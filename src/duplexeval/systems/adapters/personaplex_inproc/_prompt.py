"""PersonaPlex's prompt phase: the voice prompt and the text prompt, fed before the dialogue.

As PersonaPlex's ``LMGen.step_system_prompts`` does, every prompt frame gives all streams
(nothing is sampled), in four phases (frames of 80 ms)::

    phase    voice prompt (V)        spacer (6)       text prompt (T)        spacer (6)
    text     PAD PAD ... PAD         PAD ... PAD      <system> persona ...   PAD ... PAD
    system   Mimi codes of the       silence codes    silence codes          silence codes
             voice (or its .pt)
    user     sine codes (440 Hz)     sine codes       sine codes             sine codes
                                                                            dialogue frame 0 ->

The spacer is 0.5 s (``int(0.5 * 12.5)`` = 6 frames); PAD is the text padding token (3);
the text prompt is the checkpoint tokenizer's pieces of ``<system> TEXT <system>``, one per
frame.  The silence and sine codes are PersonaPlex's constants for its Mimi (the codes of a
silent and of a 440 Hz, amplitude 0.5 frame), and for a random-weight Mimi the codes of those
frames through a fresh encoder state.  A voice prompt is either

* audio: read, channel 0, resampled to 24 kHz, normalised to -24 LUFS (ITU-R BS.1770 by
  ``pyloudnorm``, as PersonaPlex), cut into 1920-sample frames (the last padded with zeros)
  and encoded by a fresh Mimi encoder state (PersonaPlex resets its Mimi after the prompt;
  the dialogue's encoder starts fresh too), or
* a ``.pt`` of PersonaPlex's cached prompt: ``embeddings [V-1, 1, 1, dim]``, the LM inputs of
  positions ``0 .. V-2`` (position 0 holds the initial tokens, so voice frame 0 never reaches
  the LM, in either form), and ``cache [1, K, max_delay + 3]``, PersonaPlex's token ring at
  offset ``V``: position ``p`` at index ``p % (max_delay + 3)``.  The embeddings go through
  the transformer as they are; the cache gives position ``V-1`` and the delayed codes at
  ``V``, i.e. the last voice frame, fed like any other.

All prompt frames but the last are run once per system and text prompt
(:func:`build_prompt`); each session restores that state and steps the last frame itself,
drawing from its own generator the model's first sampled tokens (PersonaPlex draws them in the
first dialogue step: the same computation, one call later).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from duplexeval.systems.adapters.moshi_inproc._loading import SAMPLE_RATE, MoshiModels
from duplexeval.systems.adapters.moshi_inproc._stepper import LMStepper, Sampling
from duplexeval.systems.adapters.moshi_inproc._streams import StreamSet

__all__ = ["SPACER_FRAMES", "PromptFrame", "PromptState", "VoicePrompt", "build_prompt",
           "prompt_codes", "read_voice_prompt"]

FRAME = 1920
SPACER_FRAMES = 6
TARGET_LUFS = -24.0
# PersonaPlex's Mimi codes of a silent frame and of a 440 Hz sine frame (moshi/models/lm.py
# of NVIDIA/personaplex: SILENCE_TOKENS, SINE_TOKENS); used with loaded weights only
_SILENCE = (948, 243, 1178, 546, 1736, 1030, 1978, 2008)
_SINE = (430, 1268, 381, 1611, 1095, 1495, 56, 472)


@dataclass(frozen=True)
class PromptFrame:
    """One prompt frame: its text token, system codes and user codes."""

    text: int
    system: tuple[int, ...]
    user: tuple[int, ...]


@dataclass
class VoicePrompt:
    """A voice prompt as frames of system codes, or as PersonaPlex's cached embeddings."""

    name: str
    codes: list[tuple[int, ...]] | None = None
    embeddings: torch.Tensor | None = None
    cache: torch.Tensor | None = None

    @property
    def frames(self) -> int:
        if self.codes is not None:
            return len(self.codes)
        assert self.embeddings is not None
        return len(self.embeddings) + 1


@dataclass
class PromptState:
    """The LM state after every prompt frame but the last, and that frame."""

    lm: dict[str, Any]
    tokens: dict[str, Any]
    last: PromptFrame
    frames: int
    voice: str | None
    text: str


def _encode(models: MoshiModels, audio: np.ndarray) -> list[tuple[int, ...]]:
    """Mimi codes (the system's codebooks) of 1920-sample frames, from a fresh encoder."""
    streams = StreamSet(models.mimi, 1)
    streams.bind()
    out = []
    for frame in audio.reshape(-1, FRAME):
        x = torch.as_tensor(np.ascontiguousarray(frame, dtype=np.float32))
        codes = models.mimi.encode(x.to(models.device).view(1, 1, -1))
        out.append(tuple(int(c) for c in codes[0, :models.dep_q, 0]))
    streams.unbind()
    return out


def prompt_codes(models: MoshiModels, loaded: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(silence codes of the system, sine codes of the user) for this checkpoint's Mimi."""
    own, user = models.dep_q, int(models.lm.n_q) - models.dep_q
    if loaded and own <= len(_SILENCE) and user <= len(_SINE):
        return _SILENCE[:own], _SINE[:user]
    t = np.arange(FRAME) / SAMPLE_RATE
    sine = (0.5 * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32)
    silence = _encode(models, np.zeros(FRAME, np.float32))[0]
    # the user's codebooks: encoded as many as the user streams have
    user_codes = _encode(models, sine)[0]
    if len(user_codes) < user:
        raise ValueError(f"Mimi gives {len(user_codes)} codebooks, the user has {user}")
    return silence, user_codes[:user]


def _read_audio(path: Path) -> np.ndarray:
    import pyloudnorm
    import soxr

    from duplexeval._audio import read_audio

    data, rate = read_audio(path, dtype="float64")
    mono = data[:, 0]
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE)
    meter = pyloudnorm.Meter(SAMPLE_RATE)
    mono = pyloudnorm.normalize.loudness(mono, meter.integrated_loudness(mono), TARGET_LUFS)
    frames = -(-len(mono) // FRAME)
    padded = np.zeros(frames * FRAME, np.float32)
    padded[:len(mono)] = mono
    return padded


def read_voice_prompt(models: MoshiModels, path: Path) -> VoicePrompt:
    """A voice prompt file (see the module doc); ``ValueError`` names what is wrong."""
    if path.suffix != ".pt":
        audio = _read_audio(path)
        if not len(audio):
            raise ValueError(f"voice prompt {path}: no audio")
        return VoicePrompt(path.name, codes=_encode(models, audio))
    saved = torch.load(str(path), map_location=models.device, weights_only=True)
    if not isinstance(saved, dict) or not {"embeddings", "cache"} <= set(saved):
        raise ValueError(f"voice prompt {path}: not PersonaPlex's cached prompt "
                         "(a dict with embeddings and cache)")
    emb, cache = saved["embeddings"], saved["cache"]
    lm = models.lm
    if emb.dim() != 4 or emb.shape[1:3] != (1, 1) or emb.shape[3] != lm.dim:
        raise ValueError(f"voice prompt {path}: embeddings {tuple(emb.shape)}, "
                         f"expected [N, 1, 1, {lm.dim}]")
    if cache.dim() != 3 or cache.shape[:2] != (1, lm.num_codebooks):
        raise ValueError(f"voice prompt {path}: cache {tuple(cache.shape)}, "
                         f"expected [1, {lm.num_codebooks}, CT]")
    return VoicePrompt(path.name, embeddings=emb, cache=cache.long())


def _cached_voice(stepper: LMStepper, voice: VoicePrompt, own: int) -> PromptFrame:
    """Replay cached embeddings (positions 0 .. V-2), place position V-1's delayed codes and
    return the last voice frame (from positions V-1 and V-1 + delay)."""
    assert voice.embeddings is not None and voice.cache is not None
    dtype = next(stepper.lm.parameters()).dtype
    for emb in voice.embeddings:
        stepper.prefill(embeddings=emb.to(dtype))
    last = voice.frames - 1
    ring = voice.cache.shape[2]
    delays = [int(d) for d in stepper.lm.delays]

    cache = voice.cache

    def at(position: int, stream: int) -> int:
        return int(cache[0, stream, position % ring])

    for stream, delay in enumerate(delays):
        if delay > 0:
            stepper.place(last, stream, at(last, stream))
    k = len(delays)
    return PromptFrame(text=at(last + delays[0], 0),
                       system=tuple(at(last + delays[s], s) for s in range(1, 1 + own)),
                       user=tuple(at(last + delays[s], s) for s in range(1 + own, k)))


def _frames(voice: VoicePrompt | None, text_tokens: list[int], pad: int,
            silence: tuple[int, ...], sine: tuple[int, ...]) -> list[PromptFrame]:
    frames = [PromptFrame(pad, codes, sine) for codes in (voice.codes or [])] if voice else []
    spacer = [PromptFrame(pad, silence, sine)] * SPACER_FRAMES
    return [*frames, *spacer, *(PromptFrame(t, silence, sine) for t in text_tokens), *spacer]


def build_prompt(models: MoshiModels, voice: VoicePrompt | None, text: str,
                 text_tokens: list[int], loaded: bool) -> PromptState:
    """Run every prompt frame but the last on fresh LM states (see the module doc)."""
    lm_streams = StreamSet(models.lm, 1)
    stepper = LMStepper(models.lm, Sampling(), 1, models.dep_q)
    silence, sine = prompt_codes(models, loaded)
    pad = int(models.lm.text_padding_token_id)
    frames = _frames(voice, text_tokens, pad, silence, sine)
    with torch.no_grad():
        lm_streams.bind()
        if voice is not None and voice.codes is None:
            frames.insert(0, _cached_voice(stepper, voice, models.dep_q))
        for frame in frames[:-1]:
            stepper.force(list(frame.system), frame.text)
            stepper.prefill(user_tensor(frame, models.device))
        state = PromptState(lm=lm_streams.capture(), tokens=stepper.row_state(0),
                            last=frames[-1], frames=int(stepper.offsets[0]) + 1,
                            voice=voice.name if voice else None, text=text)
        lm_streams.unbind()
    return state


def user_tensor(frame: PromptFrame, device: torch.device) -> torch.Tensor:
    """A prompt frame's user codes as the stepper takes them: ``[1, n_user, 1]``."""
    return torch.tensor(frame.user, dtype=torch.long, device=device).view(1, -1, 1)
