"""What the content transcript costs: analysis time with and without it, and whether the M3
timing values change.

For each run directory given (default: the demo's, ``runs/demo/*``), the run is analysed twice
in a temporary copy, each time with an empty analysis cache (the Whisper model is loaded before
timing):

* ``timing``: ASR only on the system segments shorter than 1 s (``content_event_types=()``);
* ``content``: the default, which also transcribes every segment of both channels of the
  TURN_SHIFT samples (the texts the content metrics read).

Prints per run the samples, both times and their ratio, and how many M3 per-event values
differ between the two analyses (Whisper windows shared with longer regions can move a short
segment's words).

Usage: .venv/bin/python perf/content_analysis_cost.py [RUN_DIR ...]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from duplexeval.analysis._pipeline import AnalysisOptions, _transcriber, analyze_run
from duplexeval.metrics import get_variant
from duplexeval.metrics._m3_metadata import read_m3_outputs
from duplexeval.metrics._scoring import score_events
from duplexeval.runs import RunDir

TIMING = AnalysisOptions(content_event_types=())
CONTENT = AnalysisOptions()


def _values(folder: Path) -> dict[tuple[str, str], Any]:
    m3 = get_variant("m3")
    return {(s.event.event_id, d.dimension): d.values
            for s in score_events(read_m3_outputs(folder)[0], m3) for d in s.dimensions}


def _analyse(run: Path, options: AnalysisOptions) -> tuple[float, dict[tuple[str, str], Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / run.name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("analysis*", "scores*"))
        start = time.perf_counter()
        folder = analyze_run(copy, options, progress=False, cache=Path(tmp) / "cache")
        seconds = time.perf_counter() - start
        return seconds, _values(folder)


def main(argv: list[str]) -> int:
    runs = [Path(a) for a in argv] or sorted(p for p in Path("runs/demo").glob("*")
                                              if (p / "metadata.jsonl").is_file())
    _transcriber(CONTENT.asr)  # load the model before timing
    total = [0.0, 0.0]
    print("run  samples  timing-only s  with content s  ratio  M3 values differing")
    for run in runs:
        t_timing, v_timing = _analyse(run, TIMING)
        t_content, v_content = _analyse(run, CONTENT)
        differ = sum(v_timing.get(k) != v for k, v in v_content.items())
        total[0] += t_timing
        total[1] += t_content
        samples = len(RunDir(run).read_metadata())
        print(f"{run.name}  {samples}  {t_timing:.1f}  {t_content:.1f}  "
              f"{t_content / max(t_timing, 1e-9):.2f}  {differ}/{len(v_content)}")
    print(f"total  {total[0]:.1f}  {total[1]:.1f}  {total[1] / max(total[0], 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
