"""The acoustic acceptance sweep: the cascade under pink noise (or babble) at 30/20/10/0 dB SNR.

Runs ``duplexeval sweep`` (:func:`duplexeval.app.sweep.run_sweep`) of ``cascade`` under
Multi (gen) with the user channel unmuted (``--no-mute``: the noise goes on through the window,
where the system should answer), timing-only analysis, the ``m3`` variant, on the bundled
``sample-en`` voiced with the clip bank (default: two dialogues, 13 smooth-turn-taking events),
a suite's first dialogues (``--suite``) or a dataset folder, and prints SHIFT TOR and latency
at every point with their 95 % intervals and preserve rates, whether each degrades
monotonically within its intervals (clean first; a metric undefined at the strongest points,
such as the latency where the system never takes the turn, is judged over the points that
have it, and says so), and whether it degrades beyond the intervals at all (the worst point's
interval entirely on the worse side of the clean one's: a flat line is monotone within the
intervals but does not degrade); exit 1 when one metric is not monotone or does not degrade.

``--noise babble`` sweeps the ``babble`` condition (clip-bank talkers) instead of pink noise:
speech-like noise, which the cascade's Silero VAD takes for the user still talking, where it
ignores pink noise (its TOR then stays flat and only its latency grows).

Usage: .venv/bin/python perf/sweep_snr.py [--suite m3-qa-en [--first 2] | --dataset DIR]
       [--snr 30,20,10,0] [--noise pink|babble] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.app.sweep import parse_grid, run_sweep
from duplexeval.data import Need, bundled_dataset, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.report._sweep import SweepMetric
from duplexeval.suites import build_suite
from duplexeval.systems import load_system

METRICS = (("TURN_SHIFT", "tor ↑"), ("TURN_SHIFT", "latency ↓"))


def _voiced_sample(target: Path) -> Path:
    """The bundled ``sample-en`` voiced with the clip bank (``data voice-bursts``), once."""
    if not (target / "test.jsonl").is_file():
        sample, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
        voice_bursts(sample, target)
    return target


def _defined(metric: SweepMetric) -> tuple[SweepMetric, int]:
    """The metric over its points up to the last one with a value, and how many trailing
    points were dropped (the metric undefined there: no events)."""
    cells = list(metric.cells)
    dropped = 0
    while len(cells) > 1 and (cells[-1] is None or cells[-1].mean is None):
        cells.pop()
        dropped += 1
    return replace(metric, cells=tuple(cells)), dropped


def _degrades(metric: SweepMetric) -> bool | None:
    """Whether some point's interval lies entirely on the worse side of the clean one's."""
    clean = metric.cells[0]
    if clean is None or clean.low is None or clean.high is None or metric.better is None:
        return None
    worse = [c for c in metric.cells[1:] if c is not None and c.low is not None
             and c.high is not None]
    if metric.better == "higher":
        return any(c.high is not None and c.high < clean.low for c in worse)
    return any(c.low is not None and c.low > clean.high for c in worse)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=None, help="a bundled suite instead of sample-en")
    parser.add_argument("--first", type=int, default=2, help="the suite's first N dialogues")
    parser.add_argument("--dataset", type=Path, default=None, help="a dataset folder instead")
    parser.add_argument("--snr", default="30,20,10,0", help="the SNRs, mild to strong (dB)")
    parser.add_argument("--noise", choices=("pink", "babble"), default="pink",
                        help="the noise condition swept (default pink)")
    parser.add_argument("--keep", type=Path, default=None, help="sweep folder to keep")
    args = parser.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="sweep-snr-"))
    root = args.dataset or (build_suite(args.suite, limit=args.first) if args.suite
                            else _voiced_sample(out / "sample-en"))
    dataset, _ = load_dataset(root, audio=Need.REQUIRE)
    plan = build_plan(dataset, PlanOptions(protocol=EvalProtocol.MULTI_GEN, mute=False))
    kind = "noise" if args.noise == "pink" else "babble"
    grid = parse_grid([f"{kind}:snr={args.snr}"])
    started = time.monotonic()
    result = run_sweep(load_system("cascade"), dataset, plan, grid, out,
                       analysis=replace(AnalysisOptions(), content_event_types=()),
                       progress=False)
    wall = time.monotonic() - started
    print(f"cascade, {args.noise} noise, multi-gen --no-mute, m3 variant; data {root.name} "
          f"({len(dataset.dialogues)} dialogues, {len(plan.samples)} samples per run); "
          f"{len(grid.points) + 1} runs in {wall:.0f} s")
    names = ["clean", *(p.name for p in grid.points)]
    failed = False
    for event, metric in METRICS:
        found = next((m for m in result.metrics if (m.event_type, m.metric) == (event, metric)),
                     None)
        if found is None:
            print(f"{event} {metric}: no value")
            failed = True
            continue
        judged, dropped = _defined(found)
        degrades = _degrades(judged)
        words = {True: "yes", False: "NO", None: "-"}
        undefined = f", over the points with a value: {dropped} without" if dropped else ""
        print(f"\n{event} {metric} (monotone within CI: {words[judged.monotone]}{undefined}; "
              f"degrades beyond the CIs: {words[degrades]})")
        print(f"  {'point':<14} {'n':>4} {'mean':>7} {'95 % CI':>17} {'preserve':>9}")
        for name, c in zip(names, found.cells, strict=True):
            if c is None:
                print(f"  {name:<14} -")
                continue
            print(f"  {name:<14} {c.n:>4} {_fmt(c.mean):>7} "
                  f"{'[' + _fmt(c.low) + ', ' + _fmt(c.high) + ']':>17} {_fmt(c.preserve):>9}")
        failed = failed or judged.monotone is not True or degrades is not True
    print(f"\ntable: {out / 'sweep.md'}")
    if args.keep is None:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
