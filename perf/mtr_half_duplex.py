"""MTR-DuplexBench's half-duplex check on ``mtr-en``: the cascade in full-duplex and in
half-duplex mode (deaf while it answers) on the background-speech and interruption dialogues.

Builds ``f01``/``f02`` of the ``background`` and ``interruption`` feature sets (four 10-round
dialogues, piper voices, the suite's turn-shift gaps), runs ``cascade`` and ``cascade
half_duplex=1`` under multi-gen on the suite's user channel with the user channel unmuted
(``--no-mute``: the background voice and the barge-ins are heard, as in MTR's rounds), scores
them with the ``mtr`` variant and prints the success rate of each feature and the
round-by-round interruption curve.

Usage: .venv/bin/python perf/mtr_half_duplex.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from duplexeval.cli import main as cli
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.suites import get_suite
from duplexeval.suites._build import suite_gaps
from duplexeval.synth._build import SynthSettings
from duplexeval.synth._mtr_synthesizer import MtrSynthesizer
from duplexeval.synth._spec import load_spec

DIALOGUES = ("f01-background", "f02-background", "f01-interruption", "f02-interruption")
METRICS = (("TURN_SHIFT", "smooth_turn_taking"), ("TURN_SHIFT", "background"),
           ("BARGE_IN", "interruption"))


def _success(run: Path) -> tuple[dict[str, tuple[float, int]], dict[int, float]]:
    results, _ = score_run_dir(run, variant="mtr", progress=False)
    overall, curve = {}, {}
    for r in results.aggregates:
        if r.metric != "success ↑" or r.language != "all" or r.domain != "all":
            continue
        if r.round is None:
            overall[r.dimension] = (r.mean or 0.0, r.n)
        elif r.dimension == "interruption":
            curve[r.round] = r.mean or 0.0
    return overall, curve


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="work folder to keep")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="mtr-half-"))
    data = work / "data"
    if not (data / "test.jsonl").is_file():
        suite = get_suite("mtr-en")
        synth = MtrSynthesizer(SynthSettings(gaps=suite_gaps(suite)))
        built = [synth.build(load_spec(suite.spec_folder() / f"{name}.json"))
                 for name in DIALOGUES]
        synth.write(built, data, metadata={"name": "mtr-en f01/f02 background + interruption"})
    rows = {}
    for label, extra in (("full-duplex", []), ("half-duplex", ["--system-arg", "half_duplex=1"])):
        run = work / label
        assert cli(["run", "--system", "cascade", *extra, "--dataset", str(data), "--protocol",
                    "multi-gen", "--no-mute", "--channels", "0", "--out", str(run)]) == 0
        rows[label] = _success(run)
    print("\ncascade on mtr-en f01/f02 background + interruption, multi-gen, user unmuted; "
          "mtr success (n)")
    for label, (overall, curve) in rows.items():
        cells = ", ".join(f"{dim} {overall[dim][0]:.2f} (n={overall[dim][1]})"
                          for _, dim in METRICS if dim in overall)
        points = " ".join(f"{k}:{v:.2f}" for k, v in sorted(curve.items()))
        print(f"  {label}: {cells}")
        print(f"    interruption by round: {points}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
