"""Per barge-in of the M3 dialogue specs, from the TTS alone (no dialogue is built): how long the
interrupted turn's words after the interruption point last, how long the interrupting turn's
first IPU lasts, and so the worst-case overlap (the interrupter starts 0.2 s after the point)
and margin (its end after the interrupted speaker's, when it starts 0.05 s after the point).

A barge-in is annotated as one (M3 rules) when the overlap exceeds 0.4 s, and the interrupter's
turn outlasts the interrupted words: otherwise the interrupted speaker keeps the floor, the
annotation gives it a TURN_HOLD, and the M3 plan drops the turn-shift sample of its next turn
(m3-qa-en's first barge-ins cut in with questions shorter than the answers' last words: 9 of
its quick subset's 17). Flags: overlap under 0.45 s, margin under 0.3 s.

Usage: .venv/bin/python perf/barge_in_timing.py [SUITE ...] [--only ID,ID]
(default: m3-qa-en m3-qa-ja m3-chat-en m3-chat-ja); exits 1 when a barge-in is flagged.
"""

from __future__ import annotations

import argparse
import itertools

OVERLAP_MIN = 0.45
MARGIN_MIN = 0.3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*",
                        default=["m3-qa-en", "m3-qa-ja", "m3-chat-en", "m3-chat-ja"])
    parser.add_argument("--only", help="dialogue ids, comma-separated")
    args = parser.parse_args()

    from duplexeval.suites import SUITES
    from duplexeval.synth._build import Synthesizer, SynthSettings, _boundary
    from duplexeval.synth._spec import load_specs

    synth = Synthesizer(SynthSettings())
    only = set(args.only.split(",")) if args.only else None
    flagged = total = 0
    for name in args.suites:
        for spec in load_specs(SUITES[name].spec_folder()):
            if only is not None and spec.id not in only:
                continue
            for i, turn in enumerate(spec.turns):
                cut = turn.interruption()
                if cut is None:
                    continue
                piece = synth._with_pauses(synth._prepare(spec, turn.speaker, turn.text), turn)
                trailing = piece.duration - piece.words[_boundary(piece, cut)].end
                nxt = spec.turns[i + 1]
                words = synth._with_pauses(synth._prepare(spec, nxt.speaker, nxt.text),
                                           nxt).words
                ipu = next((a.end for a, b in itertools.pairwise(words)
                            if b.start - a.end > 0.5), words[-1].end) - words[0].start
                overlap, margin = trailing - 0.2, 0.05 + ipu - trailing
                flag = ("  OVERLAP" if overlap < OVERLAP_MIN else "") + \
                    ("  MARGIN" if margin < MARGIN_MIN else "")
                flagged += bool(flag)
                total += 1
                print(f"{name:10s} {spec.id} turn {i:2d}: last words {trailing:.2f} s, "
                      f"interrupter's IPU {ipu:.2f} s, overlap >= {overlap:.2f} s, "
                      f"margin >= {margin:.2f} s{flag}", flush=True)
    print(f"barge-ins: {total}, flagged: {flagged}")
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
