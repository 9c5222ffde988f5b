"""The model's speech segments and audio length for FLEXI's model-backchannel evaluator.

FLEXI (``evaluate/eval_model_backchannel.py`` l. 23-45, 121) loads ``output.wav`` with
torchaudio, resamples it to 16 kHz when needed, runs Silero's ``get_speech_timestamps`` with
its defaults and ``return_seconds=True``, and takes the audio length as the resampled sample
count / 16000.

Segments, in order of preference:

1. ``vad_segments.json`` in the sample folder (segments computed elsewhere; see
   :mod:`.vad_segments`), entry ``"output.wav"``;
2. our Silero (:func:`duplexeval.speech._activity.detect_activity`, the Silero v6 model that
   ships with faster-whisper) with Silero's defaults mirrored where our options allow:
   threshold 0.5, negative threshold 0.35, minimum silence 100 ms, minimum speech 250 ms, no
   energy refinement; then Silero's 30 ms speech padding (:func:`silero_padding`).
   Differences that remain: Silero's package version (FLEXI pins none; ours is v6), its
   streaming hysteresis (ours thresholds whole windows, then closes short silences), and the
   resampler (soxr rather than torchaudio's sinc).

Under the code's conventions (``compat``) the caller rounds every boundary to 0.1 s, as
``return_seconds=True`` rounds them (``round(samples / 16000, 1)``); under the paper's the
boundaries are kept as computed.

Audio length: from ``output.wav``'s header (torchaudio's resampled length:
``ceil(n * 16000 / sr)`` after reducing the rates by their gcd).  Without ``output.wav``,
``vad_segments.json``'s ``num_samples`` / ``sampling_rate`` for it is used (FLEXI itself
requires the wav).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from duplexeval._audio import audio_info, read_audio
from duplexeval._fileio import read_json
from duplexeval.errors import DuplexevalError
from duplexeval.peers._vad_segments import VAD_SEGMENTS_FILE, read_vad_segments

__all__ = ["OUTPUT_WAV", "SILERO_RATE", "audio_seconds", "model_segments", "silero_padding"]

OUTPUT_WAV = "output.wav"
SILERO_RATE = 16000
SPEECH_PAD = 0.030
"""Silero's ``speech_pad_ms`` default, in seconds."""


def _resampled_length(frames: int, rate: int) -> int:
    if rate == SILERO_RATE:
        return frames
    g = math.gcd(rate, SILERO_RATE)
    orig, new = rate // g, SILERO_RATE // g
    return math.ceil(new * frames / orig)


def _vad_entry(folder: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    path = folder / VAD_SEGMENTS_FILE
    if not path.is_file():
        return None
    data = read_json(path, "VAD segments file")
    if not isinstance(data, dict) or not isinstance(data.get(OUTPUT_WAV), dict):
        return None
    return data, data[OUTPUT_WAV]


def audio_seconds(folder: Path) -> float:
    """The length (seconds) FLEXI takes for ``output.wav``: its 16 kHz sample count / 16000."""
    wav = folder / OUTPUT_WAV
    if wav.is_file():
        try:
            info = audio_info(wav)
        except RuntimeError as exc:
            raise DuplexevalError(f"{wav}: not a readable audio file ({exc})") from None
        return _resampled_length(int(info.frames), int(info.sample_rate)) / SILERO_RATE
    found = _vad_entry(folder)
    if found is not None:
        data, entry = found
        n, rate = entry.get("num_samples"), data.get("sampling_rate")
        if isinstance(n, int) and isinstance(rate, int) and rate > 0 and n >= 0:
            return _resampled_length(n, rate) / SILERO_RATE
    raise DuplexevalError(f"{wav}: required file not found (nor num_samples and sampling_rate "
                          f"for it in {VAD_SEGMENTS_FILE})")


def silero_padding(segments: list[tuple[float, float]],
                   duration: float) -> list[tuple[float, float]]:
    """Silero's ``speech_pad_ms`` (30 ms) applied as ``get_speech_timestamps`` applies it::

        raw      [====]      [====]     [====]
        padded  [======]    [======]   [======]     each side +30 ms, clipped to the audio;
        close    [====][====]  -> the silence between is split in half when < 60 ms
    """
    out = [list(s) for s in segments]
    for i, seg in enumerate(out):
        if i == 0:
            seg[0] = max(0.0, seg[0] - SPEECH_PAD)
        if i == len(out) - 1:
            seg[1] = min(duration, seg[1] + SPEECH_PAD)
            continue
        silence = out[i + 1][0] - seg[1]
        if silence < 2 * SPEECH_PAD:
            seg[1] += silence / 2
            out[i + 1][0] = max(0.0, out[i + 1][0] - silence / 2)
        else:
            seg[1] = min(duration, seg[1] + SPEECH_PAD)
            out[i + 1][0] = max(0.0, out[i + 1][0] - SPEECH_PAD)
    return [(a, b) for a, b in out]


def _raw_from_file(folder: Path) -> list[tuple[float, float]] | None:
    """Segments from ``vad_segments.json`` (seconds, unrounded), or ``None`` without it."""
    path = folder / VAD_SEGMENTS_FILE
    if not path.is_file():
        return None
    spans = read_vad_segments(path, OUTPUT_WAV)
    if spans is None:
        return None
    found = _vad_entry(folder)
    assert found is not None
    data, entry = found
    if entry.get("unit", "samples") == "samples":
        rate = data["sampling_rate"]
        stamps = sorted((s["start"], s["end"]) for s in entry["speech_timestamps"])
        return [(a / rate, b / rate) for a, b in stamps]
    return [(s.start, s.end) for s in spans]


def _run_silero(folder: Path, duration: float) -> list[tuple[float, float]]:
    import numpy as np

    from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity

    wav = folder / OUTPUT_WAV
    if not wav.is_file():
        raise DuplexevalError(f"{wav}: required file not found (and no {VAD_SEGMENTS_FILE})")
    x, rate = read_audio(wav)
    if x.shape[1] != 1:
        raise DuplexevalError(f"{wav}: expected one channel, got {x.shape[1]} (Silero, as "
                              f"FLEXI calls it, takes mono audio)")
    options = ActivityOptions(engine=VadEngine.SILERO, silero_threshold=0.5,
                              silero_neg_threshold=0.35, silero_min_silence_ms=100.0,
                              refine=False, min_speech_ms=250.0)
    spans = detect_activity(np.asarray(x[:, 0]), int(rate), options)
    return silero_padding([(s.start, s.end) for s in spans], duration)


def model_segments(folder: Path, duration: float) -> tuple[list[tuple[float, float]], str]:
    """The model's speech segments (seconds, unrounded: the caller rounds them under the
    code's conventions) and where they came from (``"vad_segments.json"`` or ``"silero"``)."""
    raw = _raw_from_file(folder)
    if raw is None:
        return _run_silero(folder, duration), "silero"
    return raw, VAD_SEGMENTS_FILE
