"""Boundary accuracy of each voice activity engine on clip-bank speech at known intervals.

Test signals: per language (en, ja) and noise level (none, -65 and -55 dBFS white noise), two
channels ("stereo-like", each analysed on its own) of clips from the packaged clip bank placed
at known sample intervals, 16 kHz:

    |  1 s  |==clip==| gap |=bc=| gap |=cut=|   ...     gaps 0.2-1.5 s, gains 0 to -12 dB

Items are whole utterances (60 %), whole backchannels (20 %) and clips cut to 0.1-0.5 s with
5 ms fades (20 %).  The truth of an item is its placement interval (the clips are trimmed
synthetic speech with 10-30 ms of quiet lead-in and tail).

Scoring per item: the detected spans overlapping its interval; onset error = first span's start
- item start, offset error = last span's end - item end (so pauses inside an utterance do not
count).  An item no span overlaps is missed: both its boundaries count as errors.  A detected
span that bridges two items gives the first item a large offset error.  False spans: detected
spans overlapping no item.

Usage: .venv/bin/python perf/vad_accuracy.py [--seed N] [--items N]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity
from duplexeval.speech._clipbank import ClipBank, fill_span
from duplexeval.timeline import Span

SR = 16_000
NOISE_DBFS = (None, -65.0, -55.0)
AUDIBLE_DB = 50.0

ENGINES: dict[str, ActivityOptions] = {
    "energy": ActivityOptions(engine=VadEngine.ENERGY),
    "webrtc": ActivityOptions(engine=VadEngine.WEBRTC),
    "silero (raw)": ActivityOptions(engine=VadEngine.SILERO, refine=False),
    "silero+energy": ActivityOptions(engine=VadEngine.SILERO),
    "silero+rescue": ActivityOptions(engine=VadEngine.SILERO, rescue_threshold=0.3),
}


@dataclass
class Signal:
    name: str
    audio: np.ndarray
    truth: list[Span]


def audible_extent(clip: np.ndarray, below_peak_db: float = AUDIBLE_DB) -> tuple[int, int]:
    """``[first, last + 1)``: the samples of ``clip`` within ``below_peak_db`` of its peak."""
    loud = np.flatnonzero(np.abs(clip) >= np.abs(clip).max() * 10 ** (-below_peak_db / 20))
    return int(loud[0]), int(loud[-1]) + 1


def build_signal(bank: ClipBank, language: str, noise_dbfs: float | None, items: int,
                 rng: np.random.Generator, name: str, audible: bool) -> Signal:
    utterances = bank.clips(language, "utterance")
    backchannels = bank.clips(language, "backchannel")
    pieces: list[np.ndarray] = [np.zeros(SR, dtype=np.float32)]
    truth: list[Span] = []
    pos = SR
    for _ in range(items):
        kind = rng.choice(3, p=[0.6, 0.2, 0.2])
        if kind == 0:
            clip = utterances[rng.integers(len(utterances))].audio
        elif kind == 1:
            clip = backchannels[rng.integers(len(backchannels))].audio
        else:
            source = utterances[rng.integers(len(utterances))].audio
            clip = fill_span(source, round(rng.uniform(0.1, 0.5) * SR), SR)
        gain = 10 ** (rng.uniform(-12.0, 0.0) / 20)
        pieces.append((clip * gain).astype(np.float32))
        lead, tail = audible_extent(clip) if audible else (0, len(clip))
        truth.append(Span((pos + lead) / SR, (pos + tail) / SR))
        pos += len(clip)
        gap = round(rng.uniform(0.2, 1.5) * SR)
        pieces.append(np.zeros(gap, dtype=np.float32))
        pos += gap
    pieces.append(np.zeros(SR, dtype=np.float32))
    audio = np.concatenate(pieces)
    if noise_dbfs is not None:
        audio += rng.normal(0.0, 10 ** (noise_dbfs / 20), len(audio)).astype(np.float32)
    return Signal(name, audio, truth)


def build_signals(items: int, seed: int, audible: bool) -> list[Signal]:
    bank = ClipBank.load()
    rng = np.random.default_rng(seed)
    signals = []
    for language in ("en", "ja"):
        for noise in NOISE_DBFS:
            for channel in (0, 1):
                label = "clean" if noise is None else f"noise {noise:.0f} dBFS"
                signals.append(build_signal(bank, language, noise, items, rng,
                                            f"{language} {label} ch{channel}", audible))
    return signals


@dataclass
class Score:
    onset: list[float]
    offset: list[float]
    missed: int = 0
    false_spans: int = 0
    items: int = 0


def score(spans: list[Span], truth: list[Span], out: Score) -> None:
    for item in truth:
        out.items += 1
        hits = [s for s in spans if s.overlaps(item)]
        if not hits:
            out.missed += 1
            out.onset.append(np.inf)
            out.offset.append(np.inf)
            continue
        out.onset.append(hits[0].start - item.start)
        out.offset.append(hits[-1].end - item.end)
    out.false_spans += sum(1 for s in spans if not any(s.overlaps(t) for t in truth))


def describe(errors: list[float]) -> str:
    e = np.abs(np.array(errors))
    finite = e[np.isfinite(e)]
    med = np.median(finite) * 1000 if len(finite) else np.nan
    p95 = np.percentile(e, 95) * 1000 if np.isfinite(np.percentile(e, 95)) else np.inf
    signed = np.array(errors)
    signed = signed[np.isfinite(signed)]
    sign = np.median(signed) * 1000 if len(signed) else np.nan
    return f"{sign:+6.1f} {med:5.1f} {p95:6.1f} {np.mean(e <= 0.05) * 100:5.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--items", type=int, default=40, help="clips per channel")
    parser.add_argument("--by-signal", action="store_true", help="also one row per signal")
    parser.add_argument("--placement", action="store_true",
                        help="truth = whole clip placement (default: its audible extent)")
    args = parser.parse_args()
    signals = build_signals(args.items, args.seed, not args.placement)
    seconds = sum(len(s.audio) for s in signals) / SR
    print(f"{len(signals)} signals, {seconds / 60:.1f} min of audio, "
          f"{sum(len(s.truth) for s in signals)} items, {2 * sum(len(s.truth) for s in signals)}"
          " boundaries\n")
    print("errors detected - true in ms: signed median, |median|, |p95| (misses count as "
          "infinite), share within 50 ms\n")
    header = (f"{'engine':<16}{'onset med/|med|/p95/<=50':>29}{'offset med/|med|/p95/<=50':>30}"
              f"{'all <=50ms':>12}{'missed':>8}{'false':>7}{'time':>8}")
    print(header)
    for name, opts in ENGINES.items():
        total = Score([], [])
        rows = []
        start = time.perf_counter()
        for signal in signals:
            spans = detect_activity(signal.audio, SR, opts)
            one = Score([], [])
            score(spans, signal.truth, one)
            rows.append((signal.name, one))
            total.onset += one.onset
            total.offset += one.offset
            total.missed += one.missed
            total.false_spans += one.false_spans
            total.items += one.items
        elapsed = time.perf_counter() - start
        both = np.abs(np.array(total.onset + total.offset))
        print(f"{name:<16}{describe(total.onset):>29}{describe(total.offset):>30}"
              f"{np.mean(both <= 0.05) * 100:>11.1f}%{total.missed:>8}{total.false_spans:>7}"
              f"{elapsed:>7.1f}s")
        if args.by_signal:
            for signal_name, one in rows:
                both = np.abs(np.array(one.onset + one.offset))
                print(f"  {signal_name:<22}{describe(one.onset):>21}{describe(one.offset):>30}"
                      f"{np.mean(both <= 0.05) * 100:>11.1f}%{one.missed:>8}{one.false_spans:>7}")


if __name__ == "__main__":
    main()
