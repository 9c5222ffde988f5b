"""The two Full-Duplex-Bench tasks scored on VAD segments: model backchannel
(``eval_backchannel.py``) and v1.5 stop / response latency (``get_timing.py``).

Backchannel samples are the root's entries whose name ``str.isdigit()`` (sorted here; FDB
uses ``os.listdir`` order, which matters only for the carried-over TOR of a sample without
``output.json``).  Each needs ``output.wav`` (its length is the frequency denominator and sets
the histogram bins) and its speech segments (``vad_segments.json`` or our Silero, see
:mod:`.fdb_io`).  The reference distribution of sample ``k`` is ``FILE[k]``, read only when
the sample has a backchannel (as FDB does).

v1.5 samples are the root's folders holding both ``input.wav`` and ``output.wav`` (others are
skipped, as ``get_timing.py`` skips them); FDB resamples both to 16 kHz before Silero, so the
segments are in real seconds.  FDB writes one ``latency_intervals.json`` per folder and prints
no aggregate: ours pools the interval lengths over all samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing._fdb_rules import (
    MODEL_MERGE_GAP_S,
    USER_MERGE_GAP_S,
    BackchannelOutcome,
    backchannel_frequency,
    backchannel_jsd,
    backchannels_code,
    backchannels_paper,
    interval_lengths,
    mean_or_none,
    merge_segments,
    response_latency_intervals,
    stop_latency_intervals,
)
from duplexeval.peers._registry import PeerOptions
from duplexeval.peers.fdb._io import (
    SILERO_ASSUMED_RATE,
    AudioInfo,
    as_fdb_backchannel_seconds,
    audio_info,
    on_16k_grid,
    read_chunks,
    read_reference_distribution,
    speech_segments,
)
from duplexeval.peers.fdb._samples import OUTPUT_JSON, inside
from duplexeval.timeline import Span

__all__ = ["score_backchannel", "score_timing"]

OUTPUT_WAV = "output.wav"
INPUT_WAV = "input.wav"

Rows = list[dict[str, Any]]


def _segments(folder: Path, info: AudioInfo, compat: bool) -> tuple[list[Span], list[str]]:
    spans, source = speech_segments(folder, OUTPUT_WAV)
    notes = [] if source != "silero" else ["segments from our Silero VAD (no "
                                           "vad_segments.json)"]
    if compat and info.rate != SILERO_ASSUMED_RATE:
        notes.append(f"output.wav at {info.rate} Hz: FDB's Silero call assumes 16000 Hz, "
                     f"times scaled by {info.rate / SILERO_ASSUMED_RATE:g}")
    if compat and info.channels != 1:
        notes.append(f"output.wav has {info.channels} channels: FDB's Silero call fails on it")
    return as_fdb_backchannel_seconds(spans, info if compat else _real_time(info)), notes


def _real_time(info: AudioInfo) -> AudioInfo:
    """An :class:`AudioInfo` at 16 kHz with the same duration (no time scaling)."""
    return AudioInfo(round(info.duration * SILERO_ASSUMED_RATE), SILERO_ASSUMED_RATE,
                     info.channels)


def _outcome(folder: Path, segments: list[Span], compat: bool,
             previous_tor: int | None) -> tuple[BackchannelOutcome, list[str]]:
    words_path = folder / OUTPUT_JSON
    if not words_path.is_file():
        if not compat:
            raise DuplexevalError(f"{words_path}: not found")
        if previous_tor is None:
            raise DuplexevalError(f"{words_path}: not found (FDB's eval_backchannel.py fails "
                                  "with a NameError when the first sample has no output.json)")
        return BackchannelOutcome(previous_tor), [
            "no output.json: TOR carried over from the previous sample (FDB's code)"]
    words = read_chunks(words_path)
    rule = backchannels_code if compat else backchannels_paper
    return rule(segments, words), []


def _jsd(sample: str, outcome: BackchannelOutcome, info: AudioInfo, compat: bool,
         references: dict[str, list[float]], ref_path: Path | None) -> float:
    reference: list[float] = []
    if outcome.backchannels:
        if sample not in references:
            raise DuplexevalError(f"{ref_path}: no reference distribution for sample "
                                  f"{sample!r}")
        reference = references[sample]
    try:
        return backchannel_jsd(outcome.backchannels, info.duration, reference,
                               divergence=not compat)
    except ValueError as exc:
        raise DuplexevalError(f"{ref_path}: sample {sample!r}: {exc}") from None


def _backchannel_row(folder: Path, compat: bool, previous_tor: int | None,
                     references: dict[str, list[float]], ref_path: Path | None
                     ) -> dict[str, Any]:
    wav = folder / OUTPUT_WAV
    if not wav.is_file():
        raise DuplexevalError(f"{wav}: not found")
    info = audio_info(wav)
    if info.frames == 0:
        raise DuplexevalError(f"{wav}: no samples (the frequency divides by its duration)")
    segments, notes = _segments(folder, info, compat)
    outcome, more = _outcome(folder, segments, compat, previous_tor)
    row: dict[str, Any] = {
        "sample": folder.name, "TOR": outcome.tor,
        "freq": backchannel_frequency(len(outcome.backchannels), info.duration),
        "JSD": _jsd(folder.name, outcome, info, compat, references, ref_path),
        "backchannels": [[s.start, s.end] for s in outcome.backchannels],
        "segment_classes": outcome.classes}
    if notes + more:
        row["notes"] = notes + more
    return row


def _stats(values: list[float]) -> tuple[float, float]:
    return float(np.mean(values)), float(np.std(values))


def score_backchannel(root: Path, out_dir: Path, compat: bool,
                      options: PeerOptions) -> tuple[Rows, dict[str, Any]]:
    """``eval_backchannel.py``: per sample ``TOR``, ``freq`` (1/s) and ``JSD``; aggregate
    mean and population std of each (numpy), under the names FDB prints."""
    references = read_reference_distribution(options.reference_distribution)
    folders = [p for p in sorted(root.iterdir(), key=lambda p: p.name)
               if p.name.isdigit() and not inside(p, out_dir)]
    rows: Rows = []
    previous: int | None = None
    for folder in folders:
        row = _backchannel_row(folder, compat, previous, references,
                               options.reference_distribution)
        previous = row["TOR"]
        rows.append(row)
    if not rows:
        raise DuplexevalError(f"{root}: no digit-named sample folder")
    jsd, tor, freq = (_stats([r[k] for r in rows]) for k in ("JSD", "TOR", "freq"))
    return rows, {"JSD - Mean": jsd[0], "JSD - Std": jsd[1], "TOR - Mean": tor[0],
                  "TOR - Std": tor[1], "Frequency - Mean": freq[0], "Frequency - Std": freq[1],
                  "Number of samples": len(rows)}


def _timing_row(root: Path, folder: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"sample": folder.relative_to(root).as_posix()}
    if not ((folder / INPUT_WAV).exists() and (folder / OUTPUT_WAV).exists()):
        return {**row, "skipped": "needs input.wav and output.wav"}
    user, user_source = speech_segments(folder, INPUT_WAV)
    model, model_source = speech_segments(folder, OUTPUT_WAV)
    user = merge_segments(on_16k_grid(user), USER_MERGE_GAP_S)
    model = merge_segments(on_16k_grid(model), MODEL_MERGE_GAP_S)
    row["latency_stop_list"] = stop_latency_intervals(user, model)
    row["latency_resp_list"] = response_latency_intervals(user, model)
    if "silero" in (user_source, model_source):
        row["notes"] = ["segments from our Silero VAD (no vad_segments.json)"]
    return row


def score_timing(root: Path, out_dir: Path, compat: bool,
                 options: PeerOptions) -> tuple[Rows, dict[str, Any]]:
    """``get_timing.py``: per sample the stop and response latency intervals
    (``[start, end]`` seconds, rounded to ms); aggregate: the mean interval length of each
    list pooled over samples, and the counts.  Both modes compute the same."""
    rows = [_timing_row(root, p) for p in sorted(root.iterdir(), key=lambda p: str(p))
            if p.is_dir() and not inside(p, out_dir)]
    scored = [r for r in rows if "skipped" not in r]
    if not scored:
        raise DuplexevalError(f"{root}: no folder holds both input.wav and output.wav")
    stops = [d for r in scored for d in interval_lengths(r["latency_stop_list"])]
    resps = [d for r in scored for d in interval_lengths(r["latency_resp_list"])]
    return rows, {"Stop latency - Mean": mean_or_none(stops),
                  "Response latency - Mean": mean_or_none(resps),
                  "Number of stop intervals": len(stops),
                  "Number of response intervals": len(resps),
                  "Number of samples": len(scored)}
