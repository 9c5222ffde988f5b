"""Speed of the ``cascade`` system: per-stage compute (its latency-budget defaults) and the
real-time factor of whole runs.

Stages, each timed on a fresh engine after one warm-up call, median over the items:

* ASR: Whisper base int8 (the system's settings, its window ladder) on every user turn of the
  ``m3-qa-en`` dialogues, cut as the system cuts it (``pre_roll`` before the first word to
  ``eot_silence`` after the last); and the same turns in version 2's one 20-s window;
* responder: the built-in retrieval responder on those turns' ASR text;
* TTS time to first audio: synthesis of the first sentence of each reply it gives (the
  reference answers) plus resampling to 16 kHz.

These medians are the defaults of ``asr_latency``, ``llm_latency`` and ``tts_latency``
(:mod:`duplexeval.systems.builtin.cascade._config`).  Then whole runs, with the system's own caches:
RTF = wall seconds / audio seconds stepped (frames x 80 ms), for multi-gen (shared prefix, both
user channels) on ``m3-chat-en`` and one continuous pass over each chat dialogue, and the
turn-taking scores of a multi-gen run on ``m3-qa-en`` (from the logged truth).

Usage: .venv/bin/python perf/cascade_speed.py [--qa N] [--chat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from duplexeval.data import Dataset, Need, load_dataset
from duplexeval.events import EventKind
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.report._text import format_table
from duplexeval.runs import execute_run
from duplexeval.runs._session_view import session_spec
from duplexeval.speech._asr import Transcriber
from duplexeval.speech._short_window import ladder_window
from duplexeval.suites import build_suite, get_suite
from duplexeval.systems import load_system
from duplexeval.systems.builtin.cascade import CascadeConfig, CascadeSystem
from duplexeval.systems.builtin.cascade._engines import Engines
from duplexeval.systems.builtin.cascade._responder import best_match
from duplexeval.systems.builtin.cascade._voice import split_sentences

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything here is offline
SR = 16_000


def _dataset(name: str, limit: int) -> Dataset:
    dataset, _ = load_dataset(build_suite(name, limit=limit, progress=False), audio=Need.REQUIRE)
    return dataset


def _timed(fn, *args):  # type: ignore[no-untyped-def]
    """``fn(*args)``, its wall seconds and this process's CPU seconds (all threads)."""
    start, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    return result, time.perf_counter() - start, time.process_time() - cpu


def _row(stage: str, timings: list[tuple[float, float]], what: str) -> list[object]:
    wall = [w for w, _ in timings]
    return [stage, len(wall), f"{statistics.median(wall):.4f}",
            f"{float(np.percentile(wall, 90)):.4f}",
            f"{statistics.median(c for _, c in timings):.4f}", what]


def stage_times(qa: Dataset) -> list[list[object]]:
    """Compute per stage (rows: stage, items, median and p90 wall s, median CPU s, on what).

    CPU seconds add up all threads; wall seconds grow when other jobs share the cores (note
    the load average printed with the table)."""
    config = CascadeConfig()
    engines = Engines(config, SR)
    turns, refs = [], []
    for d in qa.dialogues:
        assert d.audio is not None
        x, _ = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
        for e in d.events:
            if e.kind is EventKind.TURN and e.channel == 0:
                a = round((e.start - config.pre_roll) * SR)
                b = round((e.end + config.eot_silence) * SR)
                turns.append(x[max(0, a):b, 0].copy())
                refs.append(list(d.extra.get("qa_references", ())))
    transcriber = Transcriber(config.asr_model, beam_size=config.asr_beam)
    transcriber.transcribe_text(turns[0], SR, "en", window=config.asr_window)  # warm-up
    asr, fixed, texts = [], [], []
    for turn in turns:  # the system's window (version 3's ladder), then version 2's fixed one
        window = ladder_window(len(turn) / SR, config.asr_window_min, config.asr_window)
        text, wall, cpu = _timed(transcriber.transcribe_text, turn, SR, "en", window)
        texts.append(text)
        asr.append((wall, cpu))
        fixed.append(_timed(transcriber.transcribe_text, turn, SR, "en",
                            config.asr_window)[1:])
    respond, answers = [], []
    for text, references in zip(texts, refs, strict=True):
        match, wall, cpu = _timed(best_match, text, references)
        respond.append((wall, cpu))
        if match is not None and match.score >= config.match_threshold:
            answers.append(match.answer)
    engine = engines.voice("en").engine
    engine.synthesize("Warm up.")

    def first_audio(text: str) -> np.ndarray:
        utt = engine.synthesize(split_sentences(text)[0])
        return soxr.resample(utt.audio, utt.sample_rate, SR)

    tts = [_timed(first_audio, answer)[1:] for answer in answers]
    durations = [len(t) / SR for t in turns]
    return [
        _row("asr", asr, f"user turns, median {statistics.median(durations):.2f} s of audio"),
        _row("asr, fixed window", fixed, f"the same turns in one {config.asr_window:g}-s "
             "window (version 2)"),
        _row("responder", respond, "retrieval over the dialogue's questions"),
        _row("tts first audio", tts, "first sentence of each reply, piper + resample"),
    ]


def rtf_multi_gen(dataset: Dataset, channels: tuple[int, ...], out: Path) -> tuple[float, float]:
    """(wall s, stepped audio s) of a multi-gen run with a fresh system."""
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                                     channels=channels))
    start = time.perf_counter()
    result = execute_run(load_system("cascade", {}), dataset, plan, out, progress=False)
    return time.perf_counter() - start, result.model_seconds


def rtf_continuous(dataset: Dataset) -> tuple[float, float]:
    """(wall s, audio s) of one session over each whole dialogue, user = channel 0."""
    system = CascadeSystem()
    frame = system.capabilities.frame_size
    wall = audio_s = 0.0
    for d in dataset.dialogues:
        assert d.audio is not None
        x, _ = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
        user = x[:, 0]
        start = time.perf_counter()
        session = system.open(session_spec(system.capabilities, d, 1, 0))
        for k in range(0, len(user) - frame + 1, frame):
            session.step(user[k:k + frame])
        wall += time.perf_counter() - start
        audio_s += len(user) / SR
    return wall, audio_s


def qa_scores(qa: Dataset, out: Path) -> list[list[object]]:
    plan = build_plan(qa.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                                channels=get_suite("m3-qa-en").channels))
    system = load_system("cascade", {})
    execute_run(system, qa, plan, out, progress=False)
    results, _ = score_run_dir(out, truth=True, progress=False)
    declared = system.config.eot_silence + system.config.budget()  # type: ignore[attr-defined]
    rows: list[list[object]] = [["declared eot_silence + budgets", "", f"{declared:.3f}"]]
    for r in results.aggregates:
        if r.event_type in ("TURN_SHIFT", "TURN_HOLD") and r.metric.split()[0] in (
                "tor", "latency") and r.mean is not None:
            rows.append([f"{r.event_type} {r.metric}", r.n, f"{r.mean:.3f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qa", type=int, default=4, help="m3-qa-en dialogues (default 4)")
    parser.add_argument("--chat", type=int, default=2, help="m3-chat-en dialogues (default 2)")
    args = parser.parse_args()
    qa = _dataset("m3-qa-en", args.qa)
    chat = _dataset("m3-chat-en", args.chat)
    load = os.getloadavg()[0]
    stages = stage_times(qa)
    print(f"cascade stage compute (seconds) on {os.cpu_count()} cores; load average "
          f"{load:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("\n".join(format_table(["stage", "items", "median", "p90", "cpu", "on"], stages)))
    print("defaults in use: " + ", ".join(
        f"{k}={getattr(CascadeConfig(), k)}" for k in ("asr_latency", "llm_latency",
                                                       "tts_latency")))
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        wall, audio = rtf_multi_gen(chat, get_suite("m3-chat-en").channels, Path(tmp) / "mg")
        rows.append(["m3-chat-en multi-gen", f"{audio:.0f}", f"{wall:.1f}", f"{wall / audio:.3f}"])
        wall, audio = rtf_continuous(chat)
        rows.append(["m3-chat-en continuous", f"{audio:.0f}", f"{wall:.1f}",
                     f"{wall / audio:.3f}"])
        print("\nreal-time factor (wall / audio stepped)")
        print("\n".join(format_table(["run", "audio s", "wall s", "RTF"], rows)))
        print(f"\nm3-qa-en ({len(qa.dialogues)} dialogues) multi-gen, scored from the truth")
        scores = qa_scores(qa, Path(tmp) / "qa")
        print("\n".join(format_table(["metric", "n", "mean"], scores)))


if __name__ == "__main__":
    main()
