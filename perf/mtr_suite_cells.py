"""The per-round cells of ``mtr-en``: how many samples each (feature, round) cell gets.

Builds the whole suite (cached; about 4 h of audio, so the first build takes a while on two
cores), plans it as MTR feeds it (``multi-ref`` on the suite's user channel, user unmuted) and
counts, for every feature and round k = 1..10, the samples whose event is that round's feature:
the smooth and background rounds' TURN_SHIFT (at the user's end), the interruption rounds'
BARGE_IN (inside the barge-in), the pause rounds' TURN_HOLD (inside the pause).  MTR reports
success per round over 20 dialogues per feature, so a cell under 20 is a round lost to the plan.
Also prints the suite's size and how many feature spans the annotator saw as their event.

Usage: .venv/bin/python perf/mtr_suite_cells.py
"""

from __future__ import annotations

from collections import Counter

from duplexeval.data import Need, load_dataset
from duplexeval.data._mtr_record import FEATURE_SAMPLES, feature_round
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.suites import SUITES, build_suite


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
    rounds_with: Counter[str] = Counter()
    for d in dialogues:
        record = d.extra.get("mtr") or {}
        rounds = record.get("rounds", [])
        for feature in FEATURE_SAMPLES:
            rounds_with[feature] += sum(feature in r["features"] for r in rounds)
            found = {feature_round(rounds, feature, s.task, s.event_start)
                     for s in by_dialogue.get(d.id, [])}
            cells.update((feature, k) for k in found if k is not None)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
