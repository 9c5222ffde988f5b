"""Causal WhisperVQ tokens for a stream: each block's tokens from the audio heard so far.

BayLing-Duplex's ``tokenize_audio`` tokenises a whole file in 30 s windows (``time_step`` 0,
30, 60, ... s) with the GLM-4-Voice tokenizer (WhisperVQ, 12.5 tokens per second, one per 1280
samples at 16 kHz).  That tokenizer is **not causal**, judged from its code
(``bayling_duplex_runtime/speech_tokenizer/modeling_whisper.py``) and the configuration of
``glm-4-voice-tokenizer`` (as reproduced in public code; the model hub file itself was not read
here: ``encoder_causal_convolution`` true, ``encoder_causal_attention`` false,
``quantize_causal_block_size`` 200, ``pooling_kernel_size`` 4):

* its convolutions are causal (left padding only);
* its attention is *block*-causal: a frame sees every earlier frame and every frame of its own
  block of 200 encoder frames (4 s, blocks counted from the window start), so a token sees up
  to 4 s of the future;
* Whisper's log-mel features floor each window at its maximum minus 8 (log10 units), so the
  loudest moment of the whole 30 s window, future included, shapes every token.

So the offline ``generate`` (and the M3 wrapper, which tokenises the whole input first) lets
each token depend on up to 4 s of audio the model has not "heard" yet, and on the window's
loudness.  A stream cannot: here the tokens of block ``b`` (tokens ``10b .. 10b+9``, audio
``[0.8 b, 0.8 (b+1))`` s) are taken from ``tokenize_audio`` of the audio of their own 30 s
window *cut at the end of block b*, the same windows as offline::

    window 0: 0 ............ 30 s      window 1: 30 s ........ 60 s
    block b:          [0.8b, 0.8b+0.8)   -> tokenize(audio[window start, 0.8b+0.8))[-10:]

A block that straddles a window boundary (every other window: 30 s is 37.5 blocks) takes its
first tokens from the end of the earlier window and the rest from the start of the next, as
offline.  The tokens equal the offline ones wherever the future does not change them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["HOP", "WINDOW", "block_tokens"]

HOP = 1280
"""Samples per token at 16 kHz (12.5 Hz)."""
WINDOW = 30 * 16000
"""Samples per tokenizer window at 16 kHz (375 tokens)."""

Tokenize = Callable[[np.ndarray], Sequence[int]]
"""16 kHz mono audio -> its tokens (one per started 1280 samples)."""


def block_tokens(tokenize: Tokenize, audio: np.ndarray, origin: int, first: int,
                 count: int) -> list[int]:
    """Tokens ``first .. first+count-1`` of the stream, from ``audio`` (16 kHz, starting at
    stream sample ``origin``, a window start no later than the window of token ``first``)
    ending exactly at the end of token ``first + count - 1``."""
    end = (first + count) * HOP
    if origin % WINDOW or origin > (first * HOP // WINDOW) * WINDOW or \
            origin + len(audio) != end:
        raise ValueError("audio must start at a window start and end at the block's end")
    out: list[int] = []
    token = first
    while token < first + count:
        start = (token * HOP // WINDOW) * WINDOW
        stop = min(start + WINDOW, end)
        tokens = list(tokenize(audio[start - origin:stop - origin]))
        expected = (stop - start) // HOP
        if len(tokens) != expected:
            raise ValueError(f"the tokenizer returned {len(tokens)} tokens for "
                             f"{stop - start} samples, expected {expected}")
        last = min(first + count, stop // HOP)
        out.extend(tokens[token - start // HOP:last - start // HOP])
        token = last
    return out
