"""Whisper's text of a short stretch of speech, encoded in a window shorter than 30 s.

Whisper's encoder reads 30-s windows, and on a CPU its cost is most of a short utterance's
transcription (Whisper base, int8, pinned kernels, 2 cores: 0.57 s for 30 s, 0.15 s for 15 s;
attention grows with the square of the window).  A listening system transcribes one user turn
at a time (a median 2.9 s on the bundled English suites), so it can encode a shorter window.

How the window is filled decides whether Whisper still reads it well.  faster-whisper pads a
short input's log-mel features with zeros up to 3000 frames; the same zero padding up to a
20-s window raised the word error rate on the bundled English suites' user turns from 0.075
(30 s) to 0.113.  Padding the *audio* with digital silence before the features are computed
(:func:`silence_padded_features`) kept it at 0.073 (20 s; CER 0.066 -> 0.056 on the Japanese
turns), at about half the time a turn (``perf/asr_window.py``).

Conventions: ``piece`` is 16-kHz mono float audio in [-1, 1], at most ``window_s - 1`` seconds
(at least one second of silence follows the speech); ``window_s`` is in seconds, at most 30.
Decoding is Whisper's without timestamps: temperature 0, ``beam_size`` beams, blank and
non-speech tokens suppressed (faster-whisper's defaults), at most ``max_new_tokens`` tokens,
and a text whose compression ratio exceeds ``max_compression`` is dropped (a repetition loop).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["WHISPER_WINDOW_S", "decode_text", "fits", "ladder_window", "short_window_text",
           "silence_padded_features"]

WHISPER_WINDOW_S = 30.0
"""Whisper's own window (seconds)."""
TRAILING_SILENCE_S = 1.0
"""Silence a short window keeps after the speech (seconds)."""
_RATE = 16_000
LADDER_STEP_S = 5.0
"""The step between the windows of :func:`ladder_window` (seconds)."""
LADDER_MARGIN_S = 3.0
"""Silence a ladder window below the largest keeps after the speech (seconds): with one second
(:data:`TRAILING_SILENCE_S`) a 10-s window read the bundled English user turns worse (WER 0.081
against 0.074 in 20 s), with three as well as 20 s (0.076; Japanese CER 0.054 against 0.056)."""


def fits(samples: int, window_s: float) -> bool:
    """Whether ``samples`` of 16-kHz audio go into a ``window_s`` window shorter than
    Whisper's, with :data:`TRAILING_SILENCE_S` after them."""
    return window_s < WHISPER_WINDOW_S and samples <= (window_s - TRAILING_SILENCE_S) * _RATE


def ladder_window(seconds: float, smallest: float, largest: float) -> float:
    """The window (seconds) a piece of ``seconds`` of speech is encoded in: the smallest of
    ``smallest``, ``smallest`` + :data:`LADDER_STEP_S`, ... below ``largest`` that leaves
    :data:`LADDER_MARGIN_S` of silence after it, else ``largest`` (where :func:`fits` still
    decides, with one second free, whether it goes in or Whisper's 30 s is used)::

        smallest 10, largest 20     2.6 s  -> 10      (7.4 s free)
                                    9.0 s  -> 15      (10 would leave 1 s)
                                   16.5 s  -> 20      (15 too short; 20 leaves 3.5 s)
                                   19.5 s  -> 20      (then 30: 20 leaves under 1 s)

    ``smallest`` >= ``largest`` gives ``largest`` for every piece (one fixed window)."""
    window = smallest
    while window < largest:
        if seconds + LADDER_MARGIN_S <= window:
            return window
        window += LADDER_STEP_S
    return largest


def silence_padded_features(model: Any, piece: np.ndarray, window_s: float) -> np.ndarray:
    """Whisper's log-mel features (mels x frames) of ``piece`` followed by digital silence up
    to ``window_s`` seconds."""
    if not fits(len(piece), window_s):
        raise ValueError(f"{len(piece) / _RATE:.2f} s of audio does not fit a {window_s} s "
                         "window")
    extractor = model.feature_extractor
    frames = round(window_s * _RATE) // extractor.hop_length
    audio = np.zeros(frames * extractor.hop_length, dtype=np.float32)
    audio[:len(piece)] = piece
    return np.ascontiguousarray(extractor(audio)[:, :frames], dtype=np.float32)


def decode_text(model: Any, features: np.ndarray, language: str, *, beam_size: int,
                max_new_tokens: int, max_compression: float) -> str:
    """The text Whisper (a faster-whisper ``WhisperModel``) decodes from ``features`` (mels x
    frames, any window), '' when it reads nothing or a repetition loop."""
    from faster_whisper.tokenizer import Tokenizer
    from faster_whisper.transcribe import get_compression_ratio, get_suppressed_tokens

    tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe",
                          language=language)
    prompt = [tokenizer.sot, tokenizer.language, tokenizer.transcribe, tokenizer.no_timestamps]
    result = model.model.generate(
        model.encode(features), [prompt], beam_size=beam_size,
        max_length=len(prompt) + max_new_tokens, suppress_blank=True,
        suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1])))[0]
    tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
    text = str(tokenizer.decode(tokens)).strip()
    return "" if text and get_compression_ratio(text) > max_compression else text


def short_window_text(model: Any, piece: np.ndarray, language: str, window_s: float, *,
                      beam_size: int, max_new_tokens: int, max_compression: float) -> str:
    """The text Whisper reads in ``piece`` padded with silence to ``window_s`` seconds."""
    return decode_text(model, silence_padded_features(model, piece, window_s), language,
                       beam_size=beam_size, max_new_tokens=max_new_tokens,
                       max_compression=max_compression)
