"""``duplexeval verify OUT``: an evaluation bundle recomputed offline and checked."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_verify"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_verify(sub: Subparsers) -> None:
    """``verify OUT``."""
    p = sub.add_parser("verify", help="recompute an eval bundle's scores and tables offline "
                       "and check every hash (exit 1 naming each difference)")
    p.add_argument("bundle", metavar="OUT")
    p.set_defaults(func=_verify)


def _verify(args: argparse.Namespace) -> int:
    from duplexeval.benchmarks._verify import verify_bundle

    report = verify_bundle(Path(args.bundle))
    for problem in report.problems:
        print(problem)
    extra = report.scorings - report.cells
    measures = f" (and {extra} measure scorings)" if extra > 0 else ""
    print(f"{args.bundle}: {report.files} file hashes, {report.cells} cells scored again"
          f"{measures}, {report.tables} tables written again: "
          + ("all hold" if report.ok else f"{len(report.problems)} difference(s)"))
    return 0 if report.ok else 1
