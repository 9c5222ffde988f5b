"""How accurate is the analysis?  ``scripted`` logs exactly where its speech is; this runs it
on the demo datasets (bundled English, plus the M3 toy sets when present) under the three
protocols, analyses the output audio with each VAD engine (ASR off), and prints the distribution
of segment-boundary errors and the agreement of the M3 timing metrics with those computed from
the logged truth.

Usage: .venv/bin/python benchmarks/analysis_accuracy.py [--engines silero,energy,webrtc]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from duplexeval.analysis.pipeline import AnalysisOptions, analyze_run
from duplexeval.data.validate import Need, load_dataset
from duplexeval.data.voice_bursts import voice_bursts
from duplexeval.demo import default_datasets
from duplexeval.metrics import get_variant
from duplexeval.metrics.accuracy import boundary_errors, compare_scores, describe
from duplexeval.metrics.m3_outputs import read_m3_outputs
from duplexeval.metrics.scoring import score_events
from duplexeval.protocols import PlanOptions, Protocol, build_plan
from duplexeval.runs import execute_run
from duplexeval.speech.activity import ActivityOptions, VadEngine
from duplexeval.systems.registry import load_system

SETTINGS = [
    (Protocol.MULTI_GEN, {"jitter": "0.15"}),
    (Protocol.SINGLE, {"jitter": "0.15", "delay": "0.5"}),
    (Protocol.MULTI_REF, {"ignore_shorter": "0.6", "stop_delay": "0.4"}),
]


def make_runs(root: Path) -> list[Path]:
    runs = []
    for demo in default_datasets():
        source, _ = load_dataset(demo.root, alignment=Need.REQUIRE)
        voice_bursts(source, root / "data" / demo.name, 16000)
        dataset, _ = load_dataset(root / "data" / demo.name, audio=Need.REQUIRE)
        for protocol, args in SETTINGS:
            plan = build_plan(dataset.dialogues,
                              PlanOptions(protocol=protocol, channels=demo.channels))
            out = root / f"{demo.name}-{protocol.value}"
            execute_run(load_system("scripted", args), dataset, plan, out, seed=1,
                        progress=False)
            runs.append(out)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="silero,energy,webrtc")
    args = parser.parse_args()
    m3 = get_variant("m3")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = make_runs(root)
        truth = {run: read_m3_outputs(analyze_run(run, truth=True, progress=False))[0]
                 for run in runs}
        print(f"{len(runs)} runs of scripted, "
              f"{sum(len(v) for v in truth.values())} events")
        for engine in args.engines.split(","):
            options = AnalysisOptions(vad=ActivityOptions(engine=VadEngine(engine)), asr="none")
            onsets, offsets, latencies = [], [], []
            verdicts = equal = one_sided = 0
            for run in runs:
                analysed = read_m3_outputs(analyze_run(run, options, progress=False,
                                                       cache=root / "cache"))[0]
                on, off = boundary_errors(truth[run], analysed)
                onsets += on
                offsets += off
                agreement = compare_scores(score_events(truth[run], m3),
                                           score_events(analysed, m3))
                verdicts += agreement.verdicts
                equal += agreement.verdicts_equal
                latencies += agreement.latency_errors
                one_sided += agreement.both_defined_mismatch
            print(f"\n{engine}")
            print(f"  onsets    {describe(onsets)}")
            print(f"  offsets   {describe(offsets)}")
            print(f"  TOR/is_speaking verdicts equal: {equal}/{verdicts} "
                  f"({equal / max(verdicts, 1) * 100:.1f} %)")
            ok = sum(e <= 0.05 + 1e-9 for e in latencies)
            print(f"  latencies {describe(latencies)}; defined on one side only: {one_sided}; "
                  f"within 50 ms overall {ok / max(len(latencies) + one_sided, 1) * 100:.1f} %")


if __name__ == "__main__":
    main()
