"""``duplexeval accuracy RUN_DIR``: how close the analysis of a run comes to the truth its system
logged (``scripted`` logs exactly where it speaks)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duplexeval.cli._options import add_analysis_options, analysis_options, number, variant_name

__all__ = ["add_accuracy"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_accuracy(sub: Subparsers) -> None:
    """``accuracy RUN_DIR``."""
    p = sub.add_parser("accuracy", help="the analysis of a run against the speech its system "
                       "logged: boundary precision and recall, verdict and latency agreement")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--variant", type=variant_name, default="m3",
                   help="the timing variant whose per-event values "
                   "are compared (default m3)")
    p.add_argument("--tolerance", type=number(float, 0, 10, low_open=True), default=0.05,
                   metavar="SECONDS",
                   help="a boundary matches within this many seconds (inclusive; default 0.05)")
    add_analysis_options(p)
    p.set_defaults(func=_accuracy)


def _accuracy(args: argparse.Namespace) -> int:
    from duplexeval.errors import DuplexevalError
    from duplexeval.metrics._accuracy import report_lines, run_accuracy

    if not 0 < args.tolerance < 10:
        raise DuplexevalError(f"--tolerance must be in (0, 10) seconds, got {args.tolerance}")
    bounds, agreement = run_accuracy(Path(args.run_dir), analysis_options(args), args.variant,
                                     args.tolerance)
    print("\n".join(report_lines(bounds, agreement, args.tolerance)))
    return 0
