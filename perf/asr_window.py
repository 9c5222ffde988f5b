"""Whisper's window for a user turn: time and error rate of 30-s and shorter windows.

A listening system (``cascade``) transcribes each user turn it hears on its own
(:meth:`~duplexeval.speech._asr.Transcriber.transcribe_text`, Whisper base int8, beam 1, the
cascade's settings).  Whisper's encoder reads a 30-s window whatever the turn's length; a
shorter window padded with silence (:mod:`duplexeval.speech._short_window`) costs less.  For
every user turn of the bundled suites' quick subsets (channel 0's TURN spans, cut from 0.3 s
before to 0.3 s after, as the cascade's pre- and post-roll cut them), this prints per language
and window: the turns, the median and total seconds a turn (wall, this process), the word error
rate against the turn's aligned words (English, ``normalize_en``) or the character error rate
(Japanese, in kana), and how many turns read differently from the 30-s window.

Also the cascade's own choice (version 3): the ladder of 10-, 15- and 20-s windows, each turn in
the smallest that leaves 3 s of silence after it (:func:`~duplexeval.speech._short_window.
ladder_window`); and, for comparison, faster-whisper's own short-input handling (log-mel
features padded with zeros up to the window) at 20 s, which is what a window cut without silence
gives.

Usage: .venv/bin/python perf/asr_window.py [--windows 30 20 15] [--limit N]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import jiwer
import numpy as np
import soxr

from duplexeval._audio import read_audio
from duplexeval.cli._options import positive, positive_int
from duplexeval.data import Need, load_dataset
from duplexeval.speech._asr import Transcriber
from duplexeval.speech._short_window import WHISPER_WINDOW_S, decode_text, ladder_window
from duplexeval.suites import build_suite
from duplexeval.synth._quality import _normalize

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SR = 16_000
SUITES = {"en": ("m3-qa-en", "m3-chat-en", "flexi-en"), "ja": ("m3-qa-ja", "m3-chat-ja")}
ROLL = 0.3


def user_turns(suite: str, limit: int | None) -> list[tuple[np.ndarray, str]]:
    """``(16-kHz audio, aligned text)`` of every channel-0 turn of ``suite``'s quick subset."""
    root = build_suite(suite, limit="quick" if limit is None else limit, progress=False)
    dataset, _ = load_dataset(root, audio=Need.REQUIRE, alignment=Need.REQUIRE)
    turns = []
    for d in dataset.dialogues:
        assert d.audio is not None
        x, rate = read_audio(d.audio.path)
        joiner = "" if dataset.language == "ja" else " "
        for t in d.turns(0):
            words = [w.text for w in d.words_on(0)
                     if w.start >= t.start - 0.01 and w.end <= t.end + 0.01]
            if words:
                piece = x[max(0, round((t.start - ROLL) * rate)):round((t.end + ROLL) * rate), 0]
                turns.append((soxr.resample(piece, rate, SR).astype(np.float32),
                              joiner.join(words)))
    return turns


def error_rate(refs: list[str], hyps: list[str], language: str) -> float:
    return float(jiwer.wer([_normalize(r, language) or "-" for r in refs],
                           [_normalize(h, language) for h in hyps]))


def zero_padded_text(transcriber: Transcriber, piece: np.ndarray, language: str,
                     window: float) -> str:
    """faster-whisper's padding (zero log-mel features) up to ``window`` seconds, decoded as
    the short window is."""
    model = transcriber._model()
    frames = round(window * SR) // model.feature_extractor.hop_length
    features = model.feature_extractor(piece)[:, :frames]
    padded = np.zeros((features.shape[0], frames), dtype=np.float32)
    padded[:, :features.shape[1]] = features
    limit = max(16, math.ceil(len(piece) / SR * transcriber.tokens_per_second))
    return decode_text(model, padded, language, beam_size=transcriber.beam_size,
                       max_new_tokens=min(limit, 440),
                       max_compression=transcriber.max_compression)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=positive, nargs="+", default=[30.0, 20.0, 15.0])
    parser.add_argument("--limit", type=positive_int, default=None,
                        help="the suites' first N dialogues instead of their quick subsets")
    args = parser.parse_args()
    if not all(1 < w <= WHISPER_WINDOW_S for w in args.windows):
        parser.error(f"--windows: each must be over 1 and at most {WHISPER_WINDOW_S:g} s")
    transcriber = Transcriber(beam_size=1)  # the cascade's settings
    print(f"{'lang':4}  {'window':>17}  {'turns':>5}  {'median s':>8}  {'total s':>7}  "
          f"{'error':>6}  {'differ':>6}")
    for language, suites in SUITES.items():
        turns = [t for suite in suites for t in user_turns(suite, args.limit)]
        refs = [text for _, text in turns]
        transcriber.transcribe_text(turns[0][0], SR, language)  # warm-up (model load)
        baseline: list[str] | None = None
        runs: list[tuple[str, object]] = [(f"{w:g} s", w) for w in args.windows]
        runs.append(("ladder 10-20 s", "ladder"))
        runs.append(("20 s zero-feature", "zero"))
        for label, window in runs:
            hyps, seconds = [], []
            for audio, _ in turns:
                start = time.perf_counter()
                if window == "zero":
                    hyps.append(zero_padded_text(transcriber, audio, language, 20.0))
                    seconds.append(time.perf_counter() - start)
                    continue
                w = ladder_window(len(audio) / SR, 10.0, 20.0) if window == "ladder" else window
                assert isinstance(w, float)
                hyps.append(transcriber.transcribe_text(audio, SR, language, window=w))
                seconds.append(time.perf_counter() - start)
            baseline = baseline if baseline is not None else hyps
            differ = sum(a != b for a, b in zip(baseline, hyps, strict=True))
            print(f"{language:4}  {label:>17}  {len(turns):5d}  {statistics.median(seconds):8.3f}  "
                  f"{sum(seconds):7.1f}  {error_rate(refs, hyps, language):6.3f}  {differ:6d}",
                  flush=True)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
