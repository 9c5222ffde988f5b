"""Move each barge-in point (``interrupted_after_word``) of a suite's dialogue specs so that the
synthesized interrupted speaker yields the way a person does: a few words after the other starts,
not a whole clause later.  From the TTS alone (no dialogue is built), per interrupted turn::

    interrupted  ...w  w  w  w(k) w(k+1) w(k+2)|          the turn plays to its end
    interrupter                 ^ starts 0.05-0.2 s after word k (the synthesizer's rule)
                                |--- tail ---------------|
    inside       the words that start 0.05 s or more after word k: wholly inside the barge-in

A point is kept when it satisfies both benchmarks' readings of a barge-in:

- M3's annotation: the overlap (tail - 0.2 s) is at least 0.45 s (``--overlap-min``), and the
  interrupter's first IPU ends 0.3 s or more after the interrupted speaker
  (``perf/barge_in_timing.py``'s margins).  An MTR suite needs it too: its plan takes each
  round's barge-in sample from the annotated BARGE_IN events (an overlap under 0.4 s is
  annotated as an overlapping turn shift, and the round is lost);
- MTR's rule (``metrics/timing/_mtr_rules.speaking``): the words wholly inside the barge-in are
  at most 2 and last at most 0.6 s together (the rule says "speaking" at more than 3 or 1 s; the
  margin is for Whisper's word times, which run longer than the TTS's); where no point of a
  turn is within that, at most 3 words and 0.75 s, with the interrupter ending 0.1 s or more
  after the interrupted speaker, and then with an overlap down to 0.42 s; where none of those
  holds, the point with the shortest words inside that MTR's own rule does not read as speaking.

Each turn gets the valid point nearest its own (a later one on a tie); a turn with no valid point
keeps its own and is counted.  Prints a line per moved turn and the counts before and after.

Usage: .venv/bin/python scripts/retime_barge_ins.py SUITE [--overlap-min S] [--only ID,ID] [--write]
(without --write nothing is changed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from duplexeval.synth._build import Synthesizer
    from duplexeval.synth._spec import DialogueSpec

OVERLAP_MIN = 0.45
MARGIN_MIN = 0.3
INSIDE_MAX_WORDS = 2
INSIDE_MAX_SECONDS = 0.6
LOOSE_MAX_WORDS = 3
LOOSE_MAX_SECONDS = 0.75
LOOSE_MARGIN_MIN = 0.1
LAST_OVERLAP_MIN = 0.42
EARLIEST_START = 0.05
LATEST_START = 0.2


@dataclass(frozen=True)
class Point:
    """One candidate barge-in point: after text word ``k``."""

    k: int
    tail: float
    inside_words: int
    inside_seconds: float
    margin: float

    def m3_ok(self, overlap_min: float, margin_min: float = MARGIN_MIN) -> bool:
        return self.tail - LATEST_START >= overlap_min and self.margin >= margin_min

    @property
    def mtr_rule_fails(self) -> bool:
        """Whether MTR's own rule (more than 3 words, or 1 s) reads these words as speaking."""
        return self.inside_words > 3 or self.inside_seconds >= 1.0

    @property
    def mtr_ok(self) -> bool:
        return self.inside_words <= INSIDE_MAX_WORDS and self.inside_seconds <= INSIDE_MAX_SECONDS

    @property
    def mtr_loose_ok(self) -> bool:
        """Within MTR's rule with less margin: the fallback where no point is :attr:`mtr_ok`."""
        return self.inside_words <= LOOSE_MAX_WORDS and self.inside_seconds <= LOOSE_MAX_SECONDS


def _points(synth: Synthesizer, spec: DialogueSpec, i: int) -> list[Point]:
    from duplexeval.synth._placement import _boundary
    from duplexeval.synth._spec import _Position

    turns = spec.turns
    turn, nxt = turns[i], turns[i + 1]
    piece = synth._with_pauses(synth._prepare(spec, turn.speaker, turn.text), turn)
    words = synth._with_pauses(synth._prepare(spec, nxt.speaker, nxt.text), nxt).words
    ipu = next((a.end for a, b in itertools.pairwise(words) if b.start - a.end > 0.5),
               words[-1].end) - words[0].start
    points = []
    for k in range(1, len(turn.text.split())):
        cut = piece.words[_boundary(piece, _Position(after_word=k))].end
        inside = [w for w in piece.words if w.start >= cut + EARLIEST_START]
        tail = piece.duration - cut
        points.append(Point(k, tail, len(inside), sum(w.end - w.start for w in inside),
                            EARLIEST_START + ipu - tail))
    return points


def _choose(points: list[Point], own: Point, overlap_min: float) -> Point | None:
    """The valid point nearest ``own`` (a later one on a tie) in the first of three tiers that
    has one: the strict limits; the loose ones; the loose ones with the least overlap down to
    :data:`LAST_OVERLAP_MIN` (still over the annotation's 0.4 s with the interrupter at its
    latest: the word times are the built dialogue's).  Where none has one, the point with the
    shortest words inside among those MTR's own rule does not read as speaking; ``None`` where
    there is none."""
    tiers = [[p for p in points if p.m3_ok(overlap_min) and p.mtr_ok],
             [p for p in points if p.m3_ok(overlap_min, LOOSE_MARGIN_MIN) and p.mtr_loose_ok],
             [p for p in points if p.m3_ok(min(overlap_min, LAST_OVERLAP_MIN), LOOSE_MARGIN_MIN)
              and p.mtr_loose_ok]]
    valid = next((tier for tier in tiers if tier), [])
    if valid:
        return min(valid, key=lambda p: (abs(p.k - own.k), -p.k))
    within_rule = [p for p in points if not p.mtr_rule_fails
                   and p.m3_ok(min(overlap_min, LAST_OVERLAP_MIN), LOOSE_MARGIN_MIN)]
    return min(within_rule, key=lambda p: p.inside_seconds, default=None)


@dataclass
class Counts:
    """What :func:`retime` found: barge-ins, those outside the strict limits, moved, left without
    a valid point, placed within the loose limits only, and read as speaking by MTR's rule before
    and after."""

    total: int = 0
    outside: int = 0
    moved: int = 0
    stuck: int = 0
    loose: int = 0
    rule_before: int = 0
    rule_after: int = 0


def _retime_spec(synth: Synthesizer, spec: DialogueSpec, raw: dict[str, Any], overlap_min: float,
                 counts: Counts) -> None:
    """Move the barge-in points of one spec in ``raw`` (its JSON), counting into ``counts``."""
    turns = spec.turns
    for i, turn in enumerate(turns):
        if turn.interrupted_after_word is None or i + 1 == len(turns):
            continue
        counts.total += 1
        points = _points(synth, spec, i)
        own = next(p for p in points if p.k == turn.interrupted_after_word)
        counts.outside += not (own.m3_ok(overlap_min) and own.mtr_ok)
        counts.rule_before += own.mtr_rule_fails
        best = _choose(points, own, overlap_min)
        if best is None:
            counts.stuck += 1
            counts.rule_after += own.mtr_rule_fails
            print(f"{spec.id} turn {i}: no point holds; keeps {own.k}")
            continue
        counts.rule_after += best.mtr_rule_fails
        counts.loose += not best.mtr_ok
        if best.k != own.k:
            counts.moved += 1
            raw["turns"][i]["interrupted_after_word"] = best.k
            print(f"{spec.id} turn {i}: {own.k} -> {best.k} (tail {own.tail:.2f} -> "
                  f"{best.tail:.2f} s, inside {own.inside_words} words "
                  f"{own.inside_seconds:.2f} s -> {best.inside_words} words "
                  f"{best.inside_seconds:.2f} s)", flush=True)


def retime(suite: str, overlap_min: float = OVERLAP_MIN, only: set[str] | None = None,
           write: bool = False) -> Counts:
    """Retime the barge-ins of ``suite``'s specs (those of the dialogues ``only``, or all);
    rewrite the spec files when ``write``.  Prints each move and the counts."""
    from duplexeval._fileio import atomic_write_text
    from duplexeval.suites import SUITES
    from duplexeval.synth._build import Synthesizer, SynthSettings
    from duplexeval.synth._spec import load_specs

    synth = Synthesizer(SynthSettings())
    folder = Path(SUITES[suite].spec_folder())
    counts = Counts()
    rewritten = {}
    for spec in load_specs(folder):
        if only is not None and spec.id not in only:
            continue
        path = folder / f"{spec.id}.json"
        raw = json.loads(path.read_text(encoding="utf-8"))
        _retime_spec(synth, spec, raw, overlap_min, counts)
        rewritten[path] = json.dumps(raw, indent=2, ensure_ascii=False) + "\n"
    for path, text in rewritten.items() if write else ():
        atomic_write_text(path, text)  # all at the end: an error leaves no spec half-done
    print(f"{suite}: {counts.total} barge-ins; outside the limits {counts.outside}, moved "
          f"{counts.moved}, within the loose limits only {counts.loose}, without a valid point "
          f"{counts.stuck}; read as speaking by MTR's rule "
          f"(TTS words, the interrupter 0.05 s after the point): {counts.rule_before} -> "
          f"{counts.rule_after}")
    return counts


def main() -> int:
    from duplexeval.cli._options import positive
    from duplexeval.suites import SUITES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("--overlap-min", type=positive, default=OVERLAP_MIN,
                        help=f"least overlap in seconds (default {OVERLAP_MIN})")
    parser.add_argument("--only", help="dialogue ids, comma-separated")
    parser.add_argument("--write", action="store_true", help="rewrite the spec files")
    args = parser.parse_args()
    if SUITES.find(args.suite) is None:
        print(f"{args.suite}: no such suite ({', '.join(SUITES.names())})", file=sys.stderr)
        return 2
    try:
        retime(args.suite, args.overlap_min, set(args.only.split(",")) if args.only else None,
               args.write)
    except OSError as exc:
        print(f"{exc.filename}: cannot write ({exc.strerror})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
