"""Reporting subcommands: ``report`` (paper-style tables), ``compare`` (two runs, paired) and
``results schema`` (the JSON Schema of results files)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from duplexeval.cli._options import out_file, out_folder, random_seed

__all__ = ["add_compare", "add_report", "add_results"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_results(sub: Subparsers) -> None:
    """``results schema [-o FILE]``."""
    p = sub.add_parser("results", help="the results file format")
    inner = p.add_subparsers(dest="results_command", required=True, metavar="COMMAND")
    s = inner.add_parser("schema", help="print (or write) the JSON Schema of results files")
    s.add_argument("-o", "--output", type=out_file, default=None, metavar="FILE",
                   help="write it here (atomically) instead of printing it")
    s.set_defaults(func=_results_schema)


def _results_schema(args: argparse.Namespace) -> int:
    from duplexeval.results import json_schema_text, write_json_schema

    if args.output is None:
        sys.stdout.write(json_schema_text())
    else:
        write_json_schema(args.output)
        print(f"JSON Schema written to {args.output}")
    return 0


def _scorer(enabled: bool) -> Any:
    """Scores a run directory that has no results yet (default settings), or ``None``."""
    if not enabled:
        return None

    def score(run_dir: Path) -> None:
        from duplexeval.metrics._score_run import score_run_dir

        print(f"duplexeval: {run_dir} has no scores; scoring it (duplexeval score)",
              file=sys.stderr)
        score_run_dir(run_dir, progress=False)

    return score


def _run_name(scored: Any) -> str:
    """A run's name: its folder (the scores folder's parent)."""
    return scored.run_dir.resolve().name


def add_report(sub: Subparsers) -> None:
    """``report RUN_DIR... -o OUT_DIR [--format md,csv,tex] [--allow-mixed] [--no-score]``."""
    p = sub.add_parser("report", help="the M3 paper tables (Table 5; Table 6 when a system was "
                       "run under several protocols) of scored runs")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR",
                   help="run directories (or their scores folders or results files)")
    p.add_argument("-o", "--output", type=out_folder, required=True, metavar="OUT_DIR")
    p.add_argument("--format", default="md,csv,tex", metavar="md,csv,tex",
                   help="comma-separated formats (default all three)")
    p.add_argument("--allow-mixed", action="store_true",
                   help="let a Table 6 row compare protocols run on different datasets")
    p.add_argument("--no-score", action="store_true",
                   help="refuse a run directory without scores instead of scoring it")
    p.add_argument("--html", action="store_true",
                   help="also write OUT_DIR/index.html: tables, figures and every event with "
                   "its timeline, audio (linked from the runs), transcripts and judge answers")
    p.set_defaults(func=_report)


def _write_variant_tables(runs: list[tuple[str, Any]], out: Path) -> list[Path]:
    """``flexi.md``, ``mtr.md``, ``fdb-v1.md``: the tables of runs scored with those variants."""
    from duplexeval._fileio import atomic_write_text
    from duplexeval.report._text import variant_report_lines

    written = []
    for stem, lines in variant_report_lines(runs).items():
        path = out / f"{stem}.md"
        atomic_write_text(path, "\n".join(lines) + "\n")
        written.append(path)
    return written


def _report(args: argparse.Namespace) -> int:
    from duplexeval._fileio import remove_stale_temporaries
    from duplexeval.report._paper_tables import (
        parse_formats,
        sources_of,
        table5_lines,
        write_tables,
    )
    from duplexeval.results import load_scored

    formats = parse_formats(args.format)
    scorer = _scorer(not args.no_score)
    scored = [load_scored(path, scorer) for path in args.runs]
    runs = [(_run_name(s), s.results) for s in scored]
    sources = sources_of(runs, [str(s.path) for s in scored])
    remove_stale_temporaries(Path(args.output))  # a killed report's half-written files
    written = write_tables(sources, Path(args.output), formats, args.allow_mixed)
    written += _write_variant_tables(runs, Path(args.output))
    files, comparisons = _write_comparisons(scored, Path(args.output))
    written += files
    if args.html:
        from duplexeval.report._html_report import write_html_report

        labelled = [(label, s) for (label, _), s in zip(_label_pairs(runs), scored, strict=True)]
        written.append(write_html_report(labelled, Path(args.output), sources, comparisons,
                                         args.allow_mixed))
    print("\n".join(table5_lines(runs)))
    _print_stability(runs)
    print("\nwritten: " + ", ".join(str(p) for p in written))
    return 0


def _print_stability(runs: list[tuple[str, Any]]) -> None:
    """The text summary of each run with repeated tries: pass@1, pass@k, pass^j, the flip
    share and the within-event latency spread per event kind (the notes are in
    ``stability.md``)."""
    from duplexeval.report._text import stability_lines

    for name, results in runs:
        lines = [line for line in stability_lines(results) if not line.startswith("  ")]
        if lines:
            print(f"\n{name} ({results.variant.name}): {lines[0]}")
            print("\n".join(lines[1:]))


def _label_pairs(runs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``(name, results)`` with each name replaced by the run's table label."""
    from duplexeval.report._table_data import label_runs

    return list(zip(label_runs(runs), [r for _, r in runs], strict=True))


def _write_comparisons(scored: list[Any], out: Path) -> tuple[list[Path], list[Any]]:
    """``compare.md`` and ``compare.json``: each system's protocols against its Single run;
    returns the files and the comparisons."""
    from duplexeval._fileio import atomic_write_json, atomic_write_text
    from duplexeval.errors import DuplexevalError
    from duplexeval.report._compare import compare_runs, comparisons_markdown, protocol_pairs

    comparisons = []
    for a, b in protocol_pairs(scored):
        try:
            comparisons.append(compare_runs(a, b))
        except DuplexevalError as exc:
            print(f"duplexeval: not compared: {exc}", file=sys.stderr)
    if not comparisons:
        return [], []
    atomic_write_text(out / "compare.md", comparisons_markdown(comparisons))
    atomic_write_json(out / "compare.json", [c.to_json() for c in comparisons])
    return [out / "compare.md", out / "compare.json"], comparisons


def add_compare(sub: Subparsers) -> None:
    """``compare RUN_A RUN_B [--json FILE] [--seed N]``."""
    p = sub.add_parser("compare", help="paired differences of two scored runs over their "
                       "shared events (bootstrap CI, permutation p, Holm)")
    p.add_argument("run_a", metavar="RUN_A")
    p.add_argument("run_b", metavar="RUN_B")
    p.add_argument("--json", type=out_file, default=None, metavar="FILE",
                   help="also write the comparison")
    p.add_argument("--seed", type=random_seed, default=0, help="random seed (default 0)")
    p.add_argument("--no-score", action="store_true",
                   help="refuse a run directory without scores instead of scoring it")
    p.set_defaults(func=_compare)


def _compare(args: argparse.Namespace) -> int:
    from duplexeval._fileio import atomic_write_json
    from duplexeval.report._compare import compare_lines, compare_runs
    from duplexeval.results import load_scored

    scorer = _scorer(not args.no_score)
    a, b = load_scored(args.run_a, scorer), load_scored(args.run_b, scorer)
    comparison = compare_runs(a, b, seed=args.seed)
    print("\n".join(compare_lines(comparison)))
    if args.json:
        atomic_write_json(args.json, comparison.to_json())
        print(f"\nwritten: {args.json}")
    return 0
