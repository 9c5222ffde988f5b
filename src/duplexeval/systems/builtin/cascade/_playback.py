"""The system's output channel: one utterance at a time, played, paused, resumed or dropped.

An utterance is a plain dict (:func:`new_output`)::

    audio        float32 native-rate samples (trimmed TTS speech)
    pos          next sample of ``audio`` to play
    play_from    session sample at which playing (re)starts; None while paused
    hold_at      session sample at which playing pauses; None when not pausing
    paused_at    session sample of the last pause (None: never paused)
    drop         True: discard the utterance once it pauses (a barge-in)
    words        (start, end, text) in samples of ``audio``
    speech       (start, end) audible intervals in samples of ``audio``

:func:`render` writes one frame ``[f0, f0 + frame)`` of it and logs the audible samples it
played into ``speech_log`` (session samples ``[start, end)``, merged when contiguous).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from duplexeval.systems.builtin._copyable_session import log_speech
from duplexeval.systems.builtin.cascade._voice import Speech

__all__ = ["new_output", "render", "spoken_text"]


def new_output(kind: str, speech: Speech, text: str, play_from: int) -> dict[str, Any]:
    """An utterance of ``kind`` (``reply`` / ``backchannel``) starting at ``play_from``."""
    return {"kind": kind, "text": text, "audio": speech.audio, "pos": 0,
            "play_from": play_from, "hold_at": None, "paused_at": None, "drop": False,
            "words": [list(w) for w in speech.words], "speech": [list(s) for s in speech.speech]}


def render(out: dict[str, Any], f0: int, frame: int, speech_log: list[list[int]]
           ) -> tuple[np.ndarray, str, bool]:
    """Frame ``[f0, f0 + frame)`` of ``out``: audio, the words that start in it, and whether
    the utterance is over (played to its end, or paused with ``drop`` set)."""
    y = np.zeros(frame, np.float32)
    words: list[str] = []
    f1 = f0 + frame
    if out["play_from"] is not None:
        a = max(f0, out["play_from"])
        b = f1 if out["hold_at"] is None else min(f1, out["hold_at"])
        if b > a:
            pos = out["pos"]
            n = min(b - a, len(out["audio"]) - pos)
            y[a - f0:a - f0 + n] = out["audio"][pos:pos + n]
            log_speech(speech_log, out["speech"], pos, n, a)
            words = [w[2] for w in out["words"] if pos <= w[0] < pos + n]
            out["pos"] = pos + n
        if out["hold_at"] is not None and out["hold_at"] <= f1:
            out["paused_at"] = out["hold_at"]
            out["play_from"] = out["hold_at"] = None
    finished = out["pos"] >= len(out["audio"]) or (out["drop"] and out["play_from"] is None)
    return y, " ".join(words), finished


def spoken_text(out: dict[str, Any], sep: str = " ") -> str:
    """What has been said of ``out`` so far: the words started before ``pos`` (the whole text
    once played to the end; a share of its characters when it has no word times), words
    joined with ``sep``."""
    if out["pos"] >= len(out["audio"]):
        return str(out["text"])
    if out["words"]:
        return sep.join(w[2] for w in out["words"] if w[0] < out["pos"])
    share = out["pos"] / max(1, len(out["audio"]))
    return str(out["text"])[:round(len(out["text"]) * share)]
