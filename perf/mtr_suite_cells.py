"""The per-round cells of ``mtr-en``: how many samples each (feature, round) cell gets.

Builds the whole suite (cached; about 4 h of audio, so the first build takes a while on two
cores), plans it as MTR feeds it (``multi-ref`` on the suite's user channel, user unmuted) and
counts, for every feature and round k = 1..10, the samples whose event is that round's feature:
the smooth and background rounds' TURN_SHIFT (at the user's end), the interruption rounds'
BARGE_IN (inside the barge-in), the pause rounds' TURN_HOLD (inside the pause).  MTR reports
success per round over 20 dialogues per feature, so a cell under 20 is a round lost to the plan
(issue 32 asks for 30).  Then the cells the tables read: per feature and round from that
feature's own dialogues (the feature and round tables), and per combination its smooth rounds
over rounds 1-10 (the ablation table); a cell under 30 is flagged and makes the exit status 1.
Also prints the suite's size and how many feature spans the annotator saw as their event.

Usage: .venv/bin/python perf/mtr_suite_cells.py
"""

from __future__ import annotations

from collections import Counter

from duplexeval.data import Need, load_dataset
from duplexeval.data._mtr_record import FEATURE_SAMPLES, feature_round
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.suites import SUITES, build_suite

LEAST = 30
"""Events per cell the full suite must give (issue 32)."""


def main() -> int:
    suite = SUITES["mtr-en"]
    root = build_suite("mtr-en", quality=False)
    dataset, _ = load_dataset(root, audio=Need.OPTIONAL)
    dialogues = list(dataset.dialogues)
    plan = build_plan(dialogues, PlanOptions(protocol=EvalProtocol.MULTI_REF,
                                             channels=suite.channels, mute=False))
    by_dialogue: dict[str, list] = {}
    for s in plan.samples:
        by_dialogue.setdefault(s.event_id.rsplit("_ch", 1)[0], []).append(s)
    cells: Counter[tuple[str, int]] = Counter()
    own: Counter[tuple[str, int]] = Counter()  # (feature, k) in that feature's dialogues
    ablation: Counter[str] = Counter()  # smooth rounds with a sample, per combination
    rounds_with: Counter[str] = Counter()
    for d in dialogues:
        record = d.extra.get("mtr") or {}
        rounds = record.get("rounds", [])
        for feature in FEATURE_SAMPLES:
            rounds_with[feature] += sum(feature in r["features"] for r in rounds)
            found = {feature_round(rounds, feature, s.task, s.event_start)
                     for s in by_dialogue.get(d.id, [])} - {None}
            cells.update((feature, k) for k in found)
            if record.get("group") == "feature" and record.get("label") == feature:
                own.update((feature, k) for k in found)
            if record.get("group") == "combination" and feature == "smooth":
                ablation[record["label"]] += len(found)
    seconds = sum(d.duration for d in dialogues)
    print(f"mtr-en: {len(dialogues)} dialogues, {seconds / 3600:.2f} h of audio, "
          f"{len(plan.samples)} multi-ref samples on user channel(s) {suite.channels}")
    print("samples per (feature, round k), every dialogue with the feature; "
          "rounds with the feature -> rounds with a sample")
    for feature in FEATURE_SAMPLES:
        row = [cells[(feature, k)] for k in range(1, 11)]
        got = sum(row)
        print(f"  {feature:<13} k=1..10: {' '.join(f'{n:3d}' for n in row)}   min {min(row)}; "
              f"{rounds_with[feature]} -> {got}")
    low = 0
    print(f"the tables' cells (flag: under {LEAST}): per feature and round, its own dialogues")
    for feature in FEATURE_SAMPLES:
        row = [own[(feature, k)] for k in range(1, 11)]
        low += sum(n < LEAST for n in row)
        print(f"  {feature:<13} k=1..10: {' '.join(f'{n:3d}' for n in row)}"
              + ("   UNDER" if min(row) < LEAST else ""))
    print("  ablation (smooth rounds 1-10 per combination): "
          + ", ".join(f"{label} {n}" + (" UNDER" if n < LEAST else "")
                      for label, n in sorted(ablation.items())))
    low += sum(n < LEAST for n in ablation.values())
    print(f"cells under {LEAST}: {low}")
    return 1 if low else 0


if __name__ == "__main__":
    raise SystemExit(main())
