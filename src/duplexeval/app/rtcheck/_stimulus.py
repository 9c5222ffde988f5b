"""The user input ``rtcheck`` streams: real speech from the packaged clip bank.

For a wall-clock system the stimulus reacts to what the system plays out (session seconds,
``S`` = the first played-out system speech after the user's turn end)::

    user     |==== turn (TURN_SECONDS) ====|          |t|        |===== barge-in =====|
             0.2                                       S+0.3      S+BARGE_AFTER
    system                                       |====== reply ===============|cancel?
                                                 S

* the *transient* is :data:`TRANSIENT_SECONDS` (60 ms) of speech at ``S + TRANSIENT_AFTER``: a
  system must not cancel for it (vLLM-Omni #6101's "a 60 ms transient edge does not
  interrupt");
* the *barge-in* is sustained speech from ``S + BARGE_AFTER`` (its onset is the *VAD edge*,
  known exactly since the stimulus placed it): the system's played-out reply must stop within
  250 ms of it.

For an in-process system the stimulus is a fixed dialogue-like stream: the turn, a pause, the
barge-in, repeated to :data:`COMPUTE_SECONDS` (or the user channel of a dataset's first
dialogue, ``--dataset``).
"""

from __future__ import annotations

import numpy as np

from duplexeval.speech._clipbank import ClipBank, fill_span

__all__ = ["BARGE_AFTER", "BARGE_SECONDS", "COMPUTE_SECONDS", "LEVEL", "TRANSIENT_AFTER",
           "TRANSIENT_SECONDS", "TURN_SECONDS", "TURN_START", "compute_stream", "speech",
           "transient"]

TURN_START = 0.2
"""Session second at which the user's turn starts."""
TURN_SECONDS = 1.2
TRANSIENT_AFTER = 0.3
"""Seconds after the system's first speech at which the transient starts."""
TRANSIENT_SECONDS = 0.06
BARGE_AFTER = 1.0
"""Seconds after the system's first speech at which the barge-in starts (its VAD edge)."""
BARGE_SECONDS = 1.5
COMPUTE_SECONDS = 20.0
"""Length of the in-process stream without ``--dataset``."""
LEVEL = 0.3
"""Peak amplitude the speech is scaled to (a close microphone)."""


MAX_GAP = 0.1
"""Longest pause (s) kept inside the stimulus's speech: a server VAD's end-of-turn silence
(typically 300-500 ms) then never fires inside a turn, and a barge-in's onset is its first
sample."""
VOICED = 0.02
"""Window RMS, relative to the clip's peak, above which a 10 ms window is voiced."""


def _tight(x: np.ndarray, rate: int) -> np.ndarray:
    """``x`` without its leading and trailing silence and with every pause cut to
    :data:`MAX_GAP` (10 ms windows, voiced above :data:`VOICED` of the peak)."""
    w = max(1, rate // 100)
    n = len(x) // w
    if n == 0:
        return x
    frames = x[:n * w].reshape(n, w)
    rms = np.sqrt(np.mean(np.square(frames, dtype=np.float64), axis=1))
    voiced = rms > VOICED * (float(np.max(np.abs(x))) or 1.0)
    keep: list[int] = []
    gap = 0
    limit = round(MAX_GAP * 100)
    first, last = int(np.argmax(voiced)), n - 1 - int(np.argmax(voiced[::-1]))
    for i in range(first, last + 1):
        gap = 0 if voiced[i] else gap + 1
        if gap <= limit:
            keep.append(i)
    return frames[keep].reshape(-1)


def speech(seconds: float, rate: int, index: int = 0, language: str = "en") -> np.ndarray:
    """``seconds`` of clip-bank speech at ``rate``: the clip ``index`` picks, its pauses cut
    to :data:`MAX_GAP` (:func:`_tight`), looped, peak :data:`LEVEL`; it starts voiced."""
    bank = ClipBank.load()
    lang = language if language in bank.languages() else "en"
    clip = _tight(bank.pick(lang, index).resampled(rate), rate)
    x = fill_span(clip, max(1, round(seconds * rate)), rate)
    peak = float(np.max(np.abs(x))) or 1.0
    return (x * (LEVEL / peak)).astype(np.float32)


def compute_stream(rate: int, seconds: float = COMPUTE_SECONDS) -> np.ndarray:
    """The in-process stream: a 2 s turn, 1.5 s of silence, a 1 s barge-in, 1.5 s of silence,
    repeated to ``seconds``."""
    block = np.concatenate([speech(2.0, rate, 0), np.zeros(round(1.5 * rate), np.float32),
                            speech(1.0, rate, 1), np.zeros(round(1.5 * rate), np.float32)])
    n = round(seconds * rate)
    return np.resize(block, n).astype(np.float32)


def transient(rate: int) -> np.ndarray:
    """:data:`TRANSIENT_SECONDS` of speech: the loudest 60 ms of a clip, edges unfaded (a
    click-like onset, as a cough or a knock)."""
    x = speech(1.0, rate, 2)
    n = max(1, round(TRANSIENT_SECONDS * rate))
    energy = np.convolve(np.square(x, dtype=np.float64), np.ones(n), mode="valid")
    start = int(np.argmax(energy))
    return x[start:start + n].copy()
