"""Run subcommands: ``plan``, ``systems`` and ``run``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from duplexeval.cli._options import (
    add_executor_options,
    add_plan_options,
    add_user_policy_options,
    dataset_folder,
    executor_from,
    number,
    out_folder,
    plan_options,
    random_seed,
    system_args,
    user_policy,
    warn,
)
from duplexeval.errors import DuplexevalError

__all__ = ["add_plan", "add_run", "add_systems"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_plan(sub: Subparsers) -> None:
    """``plan DATASET --protocol P``."""
    p = sub.add_parser("plan", help="list the evaluation samples a run will execute")
    p.add_argument("dataset", metavar="DATASET_DIR|SUITE")
    add_plan_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object per sample")
    p.add_argument("--summary-json", action="store_true", help="one JSON summary object")
    p.set_defaults(func=_plan)


def _plan(args: argparse.Namespace) -> int:
    from duplexeval.data._validate import load_dataset
    from duplexeval.plan._samples import build_plan

    dataset, warnings = load_dataset(dataset_folder(args.dataset), args.split)
    warn(warnings)
    plan = build_plan(dataset, plan_options(args))
    if args.json:
        for sample in plan.samples:
            print(json.dumps(sample.to_json(), ensure_ascii=False))
    if args.summary_json:
        print(json.dumps(plan.summary_json(), ensure_ascii=False))
    if not (args.json or args.summary_json):
        from duplexeval.report._text import plan_summary_lines

        print("\n".join(plan_summary_lines(dataset.name or str(args.dataset), plan)))
    return 0


def add_systems(sub: Subparsers) -> None:
    """``systems``."""
    p = sub.add_parser("systems", help="list the systems that can be run")
    p.set_defaults(func=_systems)


def _systems(args: argparse.Namespace) -> int:
    from duplexeval.report._text import format_table
    from duplexeval.systems._registry import available_systems, load_system

    rows = []
    for info in available_systems().values():
        try:
            system = load_system(info.name)
        except DuplexevalError as exc:
            rows.append([info.name, info.origin, "-", "-", f"cannot load: {exc}"])
            continue
        caps = system.capabilities
        tf = "+".join(k for k, v in (("audio", caps.teacher_forcing_audio),
                                     ("text", caps.teacher_forcing_text)) if v) or "no"
        oracle = ", ".join(sorted(o.value for o in caps.oracle)) or "none"
        rows.append([info.name, info.origin, system.version, system.extra or "-",
                     f"{caps.sample_rate} Hz, {caps.frame_size}-sample frames, clock "
                     f"{caps.clock.value}, snapshot {'yes' if caps.snapshot else 'no'}, "
                     f"batch {'yes' if caps.batch else 'no'}, "
                     f"teacher forcing {tf}, oracle data {oracle}"])
    print("\n".join(format_table(["system", "from", "version", "extra", "capabilities"],
                                        rows)))
    return 0


def add_run(sub: Subparsers) -> None:
    """``run --system S --dataset D --protocol P``."""
    p = sub.add_parser("run", help="run a system on a dataset under one protocol")
    p.add_argument("--system", required=True, help="a name from `duplexeval systems` or "
                   "module:Class")
    p.add_argument("--system-arg", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--dataset", required=True, metavar="DATASET_DIR|SUITE",
                   help="a dataset folder or a bundled suite name (built if needed)")
    add_plan_options(p)
    for action in p._actions:  # run alone also takes the reactive protocol (no static plan)
        if action.dest == "protocol" and action.choices is not None:
            action.choices = [*action.choices, "interactive"]
    p.add_argument("--out", type=out_folder, default=None,
                   help="run directory (default runs/SYSTEM-PROTOCOL)")
    p.add_argument("--seed", type=random_seed, default=0)
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed sample")
    p.add_argument("--batch-size", type=number(int, 1, 4096), default=None, metavar="N",
                   help="continuations of a shared prefix stepped together as batch rows by "
                   "systems with the batch capability (default 8, "
                   "duplexeval.runs._driver.DEFAULT_BATCH_SIZE; 1: one at a time); the outputs are "
                   "the same")
    p.add_argument("--condition", action="append", default=[], metavar="KIND:KEY=VALUE,...",
                   help="an acoustic condition on what the system hears, repeatable: "
                   "speed:factor=F, reverb:rt60=S, noise:snr=DB[,color=white|pink|brown], "
                   "babble:snr=DB[,talkers=N], echo:gain=DB[,delay=S], gain:db=DB, "
                   "clip:level=L, network:loss=P[,burst=FRAMES,jitter=MS] (wall-clock "
                   "systems); applied in that order (duplexeval.conditions)")
    add_user_policy_options(p)
    add_executor_options(p, units=True)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from duplexeval.conditions import parse_condition
    from duplexeval.data._validate import Need, load_dataset
    from duplexeval.plan._samples import build_plan
    from duplexeval.runs import execute_run, summary_lines
    from duplexeval.runs._driver import DEFAULT_BATCH_SIZE
    from duplexeval.systems._registry import load_system

    conditions = [parse_condition(text) for text in args.condition]  # refused before all else
    if args.protocol == "interactive" and args.executor != "local":
        raise DuplexevalError(f"--executor {args.executor} does not apply to --protocol "
                              "interactive: its one session per dialogue and user channel runs "
                              "in this process (no prefix is shared, nothing forks)")
    with executor_from(args) as executor:  # connected first: an unreachable scheduler fails fast
        system = load_system(args.system, system_args(args.system_arg))
        dataset, warnings = load_dataset(dataset_folder(args.dataset), args.split,
                                         audio=Need.REQUIRE)
        warn(warnings)
        options = plan_options(args)
        policy = user_policy(args)  # refused under a static protocol
        plan = build_plan(dataset, options)
        out = Path(args.out) if args.out else Path("runs") / f"{system.name}-{options.protocol}"
        result = execute_run(system, dataset, plan, out, seed=args.seed,
                             fail_fast=args.fail_fast, executor=executor,
                             batch_size=args.batch_size or DEFAULT_BATCH_SIZE,
                             conditions=conditions, user_policy=policy)
    print("\n".join(summary_lines(result, system, plan)))
    if result.failed:  # the count on stderr too, below the failed samples' own lines
        print(f"duplexeval: {result.out}: {result.failed} of {result.samples + result.failed} "
              "samples failed (each named above, its reason in its record); the same command "
              "runs them again", file=sys.stderr)
    if options.protocol.value == "interactive":
        print(f"  realised dialogues, timelines and decision logs in {out}/interactive; "
              f"replay with `duplexeval replay {out} --dataset {args.dataset}`")
    return 1 if result.failed else 0
