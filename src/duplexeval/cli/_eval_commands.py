"""``duplexeval eval BENCH... --system NAME -o OUT``: every cell of the benchmarks, one bundle."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duplexeval.cli._options import (
    add_executor_options,
    add_judge_endpoint_options,
    executor_from,
    positive_int,
    repeat_count,
    system_args,
)
from duplexeval.errors import DuplexevalError

__all__ = ["add_eval"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_eval(sub: Subparsers) -> None:
    """``eval BENCH... --system NAME -o OUT``."""
    p = sub.add_parser("eval", help="run, analyse, score and tabulate benchmarks (m3, flexi, "
                       "mtr, fdb-v1) on a system, into one bundle")
    p.add_argument("benchmarks", nargs="+", metavar="BENCH",
                   help="m3, flexi, mtr, fdb-v1 (with --data), or one a package registers")
    p.add_argument("--system", required=True, help="a system name or module:Class")
    p.add_argument("--system-arg", action="append", default=[], metavar="KEY=VALUE")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="the suites' quick subsets (the default)")
    size.add_argument("--full", action="store_true", help="the whole suites")
    size.add_argument("--limit", type=positive_int, default=None, metavar="N",
                      help="the first N dialogues of each suite (decoded from its shipped "
                      "quick-subset pack where that holds them, as --quick is)")
    p.add_argument("--data", default=None, metavar="official|DIR",
                   help="instead of the bundled suites: 'official' (each benchmark's public "
                   "release, downloaded once by `data download`) or a folder (the dataset of "
                   "a one-suite benchmark, or DIR/SUITE for each suite, e.g. DIR/m3-chat-en); "
                   "--limit still counts dialogues")
    p.add_argument("--protocol", action="append", default=None, metavar="P",
                   choices=["single", "multi-gen", "multi-ref", "interactive"],
                   help="only the cells of this protocol (repeatable; default all): "
                   "M3's Table 5 is Multi (gen); interactive is the simulated user's")
    p.add_argument("-o", "--out", required=True, metavar="OUT",  # checked by evaluate
                   help="the bundle folder")
    p.add_argument("--html", action="store_true", help="also the HTML report of every cell "
                   "(OUT/report/index.html: figures, every event with its audio)")
    m = p.add_argument_group("measures no benchmark has (none by default)")
    m.add_argument("--measures", default="", metavar="LIST",
                   help="comma-separated: realism (timing distributions against the human "
                   "channel), turnbench (window matching, latency p10/p50/p90, false "
                   "positives), barge-in-cost (penalty seconds per event), stability (pass@k, "
                   "pass^k; with --repeats), counterfactual (the paired effect of the user's "
                   "act); each scores every cell and gets a table in OUT/tables/BENCH/")
    m.add_argument("--repeats", type=repeat_count, default=1, metavar="K",
                   help="K tries of each sample in a second run per cell (forks of one "
                   "snapshot, K seeds): pass@k, pass^k and stability (1: no second run)")
    m.add_argument("--counterfactual", nargs="?", const="silence", default=None,
                   choices=("silence", "noise"), metavar="silence|noise",
                   help="each backchannel, barge-in and background-speech sample's twin in "
                   "that second run, the user's act replaced from its onset by silence (the "
                   "default: the paired effect of the act) or by signal-correlated noise (its "
                   "envelope without its speech: the effect of its content)")
    g = p.add_argument_group("content judge (offline content metrics always)")
    add_judge_endpoint_options(g)
    add_executor_options(p, units=True)
    p.set_defaults(func=_eval)


def _judge(args: argparse.Namespace) -> Any:
    from duplexeval.metrics.content._score import JudgeSettings

    if (args.judge_url is None) != (args.judge_model is None):
        raise DuplexevalError("--judge-url and --judge-model go together")
    if args.judge_url is None:
        return None
    return JudgeSettings(base_url=args.judge_url, model=args.judge_model,
                         concurrency=args.judge_concurrency, timeout=args.judge_timeout,
                         cache_path=Path(args.judge_cache) if args.judge_cache else None)


def _protocols(chosen: list[str] | None) -> Any:
    """A cell filter keeping the chosen protocols' cells (``None``: every cell)."""
    if not chosen:
        return None
    wanted = set(chosen)
    return lambda bench, cell: cell.protocol.value in wanted


def _eval(args: argparse.Namespace) -> int:
    from duplexeval.benchmarks import BENCHMARKS, evaluate
    from duplexeval.benchmarks._measures import Measures
    from duplexeval.systems._registry import load_system

    benchmarks = [BENCHMARKS.get(name) for name in args.benchmarks]  # unknown: one line, early
    subset = None if args.full else args.limit if args.limit is not None else "quick"
    judge = _judge(args)
    names = [n.strip() for n in args.measures.split(",") if n.strip()]
    measures = Measures.of(names, args.repeats, args.counterfactual or False)
    with executor_from(args) as executor:
        system = load_system(args.system, system_args(args.system_arg))
        result = evaluate(system, [b.name for b in benchmarks], Path(args.out), subset,
                          judge=judge, executor=executor, html=args.html, data=args.data,
                          select=_protocols(args.protocol), measures=measures)
    for bench in benchmarks:
        cells = result.cells[bench.name]
        print(f"{bench.title} (v{bench.version}): "
              f"{sum(c.results is not None for c in cells)} of {len(cells)} cells run")
        for cell in cells:
            if cell.skipped is not None:
                print(f"  skipped {cell.cell.name}: {cell.skipped}")
        for table in result.manifest.tables[bench.name]:
            print(f"  {result.out / table}")
        _print_measures(cells)
    if args.html:
        print(f"HTML report: {result.out / 'report' / 'index.html'}")
    print(f"bundle: {result.out} (manifest {result.out / 'eval.json'})")
    return 0


def _print_measures(cells: list[Any]) -> None:
    """The text summary of each cell's measures: its realism distances, its stability (pass@1,
    pass^k, flips, latency spread) and its counterfactual effects."""
    from duplexeval.report._text import (
        counterfactual_table_lines,
        distribution_table_lines,
        stability_lines,
    )

    for cell in cells:
        for m in cell.measures:
            r = m.results
            lines = ([*distribution_table_lines(r.distributions)]
                     if r.distributions is not None else [])
            lines += [line for line in stability_lines(r) if not line.startswith("  ")]
            lines += counterfactual_table_lines(r.counterfactual) if r.counterfactual else []
            if lines:
                print(f"  {cell.cell.name}, {m.variant}{' (tries)' if m.tries else ''}:")
                print("\n".join(f"    {line}" for line in lines))
