"""Streaming Silero VAD: the v6 ONNX model inside faster-whisper, fed incrementally.

The model takes 512-sample windows (32 ms at 16 kHz), each preceded by the last 64 samples of
the window before it, and carries an LSTM state ``(h, c)`` from window to window.  That state,
the 64-sample context and the samples not yet making a whole window are plain numpy arrays in
a dict (:meth:`StreamingVad.initial_state`), so a session that holds it can be deep-copied
(snapshot) and resumed exactly.  Fed in any chunking, the probabilities equal those of
faster-whisper's whole-array call on the same audio (checked in the tests).

Window ``i`` covers input samples ``[512 i, 512 (i + 1))`` at 16 kHz, counted from the first
sample fed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from duplexeval.speech._kernels import pin_kernels

__all__ = ["VAD_RATE", "VAD_WINDOW", "StreamingVad"]

VAD_RATE = 16_000
VAD_WINDOW = 512
_CONTEXT = 64
_STATE = (1, 1, 128)


class StreamingVad:
    """Speech probabilities of consecutive 32 ms windows, state kept by the caller."""

    def __init__(self) -> None:
        pin_kernels()  # before faster-whisper imports ctranslate2
        try:
            from faster_whisper.vad import get_vad_model
        except ImportError as exc:  # pragma: no cover - the [asr] extra is missing
            raise RuntimeError("cascade needs faster-whisper: pip install 'duplexeval[asr]'") \
                from exc
        self._session = get_vad_model().session

    @staticmethod
    def initial_state() -> dict[str, Any]:
        """The state before any audio: zero LSTM state and context, no pending samples."""
        return {"h": np.zeros(_STATE, np.float32), "c": np.zeros(_STATE, np.float32),
                "context": np.zeros(_CONTEXT, np.float32),
                "pending": np.zeros(0, np.float32), "windows": 0}

    def feed(self, state: dict[str, Any], audio: np.ndarray) -> tuple[int, np.ndarray]:
        """Feed 16 kHz samples; returns the index of the first new window and the speech
        probabilities of every window completed by them (possibly none).  ``state`` is updated
        in place (new arrays, never mutated ones, so earlier copies stay valid)."""
        x = np.concatenate([state["pending"], np.asarray(audio, np.float32)])
        n = len(x) // VAD_WINDOW
        first = int(state["windows"])
        if n == 0:
            state["pending"] = x
            return first, np.zeros(0, np.float32)
        blocks = x[:n * VAD_WINDOW].reshape(n, VAD_WINDOW)
        contexts = np.concatenate([state["context"][None, :], blocks[:-1, -_CONTEXT:]])
        batch = np.ascontiguousarray(np.concatenate([contexts, blocks], axis=1))
        probs, h, c = self._session.run(None, {"input": batch, "h": state["h"],
                                               "c": state["c"]})
        state["h"], state["c"] = np.asarray(h, np.float32), np.asarray(c, np.float32)
        state["context"] = blocks[-1, -_CONTEXT:].copy()
        state["pending"] = x[n * VAD_WINDOW:].copy()
        state["windows"] = first + n
        return first, np.asarray(probs, np.float32).reshape(-1)
