"""Three ways to transcribe many short speech regions with Whisper base on CPU.

The analysis needs words only for short segments (model-backchannel candidates), one or two per
sample, across dozens of samples.  Whisper's encoder always processes a 30-s window, so what
matters is how many windows are encoded.  This times, on the same 13 clip-bank pieces (up to 2 s
each, padded by 0.2 s):

* one ``WhisperModel.transcribe`` call per piece (13 windows);
* faster-whisper's ``BatchedInferencePipeline``, one clip per piece, ``batch_size=8`` (still 13
  windows, encoded in batches);
* the pieces packed into shared windows of at most 28 s with 0.6 s of silence between them, as
  :meth:`duplexeval.speech._asr.Transcriber.transcribe_many` does.

Usage: .venv/bin/python perf/asr_batching.py
"""

from __future__ import annotations

import os
import time

import numpy as np

from duplexeval.speech._asr import Transcriber
from duplexeval.speech._clipbank import ClipBank

SR = 16_000
PAD = np.zeros(int(0.2 * SR), np.float32)
GAP = np.zeros(int(0.6 * SR), np.float32)


def main() -> None:
    from faster_whisper import BatchedInferencePipeline

    bank = ClipBank.load()
    pieces = [np.concatenate([PAD, bank.get(f"en_{i:03d}").audio[:2 * SR].astype(np.float32),
                              PAD]) for i in range(13)]
    model = Transcriber()._model()
    options = {"language": "en", "beam_size": 5, "temperature": 0.0, "word_timestamps": True,
               "condition_on_previous_text": False}

    start = time.perf_counter()
    for piece in pieces:
        list(model.transcribe(piece, vad_filter=False, **options)[0])
    one_each = time.perf_counter() - start

    audio = np.concatenate([x for piece in pieces for x in (piece, GAP)])
    clips, at = [], 0
    for piece in pieces:
        clips.append({"start": at / SR, "end": (at + len(piece)) / SR})
        at += len(piece) + len(GAP)
    start = time.perf_counter()
    batched = BatchedInferencePipeline(model)
    list(batched.transcribe(audio, clip_timestamps=clips, batch_size=8,
                            without_timestamps=False, **options)[0])
    batched_s = time.perf_counter() - start

    windows: list[list[np.ndarray]] = [[]]
    for piece in pieces:
        if windows[-1] and sum(map(len, windows[-1])) + len(GAP) + len(piece) > 28 * SR:
            windows.append([])
        windows[-1] += [GAP, piece] if windows[-1] else [piece]
    start = time.perf_counter()
    for window in windows:
        list(model.transcribe(np.concatenate(window), vad_filter=False, **options)[0])
    packed = time.perf_counter() - start

    print(f"{len(pieces)} pieces, Whisper base int8, {os.cpu_count()} CPU cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"  one call per piece          {one_each:6.1f} s")
    print(f"  BatchedInferencePipeline    {batched_s:6.1f} s  (batch_size 8)")
    print(f"  packed into {len(windows)} window(s)      {packed:6.1f} s")


if __name__ == "__main__":
    main()
