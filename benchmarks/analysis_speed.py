"""Speed of ``duplexeval analyze`` with VAD only: one hour of two-channel output audio (360
samples of 10 s, clip-bank speech on both channels at 16 kHz) analysed from a cold cache, per VAD
engine, and again from the warm cache.

Usage: .venv/bin/python benchmarks/analysis_speed.py [--minutes 60] [--engines silero,energy]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from duplexeval.analysis.pipeline import AnalysisOptions, analyze_run
from duplexeval.speech.activity import ActivityOptions, VadEngine
from duplexeval.speech.clipbank import ClipBank

RATE = 16000
SAMPLE_S = 10.0


def make_run(root: Path, minutes: float) -> None:
    """A run directory whose samples alternate clip-bank speech between the channels."""
    bank = ClipBank.load()
    clips = [c.resampled(RATE) for lang in bank.languages() for c in bank.clips(lang)]
    rng = np.random.default_rng(0)
    lines = []
    for i in range(round(minutes * 60 / SAMPLE_S)):
        x = np.zeros((round(SAMPLE_S * RATE), 2), np.float32)
        t, channel = 0.2, i % 2
        while True:
            clip = clips[int(rng.integers(len(clips)))]
            a = round(t * RATE)
            if a + len(clip) > len(x):
                break
            x[a:a + len(clip), channel] = clip
            t += len(clip) / RATE + float(rng.uniform(0.1, 1.2))
            channel = 1 - channel
        rel = f"samples/d{i // 20:03d}/e{i:05d}.wav"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        sf.write(str(root / rel), x, RATE, subtype="PCM_24")
        lines.append(json.dumps({"sample_id": f"d{i // 20:03d}", "event_id": f"e{i:05d}",
                                 "event_type": "TURN_SHIFT", "input_start": 0.0,
                                 "input_end": SAMPLE_S, "event_start": 1.0, "event_end": 1.2,
                                 "output_audio_path": rel}))
    (root / "metadata.jsonl").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--engines", default="silero,energy,webrtc")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        make_run(run, args.minutes)
        hours = args.minutes / 60
        for engine in args.engines.split(","):
            options = AnalysisOptions(vad=ActivityOptions(engine=VadEngine(engine)), asr="none")
            cache = Path(tmp) / f"cache-{engine}"
            start = time.perf_counter()
            analyze_run(run, options, progress=False, cache=cache)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            analyze_run(run, options, progress=False, cache=cache)
            warm = time.perf_counter() - start
            print(f"{engine:7s} {cold / hours:6.1f} s per hour of two-channel audio (cold cache), "
                  f"{warm / hours:5.1f} s warm")


if __name__ == "__main__":
    main()
