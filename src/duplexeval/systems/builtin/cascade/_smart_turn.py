"""Smart Turn v3 (pipecat-ai, BSD-2-Clause): an audio-only end-of-turn classifier, optional.

The model is the ONNX file that ships in the ``pipecat-ai`` wheel
(``pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx``); it is located through the
installed distribution's files without importing ``pipecat`` (whose import needs its many
dependencies), or given as a path.  Input: the last 8 s of the user's audio at 16 kHz
(zero-padded at the front), normalised to zero mean and unit variance, as 80-bin Whisper
log-mel features (faster-whisper's extractor, equal to pipecat's to 1e-6); output: the
probability that the turn is complete.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import numpy as np

from duplexeval.speech._kernels import pin_kernels
from duplexeval.speech._onnx import onnxruntime

__all__ = ["MODEL_IN_WHEEL", "SmartTurn", "find_model"]

MODEL_IN_WHEEL = "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
_RATE = 16_000
_SECONDS = 8


def find_model(path: str = "") -> Path:
    """``path``, or the ONNX file inside the installed ``pipecat-ai``; :class:`RuntimeError`
    saying how to get it when there is none."""
    if path:
        found = Path(path)
    else:
        try:
            found = Path(str(metadata.distribution("pipecat-ai").locate_file(MODEL_IN_WHEEL)))
        except metadata.PackageNotFoundError:
            found = Path("")
    if not found.is_file():
        raise RuntimeError("smart_turn=1 needs the Smart Turn v3 ONNX file: install pipecat-ai "
                           "(pip install --no-deps pipecat-ai==1.14.0 is enough) or give "
                           "smart_turn_model=PATH")
    return found


class SmartTurn:
    """P(turn complete) of 16 kHz user audio (see the module docstring)."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        ort = onnxruntime()
        pin_kernels()  # before faster-whisper imports ctranslate2
        from faster_whisper.feature_extractor import FeatureExtractor

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 4
        self._session = ort.InferenceSession(str(path), sess_options=options,
                                             providers=["CPUExecutionProvider"])
        self._features = FeatureExtractor(feature_size=80, chunk_length=_SECONDS)

    def probability(self, audio16: np.ndarray) -> float:
        """P(complete) of the turn whose audio (16 kHz) ends with ``audio16``."""
        n = _RATE * _SECONDS
        x = np.asarray(audio16, np.float32)[-n:]
        if len(x) < n:
            x = np.concatenate([np.zeros(n - len(x), np.float32), x])
        x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
        features = self._features(x, padding=0)[:, : n // 160].astype(np.float32)
        out = self._session.run(None, {"input_features": features[None]})
        return float(np.asarray(out[0]).reshape(-1)[0])
