"""``bc-reference``: reference backchannel distributions annotated by an LLM judge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duplexeval.cli._options import add_judge_endpoint_options, out_file, split_name
from duplexeval.errors import DuplexevalError

__all__ = ["add_bc_reference"]


def add_bc_reference(sub: Any) -> None:
    """``bc-reference SOURCE -o FILE --judge-url URL --judge-model MODEL``."""
    p = sub.add_parser("bc-reference", help="reference backchannel distributions for "
                       "narratives, annotated by an LLM judge (FLEXI's method), for the "
                       "model-backchannel JSD")
    p.add_argument("source", metavar="FLEXI_ROOT|DATASET_DIR",
                   help="folders with input.json (+ input.wav), or a dataset in the M3 layout")
    p.add_argument("-o", "--output", type=out_file, required=True, metavar="FILE",
                   help="{item: distribution} JSON (FDB's icc_gt_distribution.json shape); "
                        "FILE.provenance.jsonl beside it records every answer")
    p.add_argument("--split", type=split_name, default="test")
    p.add_argument("--channel", type=int, choices=[0, 1], default=0,
                   help="with a dataset: the narrator's channel (default 0)")
    p.add_argument("--language", default="en")
    g = p.add_argument_group("judge")
    add_judge_endpoint_options(g)
    p.set_defaults(func=_bc_reference)


def _bc_reference(args: argparse.Namespace) -> int:
    from duplexeval._fileio import atomic_write_json, atomic_write_text, json_line
    from duplexeval.metrics.content._bc_reference import annotate_positions, narratives_from
    from duplexeval.metrics.content._score import JudgeSettings

    items = narratives_from(Path(args.source), args.split, args.channel)  # a bad SOURCE first
    if args.judge_url is None or args.judge_model is None:
        raise DuplexevalError("bc-reference needs --judge-url URL and --judge-model MODEL")
    if not items:
        raise DuplexevalError(f"{args.source}: no narrative found")
    judge = JudgeSettings(args.judge_url, args.judge_model, concurrency=args.judge_concurrency,
                          timeout=args.judge_timeout,
                          cache_path=Path(args.judge_cache) if args.judge_cache else None)
    distributions, records = annotate_positions(items, judge, args.language)
    out = Path(args.output)
    atomic_write_text(out.with_name(out.name + ".provenance.jsonl"),
                      "".join(json_line(r) for r in records))
    atomic_write_json(out, distributions)
    unusable = [r for r in records if r["unusable_reason"]]
    print(f"{out}: {len(distributions)} distribution(s); {len(unusable)} item(s) without one "
          "(reasons in the provenance file)")
    return 0
