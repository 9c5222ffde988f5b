"""Build time of single ``mtr-en`` dialogues, side by side: synthesis only (no cache, no quality
report), in one process with one onnxruntime thread, as a worker of the parallel builder
(``duplexeval.synth._parallel``) builds each dialogue.

Each named dialogue is built ``--repeat`` times, the names in turn (a B C A B C ...), so that a
change of load on a shared machine hits them alike; the first build, which loads the voices, is
a warm-up and not counted. The synthesizer's reused utterances are dropped before each build, so
every dialogue pays for all of its text-to-speech (a pool worker that has built a dialogue with
the same turns, such as another feature of the same ``fNN`` topic, pays less). Prints per
dialogue the median seconds, the audio length, the words spoken, the seconds per audio minute
and how many of its 10 rounds give a sample of their feature under the suite's plan (multi-ref,
as MTR feeds it; an instruction-following or safety round: its barge-in, the event its item is
judged on), the load average before and after, and, with ``--estimate``, the full suite's
synthesis time from the median per dialogue of each group (feature and combination dialogues:
the chat ones given) divided by the workers.

Usage: .venv/bin/python perf/mtr_item_build.py [--repeat 2] [--estimate] ID [ID ...]
e.g.   .venv/bin/python perf/mtr_item_build.py --estimate f01-smooth if-01 if-07 sf-01 sf-04
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="+")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--estimate", action="store_true")
    parser.add_argument("--jobs", type=int, default=2, help="workers for the estimate")
    args = parser.parse_args()
    os.environ["DUPLEXEVAL_ORT_THREADS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"
    from duplexeval.data._mtr_record import FEATURE_SAMPLES, feature_round
    from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
    from duplexeval.suites import SUITES
    from duplexeval.suites._build import suite_gaps
    from duplexeval.synth._build import SynthSettings
    from duplexeval.synth._mtr_synthesizer import MtrSynthesizer
    from duplexeval.synth._spec import load_spec, load_specs

    suite = SUITES["mtr-en"]
    folder = suite.spec_folder()
    specs = {i: load_spec(folder / f"{i}.json") for i in args.ids}
    # no utterance cache: every build pays for its text-to-speech
    synth = MtrSynthesizer(SynthSettings(gaps=suite_gaps(suite)), cache_utterances=False)
    print(f"load average before: {os.getloadavg()}")
    start = time.perf_counter()
    synth.build(specs[args.ids[0]])
    print(f"warm-up ({args.ids[0]}, voices loaded): {time.perf_counter() - start:.1f} s",
          flush=True)
    times: dict[str, list[float]] = {i: [] for i in args.ids}
    audio: dict[str, float] = {}
    sampled: dict[str, int] = {}
    for _ in range(args.repeat):
        for i in args.ids:
            synth._pieces.clear()  # every text spoken afresh, as by a worker new to it
            start = time.perf_counter()
            built = synth.build(specs[i])
            times[i].append(time.perf_counter() - start)
            print(f"  {i} {times[i][-1]:.1f} s (load {os.getloadavg()[0]:.1f})", flush=True)
            audio[i] = built.duration
            dialogue = built.dialogue()
            plan = build_plan([dialogue], PlanOptions(protocol=EvalProtocol.MULTI_REF,
                                                      channels=suite.channels, mute=False))
            rounds = dialogue.extra["mtr"]["rounds"]
            sampled[i] = len({k for s in plan.samples for r in rounds for f in r["features"]
                              if f in FEATURE_SAMPLES
                              and (k := feature_round(rounds, f, s.task, s.event_start))})
    print(f"load average after: {os.getloadavg()}")
    for i in args.ids:
        words = sum(len(t.text.split()) for t in specs[i].turns)
        med = statistics.median(times[i])
        print(f"{i:14s} {med:6.1f} s (runs {', '.join(f'{t:.1f}' for t in times[i])})  "
              f"audio {audio[i]:6.1f} s  {words:4d} words  "
              f"{60 * med / audio[i]:5.2f} s per audio min  "
              f"rounds sampled {sampled[i]}/{len(specs[i].mtr.rounds) if specs[i].mtr else 0}")
    if args.estimate:
        groups = Counter(s.mtr.group if s.mtr else "other" for s in load_specs(folder))
        chat = [statistics.median(times[i]) for i in args.ids
                if specs[i].mtr and specs[i].mtr.group in ("feature", "combination")]
        per = {g: [statistics.median(times[i]) for i in args.ids
                   if specs[i].mtr and specs[i].mtr.group == g] for g in groups}
        per["feature"] = per["combination"] = chat
        total = 0.0
        for group, n in groups.items():
            if not per.get(group):
                print(f"estimate: no dialogue of group {group} timed")
                return
            each = statistics.mean(per[group])
            total += n * each
            print(f"  {group:22s} {n:4d} dialogues x {each:5.1f} s = {n * each / 60:6.1f} min")
        print(f"estimate: {total / 60:.1f} min in one worker, {total / 60 / args.jobs:.1f} min "
              f"with {args.jobs} (a perfect split; the pool's measured speed-up on 2 cores was "
              f"1.83x, perf/suite_build.py)")


if __name__ == "__main__":
    main()
