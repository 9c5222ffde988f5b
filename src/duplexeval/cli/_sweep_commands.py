"""``duplexeval sweep --system S --dataset D --condition KIND:KEY=V1,V2,... -o OUT``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duplexeval._fileio import foreign_folder_problem
from duplexeval.cli._options import (
    add_analysis_options,
    add_executor_options,
    add_plan_options,
    add_user_policy_options,
    analysis_options,
    dataset_folder,
    executor_from,
    out_folder,
    plan_options,
    random_seed,
    system_args,
    user_policy,
    variant_name,
    warn,
)
from duplexeval.errors import DuplexevalError

__all__ = ["add_sweep"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_sweep(sub: Subparsers) -> None:
    """``sweep --system S --dataset D --condition noise:snr=30,20,10,0 -o OUT``."""
    p = sub.add_parser("sweep", help="run and score a system over a condition's grid: a table "
                       "(with CIs and the preserve rate) and a plot per metric")
    p.add_argument("--system", required=True, help="a name from `duplexeval systems` or "
                   "module:Class")
    p.add_argument("--system-arg", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--dataset", required=True, metavar="DATASET_DIR|SUITE")
    add_plan_options(p)
    for action in p._actions:  # the protocol defaults to multi-gen here, interactive allowed
        if action.dest == "protocol" and action.choices is not None:
            action.choices = [*action.choices, "interactive"]
            action.required = False
            action.default = "multi-gen"
    p.add_argument("--condition", action="append", required=True,
                   metavar="KIND:KEY=V1,V2,...",
                   help="the swept condition, one parameter over a list from mild to strong "
                   "(noise:snr=30,20,10,0); repeat for conditions held fixed at every point "
                   "(gain:db=-6); the kinds as for `run --condition`")
    p.add_argument("--variant", type=variant_name, default="m3",
                   help="the timing variant that scores each run "
                   "(default m3); each run is analysed for timing only (--scope timing) "
                   "unless an analysis option says otherwise")
    p.add_argument("--seed", type=random_seed, default=0)
    p.add_argument("-o", "--out", required=True, type=out_folder,
                   help="the sweep folder (runs/, sweep.md, sweep.csv, sweep.json, plots/)")
    add_analysis_options(p)  # default here: --scope timing (a sweep tabulates timing)
    add_user_policy_options(p)
    add_executor_options(p, units=True)
    p.set_defaults(func=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from duplexeval.analysis._pipeline import AnalysisOptions
    from duplexeval.app.sweep import parse_grid, run_sweep
    from duplexeval.app.sweep._run import check_sweep
    from duplexeval.data._validate import Need, load_dataset
    from duplexeval.metrics._base import get_variant
    from duplexeval.plan._samples import build_plan
    from duplexeval.systems._registry import load_system

    grid = parse_grid(args.condition)  # refused before all else
    foreign = foreign_folder_problem(Path(args.out), ("runs", "sweep.json"), "a sweep folder")
    if foreign is not None:
        raise DuplexevalError(foreign)
    get_variant(args.variant)  # an unknown variant: one line, before any run
    options = plan_options(args)
    policy = user_policy(args)
    analysis = analysis_options(args) or replace(AnalysisOptions(), content_event_types=())
    with executor_from(args) as executor:
        system = load_system(args.system, system_args(args.system_arg))
        dataset, warnings = load_dataset(dataset_folder(args.dataset), args.split,
                                         audio=Need.REQUIRE)
        warn(warnings)
        plan = build_plan(dataset, options)
        check_sweep(system, plan)
        result = run_sweep(system, dataset, plan, grid, Path(args.out), variant=args.variant,
                           seed=args.seed, analysis=analysis, executor=executor,
                           policy=policy)
    print(result.markdown, end="")
    for path in result.files:
        print(f"  {path}")
    return 0
