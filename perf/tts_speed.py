"""Speed of every installed TTS engine: load time, real-time factor, determinism, word timing.

Each engine runs in a fresh interpreter (skipped with its reason when not installed): the time
to import its packages, build it and load its models, then each test sentence synthesized once
to warm up and ``--repeats`` times measured.
RTF = synthesis time / audio duration (lower is faster), over all sentences together.
"same" says whether every repeat gave bit-identical audio.

Usage: .venv/bin/python perf/tts_speed.py [--repeats N] [--engine NAME ...]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from duplexeval.report._text import format_table
from duplexeval.speech._tts import ENGINES, engine_class, load_engine

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything here is offline

SENTENCES = {
    "en": ["Sure, I can help with that.",
           "Could you say that one more time? It takes about twenty minutes by train.",
           "Maybe we can try again next week, if that works for you."],
    "ja": ["はい、お手伝いできますよ。",
           "もう一度言っていただけますか？電車で二十分くらいです。",
           "また来週やってみましょうか、都合がよければ。"],
}


def measure(name: str, repeats: int) -> list[object]:
    """One table row for engine ``name``."""
    start = time.perf_counter()
    engine = load_engine(name)
    engine.load()
    load_s = time.perf_counter() - start
    texts = SENTENCES[engine.language]
    audio_s = synth_s = 0.0
    same = True
    words = 0
    rate = 0
    for text in texts:
        first = engine.synthesize(text)  # warm-up, and the reference for determinism
        rate, words = first.sample_rate, words + len(first.words)
        for _ in range(repeats):
            start = time.perf_counter()
            utt = engine.synthesize(text)
            synth_s += time.perf_counter() - start
            audio_s += utt.duration
            same = same and utt.audio.tobytes() == first.audio.tobytes()
    timing = f"{words} words" if words else "none"
    return [name, engine.language, rate, f"{load_s:.2f} s", f"{audio_s / repeats:.1f} s",
            f"{synth_s / audio_s:.3f}", "yes" if same else "NO", timing,
            ", ".join(engine.voices())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="measured runs per sentence")
    parser.add_argument("--engine", action="append", choices=sorted(ENGINES),
                        help="engine to measure (repeatable; default: all)")
    args = parser.parse_args(argv)
    rows, skipped = [], []
    for name in args.engine or sorted(ENGINES):
        reason = engine_class(name).unavailable_reason()
        if reason is not None:
            skipped.append(f"{name}: skipped ({reason})")
            continue
        # a fresh interpreter per engine: load times include imports no other engine shared
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows.append(pool.submit(measure, name, args.repeats).result())
    header = ["engine", "lang", "Hz", "load", "audio", "RTF", "same", "word timing", "voices"]
    print("\n".join(format_table(header, rows)))
    for line in skipped:
        print(line)
    print(f"{os.cpu_count()} CPU(s); {args.repeats} measured run(s) per sentence after a warm-up")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
