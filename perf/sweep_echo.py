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

Usage: .venv/bin/python perf/sweep_echo.py [--keep DIR] [--gains=-40,-20,-10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="work folder to keep")
    parser.add_argument("--gains", default="-40,-20,-10", help="echo gains (dB), comma-separated")
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
            rows.append(_row(label, "clean" if gain is None else f"{gain:g} dB",
                             _stops(run, mute), wall))
    print(f"\ncascade on sample-en (clip-bank voices), single, echo delay 0.1 s; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("| system | echo gain | n | samples with a stop | samples with a false stop | "
          "false stops per sample | wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
