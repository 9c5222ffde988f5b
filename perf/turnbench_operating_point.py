"""The ``cascade``'s turn-taking operating point: its end-of-turn threshold ``eot_silence`` swept,
each setting run and scored with the ``turnbench`` variant, and the setting to report under
each false-positive ceiling (:mod:`duplexeval.metrics.timing._operating_point`).

Per setting: a Single-protocol run of a suite's first ``--limit`` dialogues (``m3-qa-en``)
(TURN_SHIFT and TURN_HOLD events; SHORTPAUSE too with ``--short-pauses``), unmuted (the user
goes on after a pause as in the dialogue, so a system that answers into a pause is heard doing
it, and a muted pause would never end for the system), scored from the speech the system logged
(``--truth``: no ASR of its output).  Printed: threshold, turn ends,
match rate, pauses, false-positive rate (one per pause), p10/p50/p90 latency (seconds from the
user's turn end to the first system onset in [t - 0.25, min(t + 3, next user onset)]), wall
seconds; then the operating point per ceiling.  A longer ``eot_silence`` waits out more pauses
(fewer false positives) and answers later.

Seen on this machine (2026-12-02): on ``m3-qa-en``'s first dialogue with ``--short-pauses`` the
cascade makes no false positive at any setting (13 pauses, all shorter than ``eot_silence`` plus
its 0.9 s latency budget) and its p50 latency is ``eot_silence + 0.9`` (1.10 s at 0.2 to 2.09 s at
1.2); on ``m3-chat-en``'s first dialogue (``--suite m3-chat-en``, 55 pauses) 0.2 s answers into
one pause (FP rate 0.02, p50 1.10 s) and 0.5 s into none (p50 1.39 s): the operating point is
0.2 under a ceiling of 0.05 and 0.5 under one of 0.01.

Usage: .venv/bin/python perf/turnbench_operating_point.py [--suite m3-qa-en] [--limit N]
       [--thresholds 0.2,0.4,0.6,0.9,1.2] [--ceilings 0,0.01,0.05,0.1] [--short-pauses]
       [--args KEY=VALUE,...]  (more cascade arguments, e.g. asr_latency=0)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from duplexeval.data import Need, load_dataset
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.metrics.timing._operating_point import (
    TurnTakingPoint,
    operating_point,
    turn_taking_point,
)
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.report._text import format_table
from duplexeval.runs import execute_run
from duplexeval.suites import build_suite
from duplexeval.systems import load_system

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything here is offline


def sweep(thresholds: list[float], suite: str, limit: int, short_pauses: bool,
          system_args: dict[str, str], work: Path) -> list[tuple[TurnTakingPoint, float]]:
    """Each threshold's point and the wall seconds of its run and scoring."""
    dataset, _ = load_dataset(build_suite(suite, limit=limit, progress=False),
                              audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues,
                      PlanOptions(protocol=EvalProtocol.SINGLE, include_short_pause=short_pauses,
                                  mute=False))
    out = []
    for threshold in thresholds:
        start = time.perf_counter()
        run = work / f"eot-{threshold}"
        system = load_system("cascade", {**system_args, "eot_silence": str(threshold)})
        execute_run(system, dataset, plan, run, seed=1, progress=False)
        results, _ = score_run_dir(run, variant="turnbench", truth=True, progress=False)
        out.append((turn_taking_point(threshold, results.events),
                    time.perf_counter() - start))
    return out


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="m3-qa-en")
    parser.add_argument("--limit", type=int, default=1)
    parser.add_argument("--args", default="", help="more cascade arguments: KEY=VALUE,...")
    parser.add_argument("--thresholds", default="0.2,0.4,0.6,0.9,1.2")
    parser.add_argument("--ceilings", default="0,0.01,0.05,0.1")
    parser.add_argument("--short-pauses", action="store_true")
    args = parser.parse_args()
    thresholds = [float(x) for x in args.thresholds.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        system_args = dict(kv.split("=", 1) for kv in args.args.split(",") if kv)
        points = sweep(thresholds, args.suite, args.limit, args.short_pauses, system_args,
                       Path(tmp))
    rows = [[_fmt(p.threshold), p.turn_ends, _fmt(p.match_rate), p.pauses,
             _fmt(p.false_positive_rate)]
            + [_fmt(p.latency[q] if p.latency else None) for q in ("p10", "p50", "p90")]
            + [f"{wall:.1f}"] for p, wall in points]
    print(f"cascade {args.args or '(defaults)'} on {args.suite} (first {args.limit} "
          f"dialogue(s)), Single unmuted, truth segments")
    print("\n".join(format_table(["eot_silence", "turn ends", "match", "pauses", "FP rate", "p10 s",
                                   "p50 s", "p90 s", "wall s"], rows)))
    print()
    chosen = []
    for ceiling in (float(x) for x in args.ceilings.split(",")):
        best = operating_point([p for p, _ in points], ceiling)
        chosen.append([_fmt(ceiling), "-" if best is None else _fmt(best.threshold),
                       _fmt(best.match_rate if best else None),
                       _fmt(best.latency["p50"] if best and best.latency else None)])
    print("\n".join(format_table(["FP ceiling", "eot_silence", "match", "p50 s"], chosen)))


if __name__ == "__main__":
    main()
