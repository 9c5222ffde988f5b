"""FLEXI's model-backchannel evaluator over its output folders
(``evaluate/eval_model_backchannel.py`` of ``ChristineCHEN274/FLEXI`` @2247b0d).

Per sample: the model's speech segments (:mod:`.flexi_vad`), classified into turns and
backchannels with the output's words (TOR), the backchannel frequency per second of audio
(``freq``; printed as BCR) and the Jensen-Shannon value between the backchannel histogram and
the sample's reference distribution (JSD; 1 without backchannels).

The reference file (``--reference-distribution``) is FLEXI's ``ai_gt_distribution.json``
(``tools/get_AI_ground_truth/get_gt_gpt.py``): ``{"dialog_N": [p0, p1, ...]}``, one
probability per 0.2 s bin of the *input*, from gpt-4-turbo's backchannel positions.  The code
reads it up front, so it is required even when no sample needs it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing import _flexi_rules as rules
from duplexeval.peers._registry import PeerOptions
from duplexeval.peers.flexi._io import (
    OUTPUT_JSON,
    load_json,
    parse_words,
    sample_name,
    top_level_dirs,
)
from duplexeval.peers.flexi._tasks import TaskResult
from duplexeval.peers.flexi._vad import OUTPUT_WAV, audio_seconds, model_segments

__all__ = ["read_reference", "score_model_backchannel"]

Segments = list[tuple[float, float]]


def read_reference(path: Path | None) -> dict[str, list[float]]:
    """The per-sample reference distributions; every problem names the file."""
    if path is None:
        raise DuplexevalError("--peer flexi --task model_backchannel needs "
                              "--reference-distribution FILE (FLEXI's ai_gt_distribution.json)")
    data = load_json(path, "reference distribution file")
    if not isinstance(data, dict):
        raise DuplexevalError(f"{path}: expected {{\"dialog_N\": [p0, p1, ...], ...}}")
    out = {}
    for name, values in data.items():
        if not isinstance(values, list) or len(values) < 2 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                and v >= 0 for v in values):
            raise DuplexevalError(f"{path}: {name!r} must be a list of at least two "
                                  f"non-negative numbers")
        out[name] = [float(v) for v in values]
    return out


def _needs_words(segments: Segments) -> bool:
    """Whether the code reads ``output.json``: only for segments of 3 s or less examined
    before the first longer one."""
    return bool(segments) and segments[0][1] - segments[0][0] <= rules.BC_MAX_SEGMENT


def _words(folder: Path, segments: Segments) -> list[rules.Word]:
    path = folder / OUTPUT_JSON
    if not path.is_file():
        raise DuplexevalError(f"{path}: required file not found (the code would reuse the "
                              f"previous sample's TOR)")
    if not _needs_words(segments):
        return []
    return parse_words(load_json(path, "model transcript"), path, allow_none=True)


def _jsd(name: str, found: rules.Backchannels, duration: float,
         reference: dict[str, list[float]], ref_path: Path | None, paper: bool) -> float:
    if not found.segments:
        return 1.0
    if name not in reference:
        raise DuplexevalError(f"{ref_path}: no reference distribution for {name!r}")
    p = rules.backchannel_distribution(found.segments, duration)
    q = rules.resize_reference(reference[name], len(p))
    return rules.jsd(p, q, paper=paper)


def _sample(root: Path, folder: Path, reference: dict[str, list[float]],
            options: PeerOptions, paper: bool, cache: dict[Path, Any]) -> dict[str, Any]:
    name = sample_name(root, folder)
    duration = audio_seconds(folder)
    if duration <= 0:
        raise DuplexevalError(f"{folder / OUTPUT_WAV}: empty audio (the code divides by its "
                              f"length)")
    if folder not in cache:
        cache[folder] = model_segments(folder, duration)
    raw, source = cache[folder]
    segments = [(round(a, 1), round(b, 1)) for a, b in raw] if not paper else raw
    found = rules.classify_model_backchannels(segments, _words(folder, segments))
    jsd = _jsd(name, found, duration, reference, options.reference_distribution, paper)
    return {"sample": name, "TOR": found.tor, "freq": len(found.segments) / duration,
            "JSD": jsd, "backchannels": [list(s) for s in found.segments],
            "segments_source": source}


def score_model_backchannel(root: Path, options: PeerOptions, paper: bool,
                            cache: dict[Path, Any] | None = None) -> TaskResult:
    """Means over all samples of TOR, freq (BCR) and JSD (``np.mean``, l. 159-168).

    ``paper`` changes the JSD to the base-2 divergence (eq. 8) and keeps the VAD boundaries
    unrounded.  ``cache`` holds each folder's raw segments between two passes."""
    reference = read_reference(options.reference_distribution)
    cache = {} if cache is None else cache
    result = TaskResult()
    for folder in top_level_dirs(root):
        result.rows.append(_sample(root, folder, reference, options, paper, cache))
    rows = result.rows
    if not rows:
        raise DuplexevalError(f"{root}: no FLEXI sample folder found")
    bcr = float(np.mean([r["freq"] for r in rows]))
    result.metrics = {"JSD": float(np.mean([r["JSD"] for r in rows])),
                      "TOR": float(np.mean([r["TOR"] for r in rows])), "BCR": bcr, "freq": bcr}
    return result
