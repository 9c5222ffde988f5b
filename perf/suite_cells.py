"""Events per seed cell of every bundled suite, counted from its dialogue specs (no synthesis):
the full suite and its quick subset, each cell flagged when under 30 (full; mtr-en's
instruction-following and safety items: 20 per round) or 5 (quick).

What is counted, per suite kind (the event the spec asks for; the built audio annotates it as
that event in all but a few cases, see ``duplexeval/suites/specs/README.md``):

* M3 suites, on the suite's user channels: SHIFT = a turn after the other speaker's turn that
  was not cut off (the speaker on a user channel holds the floor before it), PAUSE = held
  pauses (>= 0.6 s) in turns of a user-channel speaker, BC = backchannels said by a
  user-channel speaker, BARGE_IN = interruptions whose interrupter is on a user channel;
* flexi-en: dialogues per FLEXI scenario;
* mtr-en: rounds per (feature, round k) over its feature and combination dialogues,
  instruction-following / safety items per round, and the smooth rounds of each combination
  (the ablation table's one cell per combination pools rounds 1-10).

The quick subset of a suite whose rule counts smooth-turn-taking samples is estimated here by
the spec SHIFT counts in spec order (the build counts planned samples on the built audio, which
can need a dialogue more); a subset by label is exact.

Usage: .venv/bin/python perf/suite_cells.py [SUITE ...]
"""

from __future__ import annotations

import argparse
from collections import Counter

from duplexeval.suites import SUITES
from duplexeval.suites._build import quick_by_label, quick_min_shifts
from duplexeval.synth._spec import DialogueSpec, load_specs

FULL_MIN = 30
ITEM_MIN = 20
"""mtr-en's instruction-following and safety cells: at least 20 items per round (issue 32)."""
QUICK_MIN = 5
M3_CELLS = ("SHIFT", "PAUSE", "BC", "BARGE_IN")


def m3_cells(spec: DialogueSpec, channels: tuple[int, ...]) -> Counter[str]:
    """SHIFT, PAUSE, BC and BARGE_IN that the spec asks for on the user ``channels``."""
    out: Counter[str] = Counter()
    turns = spec.turns
    for i, turn in enumerate(turns):
        channel = spec.speaker(turn.speaker).channel
        if channel in channels:
            out["PAUSE"] += sum(p.seconds >= 0.6 for p in turn.all_pauses())
        if 1 - channel in channels:
            out["BC"] += len(turn.backchannels)
        if i + 1 < len(turns) and turns[i + 1].speaker != turn.speaker:
            if turn.interruption() is not None:
                out["BARGE_IN"] += 1 - channel in channels
            elif channel in channels:
                out["SHIFT"] += 1
    return out


def mtr_cells(spec: DialogueSpec) -> Counter[str]:
    out: Counter[str] = Counter()
    assert spec.mtr is not None
    for k, rnd in enumerate(spec.mtr.rounds, start=1):
        if spec.mtr.group in ("instruction_following", "safety"):
            out[f"{spec.mtr.group} k={k:02d}"] += 1
        else:
            out.update(f"{f} k={k:02d}" for f in rnd.features)
        if spec.mtr.group == "combination" and "smooth" in rnd.features:
            out[f"combination {spec.mtr.label} smooth"] += 1
    return out


def cells(name: str, specs: list[DialogueSpec]) -> Counter[str]:
    suite = SUITES[name]
    total: Counter[str] = Counter()
    for spec in specs:
        if spec.mtr is not None:
            total += mtr_cells(spec)
        elif spec.flexi is not None:
            total[spec.flexi.scenario] += 1
        else:
            total += m3_cells(spec, suite.channels)
    return total


def quick_specs(name: str, specs: list[DialogueSpec]) -> list[DialogueSpec]:
    suite = SUITES[name]
    if suite.quick_per_label is not None:
        return quick_by_label(specs, suite.quick_per_label, suite.quick_label_caps)
    shifts = 0
    for n, spec in enumerate(specs, start=1):
        shifts += m3_cells(spec, suite.channels)["SHIFT"] if spec.flexi is None else \
            spec.flexi.scenario in ("turn_taking", "pause_handling", "model_interrupt",
                                    "model_backchannel", "user_interrupt", "user_backchannel")
        if shifts >= quick_min_shifts(suite):
            return specs[:n]
    return specs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", help="bundled suite names (default: every one "
                        "that is not built from the M3 toy data)")
    names = parser.parse_args().suites or [n for n, s in SUITES.all().items()
                                           if not s.from_toy]
    unknown = [n for n in names if SUITES.find(n) is None]
    if unknown:
        parser.error(f"no bundled suite named {', '.join(unknown)}")
    low = 0
    for name in names:
        specs = load_specs(SUITES[name].spec_folder())
        quick = quick_specs(name, specs)
        full_cells, quick_cells = cells(name, specs), cells(name, quick)
        if not any(s.mtr or s.flexi for s in specs):  # every M3 cell, those with none too
            full_cells.update(dict.fromkeys(M3_CELLS, 0))
        print(f"{name}: {len(specs)} dialogues (quick {len(quick)}); events per cell, "
              f"full / quick (flag: full < {FULL_MIN}, quick < {QUICK_MIN})")
        for cell in sorted(full_cells):
            f, q = full_cells[cell], quick_cells.get(cell, 0)
            least = ITEM_MIN if cell.startswith(("instruction_following", "safety")) \
                else FULL_MIN
            flag = (f"  FULL<{least}" if f < least else "") + ("  QUICK<5" if q < QUICK_MIN else "")
            low += bool(flag)
            print(f"  {cell:28s} {f:5d} / {q:<4d}{flag}")
    print(f"cells flagged: {low}")
    return 1 if low else 0


if __name__ == "__main__":
    raise SystemExit(main())
