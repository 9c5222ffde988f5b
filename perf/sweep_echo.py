"""Self-bleed: the echo of the system's own voice swept on the full-duplex cascade against the
half-duplex cascade.

Voices the bundled ``sample-en`` annotations with the clip bank (17 single samples, both user
channels), runs ``cascade`` and ``cascade half_duplex=1`` under ``single`` clean and with
``--condition echo:gain=G,delay=0.1`` for G = -40, -20, -10 dB, and reads each sample's trace:

* a *stop* is the cascade falling silent for speech it heard while it spoke (a ``holds``
  pause, after ``stop_delay``, or a ``stops`` barge-in drop);
* a *false stop* is one whose triggering onset is at or after the sample's ``mute_start``,
  where the user is muted: nothing but the system's own voice was there to hear.

Prints per system and gain the share of samples with a stop and with a false stop (Wilson 95 %
intervals) and the false stops per sample (a pause and the drop that may follow it count as
two; mean, bootstrap 95 % interval), with the wall time of each run.
Definition: this script's (compat), on sample-en voiced by ``data voice-bursts``.

Measured (2 cores shared with other jobs, load average 11.9; the first run of a process
pays Whisper's load and the user turns' ASR, about 160 s, later ones hit its cache)::

    full-duplex  clean / -40 / -35 / -30 / -25 / -20 / -10 dB: samples with a false stop
                 0.00 / 0.00 / 0.18 / 0.71 / 1.00 / 1.00 / 1.00 (n = 17 each;
                 -30 dB: Wilson [0.47, 0.87]), false stops per sample 0 / 0 / 0.18 / 0.88 /
                 1.53 / 1.53 / 1.53
    half-duplex  0.00 at every gain (deaf while it answers)

``--plot PNG`` also draws the share of samples with a false stop against the echo gain, one line
per system with its Wilson 95 % interval as error bars (the clean run drawn apart, left of the
gains).

Usage: .venv/bin/python perf/sweep_echo.py [--keep DIR] [--gains=-40,-20,-10] [--plot PNG]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from duplexeval.cli import main as cli
from duplexeval.data import Need, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.metrics._stats import resample_indices, wilson_interval
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import open_run

SAMPLE_EN = Path(__file__).resolve().parents[1] / "src" / "duplexeval" / "bundled" / "sample-en"
SYSTEMS = (("full-duplex", []), ("half-duplex", ["--system-arg", "half_duplex=1"]))
RATE = 16000  # the cascade's native rate: trace samples count from the session start


def _stops(run: Path, mute: dict[str, float]) -> list[tuple[int, int]]:
    """Per sample: (stops, false stops) from its trace (module docstring)."""
    folder = open_run(run)
    out = []
    for row in folder.read_metadata():
        record = folder.read_record(row.sample_id, row.event_id)
        assert record is not None and record.status == "ok", row.event_id
        trace, start = record.trace, float(record.sample["input_start"])
        onsets = [start + e["onset"] / RATE for e in (*trace["holds"], *trace["stops"])
                  if "onset" in e]
        out.append((len(onsets), sum(t >= mute[row.event_id] - 1e-9 for t in onsets)))
    return out


def _rate(hits: int, n: int) -> str:
    low, high = wilson_interval(hits, n)
    return f"{hits / n:.2f} [{low:.2f}, {high:.2f}]"


def _mean(values: list[int]) -> str:
    x = np.asarray(values, dtype=float)
    means = x[resample_indices(len(x))].mean(axis=1)
    return f"{x.mean():.2f} [{np.percentile(means, 2.5):.2f}, {np.percentile(means, 97.5):.2f}]"


def _row(label: str, gain: str, per_sample: list[tuple[int, int]], wall: float | None) -> str:
    n = len(per_sample)
    stops = sum(s > 0 for s, _ in per_sample)
    false = sum(f > 0 for _, f in per_sample)
    return (f"| {label} | {gain} | {n} | {_rate(stops, n)} | {_rate(false, n)} | "
            f"{_mean([f for _, f in per_sample])} | "
            f"{'kept' if wall is None else f'{wall:.0f}'} |")


def echo_plot(shares: dict[str, list[tuple[float | None, int, int]]]) -> Figure:
    """The share of samples with a false stop against the echo gain (dB), per system: ``shares``
    maps a system's label to ``(gain or None for clean, samples with a false stop, samples)``;
    the error bars are Wilson 95 % intervals, the clean run is the point left of the gains."""
    fig = Figure(figsize=(5.0, 3.4))
    ax = fig.subplots()
    gains = sorted({g for points in shares.values() for g, _, _ in points if g is not None})
    clean_x = gains[0] - 10.0 if gains else 0.0
    for i, (label, points) in enumerate(shares.items()):
        color = f"C{i}"
        for clean in (True, False):  # the clean point apart, not joined to the gains' line
            xs, ys, lo, hi = [], [], [], []
            for gain, hits, n in sorted(points, key=lambda p: clean_x if p[0] is None else p[0]):
                if (gain is None) != clean:
                    continue
                low, high = wilson_interval(hits, n)
                xs.append(clean_x if gain is None else gain)
                ys.append(hits / n)
                lo.append(hits / n - low)
                hi.append(high - hits / n)
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=color,
                        linestyle="none" if clean else "-", label=None if clean else label)
    ax.set_xticks([clean_x, *gains], ["clean", *(f"{g:g}" for g in gains)])
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("echo gain (dB), delay 0.1 s")
    ax.set_ylabel("samples with a false stop")
    ax.set_title("cascade: self-bleed false stops vs echo gain")
    ax.legend(fontsize=7)
    return fig


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="work folder to keep")
    parser.add_argument("--gains", default="-40,-20,-10", help="echo gains (dB), comma-separated")
    parser.add_argument("--plot", type=Path, default=None,
                        help="write the false-stop share against the gain to this PNG")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="sweep-echo-"))
    data = work / "data"
    if not (data / "test.jsonl").is_file():
        dataset, _ = load_dataset(SAMPLE_EN, alignment=Need.REQUIRE)
        voice_bursts(dataset, data)
    dataset, _ = load_dataset(data, audio=Need.REQUIRE)
    mute = {s.event_id: s.mute_start
            for s in build_plan(dataset, PlanOptions(protocol=EvalProtocol.SINGLE)).samples}
    gains = [None, *(float(g) for g in args.gains.split(","))]
    rows = []
    shares: dict[str, list[tuple[float | None, int, int]]] = {}
    for label, extra in SYSTEMS:
        for gain in gains:
            run = work / f"{label}{'' if gain is None else f'-echo{-gain:g}'}"
            condition = [] if gain is None else ["--condition", f"echo:gain={gain:g},delay=0.1"]
            wall = None  # a run kept in --keep from before is read, not rerun
            if not (run / "run_summary.json").is_file():
                started = time.monotonic()
                assert cli(["run", "--system", "cascade", *extra, "--dataset", str(data),
                            "--protocol", "single", "--out", str(run), *condition]) == 0
                wall = time.monotonic() - started
            per_sample = _stops(run, mute)
            rows.append(_row(label, "clean" if gain is None else f"{gain:g} dB", per_sample, wall))
            shares.setdefault(label, []).append(
                (gain, sum(f > 0 for _, f in per_sample), len(per_sample)))
    print(f"\ncascade on sample-en (clip-bank voices), single, echo delay 0.1 s; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("| system | echo gain | n | samples with a stop | samples with a false stop | "
          "false stops per sample | wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    if args.plot is not None:
        echo_plot(shares).savefig(args.plot, format="png", dpi=100, bbox_inches="tight")
        print(f"plot: {args.plot}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
