"""How fast ``duplexeval analyze`` is against the audio it analyses and the run that made it.

The case the performance issue names: the ``reference`` system's multi-gen run of the
``m3-chat-en`` quick subset, analysed from a cold analysis cache, with the default settings
(timing ASR plus the content transcripts of the TURN_SHIFT samples) and with the timing scope
alone (``content_event_types=()``, ``duplexeval analyze --scope timing``).  For each it prints
seconds of stereo sample audio over wall seconds (the real-time factor), the wall seconds per
stage (voice activity, Whisper, the rest), beside the run's own wall time, and checks that the
analysis folder is byte-identical to a single-process analysis (``--processes 1``).

Usage: .venv/bin/python perf/analysis_speed.py [--suite m3-chat-en] [--processes N]
       [--compute-type int8] [--beam-size 5] [--no-single]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import soundfile as sf

from duplexeval.analysis import _pipeline as pipeline
from duplexeval.analysis._pipeline import AnalysisOptions, analyze_run
from duplexeval.cli import main as cli
from duplexeval.runs import RunDir
from duplexeval.speech._asr import Transcriber
from duplexeval.speech._asr_pool import default_processes
from duplexeval.suites import build_suite


class Stages:
    """Wall seconds spent in voice activity and in Whisper (wrapped where the pipeline calls
    them), the rest being reading, hashing and writing."""

    def __init__(self) -> None:
        self.seconds = {"vad": 0.0, "asr": 0.0}

    @contextmanager
    def installed(self) -> Iterator[None]:
        vad, many = pipeline.detect_activity_many, Transcriber.transcribe_many
        pipeline.detect_activity_many = self._timed("vad", vad)  # type: ignore[assignment]
        Transcriber.transcribe_many = self._timed("asr", many)  # type: ignore[method-assign]
        try:
            yield
        finally:
            pipeline.detect_activity_many = vad  # type: ignore[assignment]
            Transcriber.transcribe_many = many  # type: ignore[method-assign]

    def _timed(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - start
        return wrapper


def audio_seconds(run: Path) -> float:
    rd = RunDir(run)
    return sum(sf.info(str(rd.output_audio(row))).duration for row in rd.read_metadata())


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def analyse(run: Path, options: AnalysisOptions, cache: Path, transcriber: dict[str, Any],
            ) -> tuple[float, Stages, dict[str, bytes]]:
    """Wall seconds, stage times and the analysis folder of one cold analysis."""
    processes = options.asr_processes or default_processes()
    key = (options.asr, processes)
    pipeline._TRANSCRIBERS[key] = Transcriber(processes=processes, **transcriber)
    stages = Stages()
    with stages.installed():
        start = time.perf_counter()
        folder = analyze_run(run, options, progress=False, cache=cache)
        wall = time.perf_counter() - start
    pipeline._TRANSCRIBERS.pop(key).close()
    return wall, stages, folder_bytes(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="m3-chat-en")
    parser.add_argument("--processes", type=int, default=None,
                        help=f"Whisper worker processes (default {default_processes()} here)")
    parser.add_argument("--compute-type", default="int8")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--no-single", action="store_true",
                        help="skip the single-process analyses (no identity check)")
    args = parser.parse_args()
    transcriber = {"compute_type": args.compute_type, "beam_size": args.beam_size}
    data = build_suite(args.suite, limit="quick", progress=False, log=lambda s: None)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        start = time.perf_counter()
        assert cli(["run", "--system", "reference", "--dataset", str(data), "--protocol",
                    "multi-gen", "--out", str(run)]) == 0
        run_wall = time.perf_counter() - start
        seconds = audio_seconds(run)
        print(f"{args.suite} quick, reference multi-gen: {seconds:.0f} s of stereo sample audio "
              f"in {len(RunDir(run).read_metadata())} samples; the run took {run_wall:.1f} s")
        print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}, "
              f"{platform.python_version()}; compute type {args.compute_type}, "
              f"beam {args.beam_size}")
        scopes = {"default": AnalysisOptions(),
                  "timing": replace(AnalysisOptions(), content_event_types=())}
        counts = [args.processes or default_processes()] + ([] if args.no_single else [1])
        outputs: dict[tuple[str, int], dict[str, bytes]] = {}
        for scope, options in scopes.items():
            for processes in dict.fromkeys(counts):
                cache = Path(tmp) / f"cache-{scope}-{processes}"
                wall, stages, out = analyse(run, replace(options, asr_processes=processes),
                                            cache, transcriber)
                outputs[scope, processes] = out
                rest = wall - stages.seconds["vad"] - stages.seconds["asr"]
                print(f"  {scope:7s} scope, {processes} process(es): {wall:6.1f} s wall, "
                      f"{seconds / wall:5.1f}x real time ({wall / run_wall:4.2f}x the run); "
                      f"vad {stages.seconds['vad']:.1f} s, asr {stages.seconds['asr']:.1f} s, "
                      f"rest {rest:.1f} s")
            if len(set(counts)) > 1:
                same = outputs[scope, counts[0]] == outputs[scope, 1]
                print(f"  {scope} scope: analysis folder identical to one process's: {same}")


if __name__ == "__main__":
    main()
