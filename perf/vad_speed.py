"""Speed of each voice activity engine: seconds of processing per hour of two-channel audio.

The audio is clip-bank speech (about half of the time) with gaps and -65 dBFS noise, tiled to
``--minutes`` per channel; the two channels are analysed one after the other, as the annotator
does.  Budget for the default analysis: 30 s per hour of two-channel audio on a 2-core machine.

Usage: .venv/bin/python perf/vad_speed.py [--minutes 60] [--rate 16000]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity
from duplexeval.speech._clipbank import ClipBank

ENGINES: dict[str, ActivityOptions] = {
    "energy": ActivityOptions(engine=VadEngine.ENERGY),
    "webrtc": ActivityOptions(engine=VadEngine.WEBRTC),
    "silero (raw)": ActivityOptions(engine=VadEngine.SILERO, refine=False),
    "silero+energy": ActivityOptions(engine=VadEngine.SILERO),
}


def channel(minutes: float, rate: int, seed: int) -> np.ndarray:
    """``minutes`` of speech and silence at ``rate`` Hz (float32)."""
    bank = ClipBank.load()
    clips = [c.resampled(rate) for lang in bank.languages() for c in bank.clips(lang)]
    rng = np.random.default_rng(seed)
    pieces, total = [], 0
    block = round(300 * rate)  # build 5 minutes, then tile
    while total < block:
        clip = clips[rng.integers(len(clips))]
        gap = np.zeros(round(rng.uniform(0.2, 2.5) * rate), dtype=np.float32)
        pieces += [clip, gap]
        total += len(clip) + len(gap)
    five = np.concatenate(pieces)[:block]
    n = round(minutes * 60 * rate)
    out = np.resize(five, n).astype(np.float32)
    out += rng.normal(0.0, 10 ** (-65 / 20), n).astype(np.float32)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="audio length per channel")
    parser.add_argument("--rate", type=int, default=16000, help="sample rate in Hz")
    args = parser.parse_args()
    channels = [channel(args.minutes, args.rate, seed) for seed in (0, 1)]
    # load the Silero model outside the timing
    detect_activity(channels[0][: args.rate], args.rate, ENGINES["silero+energy"])
    print(f"{args.minutes:g} min x 2 channels at {args.rate} Hz\n")
    print(f"{'engine':<16}{'s per hour (2 ch)':>18}{'RTF':>10}{'spans':>8}")
    for name, opts in ENGINES.items():
        start = time.perf_counter()
        spans = sum(len(detect_activity(ch, args.rate, opts)) for ch in channels)
        elapsed = time.perf_counter() - start
        per_hour = elapsed * 60 / args.minutes
        rtf = elapsed / (2 * args.minutes * 60)
        print(f"{name:<16}{per_hour:>17.1f}s{rtf:>10.5f}{spans:>8}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory (whole process): {peak:.0f} MB")


if __name__ == "__main__":
    main()
