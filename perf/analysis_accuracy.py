"""How accurate is the analysis?  ``scripted`` logs exactly where its speech is; this runs it
under the three protocols (``duplexeval.metrics._accuracy.ACCURACY_PROTOCOLS``), analyses the
output audio with each VAD engine (ASR off), and prints boundary precision and recall at 50 ms
(one-to-one matching), the agreement of the M3 verdicts per event kind, and the agreement of
the latencies where both sides have a real one (how many did is printed too).

Two data sets, printed separately:

* ``sample-en`` - the bundled English sample voiced with the clip bank: the figures the README
  quotes and ``tests/test_analysis.py`` checks (same runs, same thresholds);
* ``m3-toy-ja`` - the official M3 toy data voiced the same way, only when ``../shared/m3_toy``
  (or ``$DUPLEXEVAL_M3_TOY``) is present; third-party data, not checked in CI.

Usage: .venv/bin/python perf/analysis_accuracy.py [--engines silero,energy,webrtc]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from duplexeval.analysis._pipeline import AnalysisOptions, analyze_run
from duplexeval.app._demo import DemoDataset, default_datasets
from duplexeval.data import Need, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.metrics import get_variant
from duplexeval.metrics._accuracy import (
    ACCURACY_PROTOCOLS,
    Agreement,
    BoundaryMatch,
    boundary_matches,
    compare_scores,
    report_lines,
)
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._scoring import score_events
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import execute_run
from duplexeval.speech._activity import ActivityOptions, VadEngine
from duplexeval.systems import load_system

GROUPS = {
    "sample-en": "sample-en (bundled, voiced with the clip bank; README figures, checked by "
                 "tests/test_analysis.py)",
    "m3-toy-ja": "m3-toy-ja (official toy chat + task data voiced with the clip bank; "
                 "third-party, not in CI)",
}


def make_runs(root: Path, demo: DemoDataset) -> list[tuple[str, Path]]:
    """(protocol, run directory): ``scripted`` under every accuracy protocol on ``demo``
    voiced with the clip bank."""
    source, _ = load_dataset(demo.root, alignment=Need.REQUIRE)
    voice_bursts(source, root / "data" / demo.name, 16000)
    dataset, _ = load_dataset(root / "data" / demo.name, audio=Need.REQUIRE)
    runs = []
    for protocol, args in ACCURACY_PROTOCOLS:
        plan = build_plan(dataset.dialogues,
                          PlanOptions(protocol=EvalProtocol(protocol), channels=demo.channels))
        out = root / f"{demo.name}-{protocol}"
        execute_run(load_system("scripted", args), dataset, plan, out, seed=1, progress=False)
        runs.append((protocol, out))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="silero,energy,webrtc")
    args = parser.parse_args()
    m3 = get_variant("m3")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        groups: dict[str, list[tuple[str, Path]]] = {}
        for demo in default_datasets():
            group = "sample-en" if demo.name == "sample-en" else "m3-toy-ja"
            groups.setdefault(group, []).extend(make_runs(root, demo))
        truth = {run: read_m3_outputs(analyze_run(run, truth=True, progress=False))[0]
                 for runs in groups.values() for _, run in runs}
        for group, runs in groups.items():
            events = sum(len(truth[r]) for _, r in runs)
            print(f"\n== {GROUPS[group]}: {len(runs)} runs of scripted, {events} events")
            print("   (multi-ref: the model channel before the event start is the reference "
                  "system's teacher-forced audio, which scripted does not log; segments there "
                  "are left out of the boundary figures on both sides)")
            for engine in args.engines.split(","):
                options = AnalysisOptions(vad=ActivityOptions(engine=VadEngine(engine)),
                                          asr="none")
                bounds = {"onset": BoundaryMatch(0, 0), "offset": BoundaryMatch(0, 0)}
                agreement = Agreement()
                for protocol, run in runs:
                    analysed = read_m3_outputs(analyze_run(run, options, progress=False,
                                                           cache=root / "cache"))[0]
                    for kind, match in boundary_matches(
                            truth[run], analysed,
                            reference_before_event=protocol == "multi-ref").items():
                        bounds[kind] = bounds[kind] + match
                    agreement = agreement + compare_scores(score_events(truth[run], m3),
                                                           score_events(analysed, m3))
                print(f"\n[{group}] {engine}")
                for line in report_lines(bounds, agreement):
                    print(f"  {line}")
        if "m3-toy-ja" not in groups:
            print("\n(m3-toy-ja skipped: the official toy data was not found)")


if __name__ == "__main__":
    main()
