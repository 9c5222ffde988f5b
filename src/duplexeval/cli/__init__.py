"""The ``duplexeval`` command: one builder per subcommand, in the order of the data flow.

Errors caused by input (bad files, bad arguments) print one line per problem to stderr and exit
with code 2, never a traceback: :mod:`duplexeval.cli._failures` says which exceptions those are and
how each reads.  A bad argument is one line too (:class:`OneLineParser`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from duplexeval.cli._accuracy_commands import add_accuracy
from duplexeval.cli._agreement_commands import add_judge_agreement
from duplexeval.cli._bc_commands import add_bc_reference
from duplexeval.cli._data_commands import add_annotate, add_data, add_synth, add_validate
from duplexeval.cli._eval_commands import add_eval
from duplexeval.cli._failures import INPUT_ERRORS, failure_lines, print_lines, summary_line
from duplexeval.cli._replay_commands import add_replay
from duplexeval.cli._report_commands import add_compare, add_report, add_results
from duplexeval.cli._rtcheck_commands import add_rtcheck
from duplexeval.cli._run_commands import add_plan, add_run, add_systems
from duplexeval.cli._score_commands import add_analyze, add_demo, add_score
from duplexeval.cli._segment_commands import add_segment
from duplexeval.cli._sweep_commands import add_sweep
from duplexeval.cli._verify_commands import add_verify
from duplexeval.version import describe

__all__ = ["OneLineParser", "build_parser", "main"]

BUILDERS = (add_validate, add_annotate, add_synth, add_data, add_plan, add_systems, add_run,
            add_rtcheck, add_replay, add_analyze, add_score, add_judge_agreement,
            add_segment, add_bc_reference, add_report, add_compare, add_accuracy, add_results,
            add_eval, add_sweep, add_verify, add_demo)
"""Each adds one subcommand (``data`` adds its group) to the subparsers."""


class _Version(argparse.Action):
    """``--version``: :func:`duplexeval.version.describe` (git is asked only when given)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"duplexeval {describe()}")
        parser.exit()


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, ``duplexeval: COMMAND: MESSAGE (see
    duplexeval COMMAND --help)``, exit 2 (argparse's own prints the usage first).  Its
    subparsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("duplexeval").strip()
        print_lines([f"{command + ': ' if command else ''}{message} (see {self.prog} --help)"])
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``duplexeval`` command."""
    parser = OneLineParser(
        prog="duplexeval",
        description="Benchmark full-duplex spoken dialogue systems (M3-DuplexBench, "
                    "MTR-DuplexBench, FLEXI).",
    )
    parser.add_argument("--version", action=_Version, nargs=0, default=argparse.SUPPRESS,
                        help="print the version, with the git revision when it is not a "
                             "release, and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in BUILDERS:
        add(sub)
    return parser


def _matplotlib_cache_in_ours() -> None:
    """Matplotlib's font cache under the duplexeval cache (``$DUPLEXEVAL_CACHE/matplotlib``)
    unless ``MPLCONFIGDIR`` is set: matplotlib otherwise writes ``~/.cache/matplotlib`` on
    its first import, and a command writes nothing under ``$HOME`` but the duplexeval cache
    (SECURITY.md).  Only the commands do this; ``import duplexeval`` leaves matplotlib's
    configuration as the user has it."""
    import os

    from duplexeval._cache import cache_root

    os.environ.setdefault("MPLCONFIGDIR", str(cache_root() / "matplotlib"))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``duplexeval`` console script."""
    _matplotlib_cache_in_ours()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print_lines(["interrupted"])
        return 130
    except INPUT_ERRORS as exc:
        print_lines([summary_line(failure_lines(exc))])
        return int(getattr(exc, "exit_code", 2))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
