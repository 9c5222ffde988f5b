"""Model time a kill at a random moment loses, before and after forks were saved one by one.

A multi-turn pass steps its shared prefix once and forks a continuation at each event
(``duplexeval.runs._driver``).  On a kill, the rerun steps again what was not saved:

* **before** (a pass's files written when the whole pass returned): everything stepped in the
  killed pass so far, i.e. the prefix up to the kill and every finished continuation;
* **after** (each fork's files written when it finishes): the prefix up to the kill point
  (a rerun replays it to reach the remaining forks) and the continuation in flight.

The schedule is the plan's: per pass, the prefix runs to each fork time in order, and each
fork's continuation lasts ``input_end - fork_time`` model-seconds (``Sample`` fields, in
dialogue seconds).  A kill lands uniformly at random in the run's model time (seeded); the
script prints the mean and the 90th percentile of the seconds lost per kill, over the kills
landing in passes with at least ``--min-forks`` forks, on the suite's build (default: the
longest-dialogue suite, ``mtr-en``'s first dialogues) under Multi (gen).

Usage: .venv/bin/python perf/kill_durability.py [--suite mtr-en] [--limit 3] [--kills 10000]
"""

from __future__ import annotations

import argparse
import bisect

import numpy as np

from duplexeval.data import load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan, split_passes
from duplexeval.runs._units import plan_units
from duplexeval.suites import build_suite


def _segments(samples: list) -> list[tuple[float, float, float]]:
    """The pass's schedule as (start, end, fork context) segments in model seconds: prefix
    pieces between forks and each fork's continuation, in the order they are stepped (the
    prefix up to fork k, then the continuation of k, then the prefix on to fork k+1)."""
    out, clock, prefix = [], 0.0, samples[0].context_start
    for s in sorted(samples, key=lambda s: s.fork_time):
        piece = max(s.fork_time - prefix, 0.0)
        out.append((clock, clock + piece, 0.0))
        clock, prefix = clock + piece, max(prefix, s.fork_time)
        cont = max(s.input_end - s.fork_time, 0.0)
        out.append((clock, clock + cont, 1.0))
        clock += cont
    return out


def _lost(schedule: list[tuple[float, float, float]], t: float) -> tuple[float, float]:
    """Seconds lost before and after per-fork saving, for a kill at model time ``t`` of the
    pass (``schedule`` from :func:`_segments`)."""
    prefix = finished = in_flight = 0.0
    for start, end, is_cont in schedule:
        if start >= t:
            break
        done = min(end, t) - start
        if is_cont:
            if end <= t:
                finished += done
            else:
                in_flight += done
        else:
            prefix += done
    return prefix + finished + in_flight, prefix + in_flight


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="mtr-en")
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--kills", type=int, default=10000)
    parser.add_argument("--min-forks", type=int, default=5)
    args = parser.parse_args()
    dataset, _ = load_dataset(build_suite(args.suite, limit=args.limit, progress=False))
    plan = build_plan(dataset, PlanOptions(protocol=EvalProtocol.MULTI_GEN, mute=False))
    passes = [p for unit in plan_units(plan, dataset) for p in split_passes(unit.samples)
              if len(p) >= args.min_forks]
    schedules = [_segments(p) for p in passes]
    lengths = np.array([s[-1][1] for s in schedules])
    starts = np.concatenate([[0.0], np.cumsum(lengths)])
    rng = np.random.default_rng(0)
    before, after = [], []
    for t in rng.uniform(0.0, starts[-1], args.kills):
        i = bisect.bisect_right(starts, t) - 1
        b, a = _lost(schedules[i], t - starts[i])
        before.append(b)
        after.append(a)
    forks = sum(len(p) for p in passes)
    print(f"{args.suite} first {args.limit} dialogues, multi-gen: {len(passes)} passes, "
          f"{forks} forks, {starts[-1]:.0f} model-seconds; {args.kills} kills (seed 0)")
    for name, lost in (("before (saved per pass)", before), ("after (saved per fork)", after)):
        print(f"  {name:24s} lost per kill: mean {np.mean(lost):7.1f} s, "
              f"p90 {np.percentile(lost, 90):7.1f} s")
    print(f"  ratio of the means: {np.mean(before) / np.mean(after):.2f}x less model time lost")


if __name__ == "__main__":
    main()
