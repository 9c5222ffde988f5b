"""Does transcribing only what the M3 metrics read change any M3 value?

For each run directory given (default: the demo's, ``runs/demo/*``), the run is analysed twice
in a temporary copy:

* ``every``: Whisper on every system-channel segment, each sample's regions in their own
  windows (``asr_max_segment=None, asr_shared_samples=1``: the analysis before scoping);
* ``scoped``: the default (segments shorter than 1.0 s, regions of 64 samples sharing windows).

and the M3 per-event values are compared.  Prints, per run, the number of values, how many
differ, and both analysis times (empty analysis cache each time; the Whisper model is loaded
before timing).

Usage: .venv/bin/python perf/analysis_asr_scope.py [RUN_DIR ...]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval.analysis._pipeline import AnalysisOptions, _transcriber, analyze_run
from duplexeval.metrics import get_variant
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._scoring import score_events

EVERY = AnalysisOptions(asr_max_segment=None, asr_shared_samples=1)
SCOPED = AnalysisOptions()


def _values(folder: Path) -> dict[tuple[str, str], Any]:
    m3 = get_variant("m3")
    return {(s.event.event_id, d.dimension): d.values
            for s in score_events(read_m3_outputs(folder)[0], m3) for d in s.dimensions}


def main() -> None:
    runs = [Path(p) for p in sys.argv[1:]] or sorted(
        p for p in Path("runs/demo").glob("*") if (p / "metadata.jsonl").is_file())
    if not runs:
        sys.exit("no run directories (give some, or run `make demo` first)")
    _transcriber(SCOPED.asr).transcribe(np.zeros(16000, np.float32), 16000, "en", None)
    total = differ = 0
    seconds = {"every": 0.0, "scoped": 0.0}
    for run in runs:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / run.name
            shutil.copytree(run, copy, ignore=shutil.ignore_patterns("analysis*", "scores*"))
            values, took = {}, {}
            for label, options in (("every", EVERY), ("scoped", SCOPED)):
                start = time.perf_counter()
                folder = analyze_run(copy, options, progress=False, cache=Path(tmp) / label)
                took[label] = time.perf_counter() - start
                values[label] = _values(folder)
        bad = [k for k, v in values["every"].items() if values["scoped"].get(k) != v]
        total += len(values["every"])
        differ += len(bad)
        for label in seconds:
            seconds[label] += took[label]
        print(f"{run.name:32s} {len(values['every']):4d} values, {len(bad)} differ; analysis "
              f"{took['every']:6.1f} s -> {took['scoped']:5.1f} s" + (f"  e.g. {bad[0]}"
                                                                      if bad else ""))
    print(f"{'all':32s} {total:4d} values, {differ} differ; analysis {seconds['every']:6.1f} s "
          f"-> {seconds['scoped']:5.1f} s")


if __name__ == "__main__":
    main()
