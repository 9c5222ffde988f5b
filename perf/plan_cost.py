"""Protocol cost: the model audio seconds fed under the official per-event execution against
shared-prefix execution, per protocol, and planning speed.

Datasets: the bundled ``sample-en``; the official M3 toy sets when present (found as
``shared/m3_toy/ja`` above the working directory or by ``DUPLEXEVAL_M3_TOY``; third-party data,
read where it is, never copied); and the bundled suites, each on its own user channels: their
quick subsets by default (built into the cache as ``make demo`` builds them, about a minute of
synthesis the first time), every dialogue with ``--suites full`` (minutes of synthesis per suite
the first time), none with ``--suites none``.

Per row (:func:`~duplexeval.report._text.plan_row`): samples per task, the model seconds per
event (the official code re-feeds the whole prefix for every event: each sample's context plus
its window) and with shared prefixes (one continuous pass per dialogue, user channel and context
start, then each sample's own continuation from its fork), their ratio, and the time to build the
plan.  Under ``single`` there is no prefix to share: the two are equal.

Usage: .venv/bin/python perf/plan_cost.py [--suites quick|full|none]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from duplexeval.app._demo import default_datasets
from duplexeval.data import load_dataset
from duplexeval.plan import EvalProtocol, Plan, PlanOptions, build_plan
from duplexeval.report._text import PLAN_HEADER, format_table, plan_row


def _datasets(suites: str) -> list[tuple[str, Path, tuple[int, ...]]]:
    out = [(d.name, d.root, d.channels) for d in default_datasets()]
    if suites == "none":
        return out
    from duplexeval.suites import SUITES, build_suite

    for name in SUITES.names():
        suite = SUITES.get(name)
        if suite.from_toy:
            continue  # the toy sets are above, unvoiced
        limit = None if suites == "full" else "quick"
        root = build_suite(name, progress=False, limit=limit, log=lambda _s: None)
        out.append((name if limit is None else f"{name} (quick)", root, suite.channels))
    return out


def _timed_plan(dialogues: tuple, options: PlanOptions, repeats: int) -> tuple[Plan, float]:
    start = time.perf_counter()
    for _ in range(repeats):
        plan = build_plan(dialogues, options)
    return plan, (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", choices=["quick", "full", "none"], default="quick",
                        help="which builds of the bundled suites (default: quick subsets)")
    parser.add_argument("--repeats", type=int, default=20, help="plans built per row, timed")
    args = parser.parse_args()
    rows = []
    totals: dict[str, list[float]] = {p.value: [0.0, 0.0] for p in EvalProtocol}
    for name, root, channels in _datasets(args.suites):
        dataset, _ = load_dataset(root)
        for protocol in EvalProtocol:
            plan, seconds = _timed_plan(dataset.dialogues,
                                        PlanOptions(protocol=protocol, channels=channels),
                                        args.repeats)
            rows.append([*plan_row(name, plan), f"{seconds * 1000:.2f} ms"])
            totals[protocol.value][0] += plan.model_seconds_per_event()
            totals[protocol.value][1] += plan.model_seconds_shared_prefix()
    print("\n".join(format_table([*PLAN_HEADER, "plan time"], rows)))
    print()
    for protocol, (per_event, shared) in totals.items():
        ratio = per_event / shared if shared > 0 else float("nan")
        print(f"all rows, {protocol}: {per_event:.1f} model s per event, {shared:.1f} with "
              f"shared prefixes ({ratio:.2f}x less)")


if __name__ == "__main__":
    main()
