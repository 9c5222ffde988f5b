"""A deterministic TOY with the API surface of BayLing-Duplex's ``bayling_duplex`` package
(``bayling_duplex/duplex.py``): ``BayLingDuplex`` with ``create_stream_state``,
``stream_audio_tokens``, ``tokenize_audio``, ``stream_tokens_to_audio``, ``time_offset``,
``x_ratio``/``y_ratio``/``z_ratio`` and a decoder with per-stream ``mel_overlap_dict`` and
``hift_cache_dict``.  It is NOT the model: no weights, no torch, numpy only; it exists so the
``bayling-duplex`` adapter's calls, state copying and frame/rate conversions can be tested.

Toy tokenizer (non-causal on purpose, like WhisperVQ's window-wide log-mel floor): one token
per started 1280 samples at 16 kHz; a hop whose RMS exceeds both 0.005 and a tenth of the
loudest hop *of the whole input* is ``1 + min(8, int(rms * 40))``, else 0.

Toy LM: its "KV cache" (``past_key_values``) is the list of every token fed.  After a block
with speech, the first block of silence starts a reply (``<|assistant|>``): text "hi",
" there", and ``reply_blocks`` blocks of audio tokens (a tone code per block); speech during a
reply ends it early; each reply ends with ``[EPAD]``.  ``stop_requested`` after
``max_epad_count`` EPADs, as upstream.  Sampling arguments are accepted and ignored.

Toy decoder: a token of code ``c > 0`` is 1764 samples (80 ms at 22.05 kHz) of a
``200 + 40 c`` Hz tone, code 0 is silence; like the real streaming decoder it holds back the
end of each chunk (``HOLD`` samples) until the next call.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PAD, ASSISTANT, EPAD = 0, 1, 2
WORDS = {10: "hi", 11: " there"}
HOLD = 2205
"""Samples the toy decoder holds back (0.1 s at 22.05 kHz)."""
PER_TOKEN = 1764
FAIL_AT_BLOCK: int | None = None


@dataclass
class DuplexStreamEvent:
    kind: str
    block_index: int
    token_id: int | None = None
    text: str | None = None
    audio_tokens: list[int] = field(default_factory=list)
    assistant_started: bool = False
    assistant_finished: bool = False
    stop_requested: bool = False


@dataclass
class DuplexStreamState:
    text_tokens: list[int] = field(default_factory=list)
    audio_tokens: list[int] = field(default_factory=list)
    user_audio_tokens: list[int] = field(default_factory=list)
    past_key_values: Any = None
    current_position: int = 0
    assistant_count: int = 0
    epad_count: int = 0
    block_index: int = 0
    completed_blocks: int = 0
    stop_requested: bool = False


class ToyDecoder:
    def __init__(self) -> None:
        self.mel_overlap_dict: defaultdict[str, Any] = defaultdict(lambda: None)
        self.hift_cache_dict: defaultdict[str, Any] = defaultdict(lambda: None)

    def decode(self, tokens: list[int], stream_id: str, finalize: bool) -> np.ndarray:
        start = self.hift_cache_dict[stream_id] or 0
        n = np.arange(start, start + PER_TOKEN * len(tokens))
        wave = np.zeros(len(n), np.float32)
        for k, code in enumerate(tokens):
            if code:
                part = slice(k * PER_TOKEN, (k + 1) * PER_TOKEN)
                wave[part] = 0.3 * np.sin(2 * np.pi * (200 + 40 * code) * n[part] / 22050)
        held = self.mel_overlap_dict[stream_id]
        if held is not None:
            wave = np.concatenate([held, wave])
        self.hift_cache_dict[stream_id] = start + PER_TOKEN * len(tokens)
        if finalize:
            del self.mel_overlap_dict[stream_id], self.hift_cache_dict[stream_id]
            return wave
        self.mel_overlap_dict[stream_id] = wave[-HOLD:]
        return wave[:-HOLD]


class BayLingDuplex:
    sample_rate: int = 16000
    output_sample_rate: int = 22050

    def __init__(self, model_path: str, speech_tokenizer_path: str,
                 decoder_path: str | None = None, interleave_ratio: str = "10:5:10",
                 device: str | None = None, torch_dtype: str | None = "auto",
                 reply_blocks: int = 2) -> None:
        self.x_ratio, self.y_ratio, self.z_ratio = (int(p) for p in interleave_ratio.split(":"))
        self.time_offset = self.x_ratio / 12.5
        self.decoder = ToyDecoder() if decoder_path is not None else None
        self.reply_blocks = reply_blocks
        self.tokenized: list[int] = []
        """Lengths (16 kHz samples) of every audio tokenised."""
        self.calls: list[dict[str, Any]] = []
        """The sampling arguments of every stream_audio_tokens call."""

    def tokenize_audio(self, audio: Any) -> tuple[list[int], float]:
        waveform, rate = audio
        assert rate == self.sample_rate and waveform.ndim == 2 and waveform.shape[0] == 1
        x = np.asarray(waveform[0], dtype=np.float64)
        self.tokenized.append(len(x))
        hops = -(-len(x) // 1280)
        x = np.concatenate([x, np.zeros(hops * 1280 - len(x))])
        rms = np.sqrt(np.mean(x.reshape(hops, 1280) ** 2, axis=1))
        floor = max(0.005, 0.1 * float(rms.max(initial=0.0)))
        tokens = [1 + min(8, int(r * 40)) if r > floor else 0 for r in rms]
        return tokens, len(x) / self.sample_rate

    def create_stream_state(self) -> DuplexStreamState:
        return DuplexStreamState(past_key_values=[])

    def stream_audio_tokens(self, user_audio_tokens: list[int],
                            state: DuplexStreamState | None = None, temperature: float = 0.8,
                            top_p: float = 0.8, silence_penalty: float = 0.0,
                            max_epad_count: int = 1) -> Any:
        state = state or self.create_stream_state()
        self.calls.append({"temperature": temperature, "top_p": top_p,
                           "silence_penalty": silence_penalty,
                           "max_epad_count": max_epad_count})
        if state.stop_requested:
            return
        n = len(user_audio_tokens) // self.x_ratio * self.x_ratio
        for start in range(0, n, self.x_ratio):
            if FAIL_AT_BLOCK is not None and state.block_index == FAIL_AT_BLOCK:
                raise RuntimeError("CUDA out of memory (toy)")
            block = list(user_audio_tokens[start:start + self.x_ratio])
            state.user_audio_tokens.extend(block)
            state.past_key_values.extend(block)
            state.current_position += len(block)
            texts, codes = self._decide(state, any(block))
            for token in texts:
                state.text_tokens.append(token)
                if token == ASSISTANT:
                    state.assistant_count += 1
                elif token == EPAD:
                    state.epad_count += 1
                    if state.epad_count >= max_epad_count:
                        state.stop_requested = True
                yield DuplexStreamEvent("text", state.block_index, token, WORDS.get(token, ""),
                                        assistant_started=token == ASSISTANT,
                                        assistant_finished=token == EPAD,
                                        stop_requested=state.stop_requested)
            state.audio_tokens.extend(codes)
            state.past_key_values.extend(t + 100 for t in codes)
            state.current_position += len(texts) + len(codes)
            yield DuplexStreamEvent("audio", state.block_index, audio_tokens=codes,
                                    stop_requested=state.stop_requested)
            state.block_index += 1
            state.completed_blocks += 1
            if state.stop_requested:
                break

    def _decide(self, state: DuplexStreamState, voiced: bool) -> tuple[list[int], list[int]]:
        """The block's text tokens and audio codes, from the history alone."""
        speaking = self._speaking(state.text_tokens)
        last_block = state.user_audio_tokens[-2 * self.x_ratio:-self.x_ratio]
        texts = [PAD] * self.y_ratio
        codes = [0] * self.z_ratio
        if speaking is not None and (voiced or speaking >= self.reply_blocks):
            texts[0] = EPAD  # barge-in or the reply is over
        elif speaking is not None:
            texts[0] = 11 if speaking == 1 else PAD
            codes = [1 + (state.block_index % 7)] * self.z_ratio
        elif not voiced and any(last_block):
            texts[:2] = [ASSISTANT, 10]
            codes = [1 + (state.block_index % 7)] * self.z_ratio
        return texts, codes

    def _speaking(self, text_tokens: list[int]) -> int | None:
        """Blocks of the current reply so far (``None`` when not replying)."""
        if ASSISTANT not in text_tokens:
            return None
        last = len(text_tokens) - 1 - text_tokens[::-1].index(ASSISTANT)
        if EPAD in text_tokens[last:]:
            return None
        return (len(text_tokens) - last) // self.y_ratio

    def stream_tokens_to_audio(self, audio_tokens: list[int], stream_id: str,
                               finalize: bool = False) -> np.ndarray:
        if self.decoder is None:
            raise RuntimeError("Audio decoder is not loaded. Pass decoder_path.")
        if not audio_tokens:
            return np.zeros((1, 0), np.float32)
        return self.decoder.decode(list(audio_tokens), stream_id, finalize)[None, :]

