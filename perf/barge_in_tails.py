"""How long the interrupted speaker goes on after each barge-in of a built dataset, and whether
its words alone already break MTR-DuplexBench's interruption rule.

For every BARGE_IN event (on the dataset's user channels; the interrupted speaker is the other
channel), from the dataset's own word alignments (no audio is read):

    tail       seconds from the barge-in's onset to the end of the other channel's last word
               that starts before the barge-in ends
    MTR fail   the other channel's words wholly inside the barge-in last 1 s or more, or number
               more than 3: MTR's "speaking"
               (:func:`duplexeval.metrics.timing._mtr_rules.speaking`), so the dataset's own
               reference fails that round's interruption

A reference that fails its own suite's rule measures the suite, not a system: a synthesized
suite should leave the interrupted speaker a short tail (a barge-in by M3's rules needs 0.4 s
of overlap).  Prints the tail's median, 90th percentile and maximum, and the failures per
dialogue-id prefix (``f``, ``if``, ``sf``, ``c`` in ``mtr-en``).

Usage: .venv/bin/python perf/barge_in_tails.py DATASET_DIR
(a built suite, e.g. ``~/.cache/duplexeval/suites/mtr-en-*``; exit 2 when it cannot be read)
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

from duplexeval.analysis._segments import Chunk, SpeechSegment
from duplexeval.data import Need, load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.events import EventKind
from duplexeval.metrics.timing._mtr_rules import speaking
from duplexeval.timeline import Span


def _prefix(dialogue_id: str) -> str:
    """``if`` of ``if03-...``, ``f`` of ``f12-...``: the letters before the first digit."""
    found = re.match(r"[a-z]+", dialogue_id)
    return found.group(0) if found else "?"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="a built dataset folder")
    args = parser.parse_args(argv)
    try:
        dataset, _ = load_dataset(args.dataset, alignment=Need.REQUIRE)
    except DuplexevalError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    tails: list[float] = []
    fails, counts = Counter[str](), Counter[str]()
    for dialogue in dataset.dialogues:
        words = dialogue.words or ()
        for event in dialogue.events:
            if event.kind is not EventKind.BARGE_IN or event.channel not in dataset.user_channels:
                continue
            other = [w for w in words if w.channel != event.channel]
            ends = [w.end for w in other if event.start <= w.start < event.end]
            tails.append(max(ends, default=event.start) - event.start)
            chunks = tuple(Chunk(w.start, w.end, w.text) for w in other)
            span = Span(min((w.start for w in other), default=0.0),
                        max((w.end for w in other), default=0.0))
            segment = SpeechSegment(1, span, chunks=chunks)
            counts[_prefix(dialogue.id)] += 1
            fails[_prefix(dialogue.id)] += speaking([segment], event.start, event.end)
    if not tails:
        print(f"{args.dataset}: no barge-in on the user channels")
        return 0
    tails.sort()
    print(f"{dataset.name or args.dataset}: {len(tails)} barge-ins; the interrupted speaker's "
          f"tail after the onset: median {statistics.median(tails):.2f} s, p90 "
          f"{tails[int(0.9 * (len(tails) - 1))]:.2f} s, max {tails[-1]:.2f} s")
    print(f"MTR's rule fails the reference's own words at {sum(fails.values())} of "
          f"{len(tails)}: " + ", ".join(f"{k} {fails[k]}/{counts[k]}" for k in sorted(counts)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
