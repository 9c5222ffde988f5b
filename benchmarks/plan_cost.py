"""Model-seconds of the official per-event execution vs shared-prefix execution, and planning
speed, on the bundled data and (when present) the official M3 toy sets.

Usage: .venv/bin/python benchmarks/plan_cost.py
"""

from __future__ import annotations

import time

from duplexeval.data.validate import load_dataset
from duplexeval.demo import default_datasets
from duplexeval.protocols import PlanOptions, Protocol, build_plan
from duplexeval.report.text import PLAN_HEADER, format_table, plan_row


def main() -> None:
    rows = []
    for demo in default_datasets():
        dataset, _ = load_dataset(demo.root)
        for protocol in Protocol:
            options = PlanOptions(protocol=protocol, channels=demo.channels)
            start = time.perf_counter()
            repeats = 200
            for _ in range(repeats):
                plan = build_plan(dataset.dialogues, options)
            elapsed = (time.perf_counter() - start) / repeats
            rows.append([*plan_row(demo.name, plan), f"{elapsed * 1000:.2f} ms"])
    print("\n".join(format_table([*PLAN_HEADER, "plan time"], rows)))


if __name__ == "__main__":
    main()
