"""Write ``src/duplexeval/synth/timing_reference.json``: the turn-shift gaps and same-speaker
hold pauses measured on the official M3 toy annotations (statistics only; the annotations
themselves are third-party data and are not shipped).

Usage: .venv/bin/python scripts/make_timing_reference.py [M3_TOY_JA_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from duplexeval.data import load_dataset
from duplexeval.events import EventKind

SETS = {"chat": "chat/magicdata_toy", "task": "task/topiocqa_ja_toy"}


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else \
        Path(__file__).resolve().parents[2] / "shared" / "m3_toy" / "ja"
    gaps, holds = {}, []
    for name, rel in SETS.items():
        dataset, _ = load_dataset(root / rel)
        events = [e for d in dataset.dialogues for e in d.events]
        gaps[name] = sorted(round(e.end - e.start, 3) for e in events
                            if e.kind == EventKind.TURN_SHIFT)
        if name == "chat":
            holds = sorted(round(e.end - e.start, 3) for e in events
                           if e.kind == EventKind.TURN_HOLD)
    out = {
        "source": "M3-DuplexBench toy annotations (nttcslab-sp/m3-duplexbench data/ja: "
                  "chat/magicdata_toy, task/topiocqa_ja_toy), measured with duplexeval's "
                  "annotator; values in seconds",
        "turn_shift_gaps": gaps,
        "turn_hold_pauses": holds,
    }
    path = Path(__file__).resolve().parents[1] / "src" / "duplexeval" / "synth" / \
        "timing_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{path}: {', '.join(f'{k} {len(v)} gaps' for k, v in gaps.items())}, "
          f"{len(holds)} holds")


if __name__ == "__main__":
    main()
