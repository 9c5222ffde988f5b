"""``judge-agreement``: how far two LLM judges agree on the same content items.

``duplexeval judge-agreement RUN_DIR --judge url=URL,model=MODEL --judge url=URL,model=MODEL``
asks both judges every content item of a scored run (through the answer cache);
``duplexeval judge-agreement --content A.jsonl --content B.jsonl`` compares two content files.

A judge is one ``--judge`` spec, ``url=URL,model=MODEL`` (keys in any order; the same names as
``score``'s ``--judge-url`` and ``--judge-model``), rather than two repeated ``--judge-url`` /
``--judge-model`` pairs: argparse pairs repeated options only by position, so one left out
would silently give judge B judge A's URL; a spec keeps each judge's endpoint and model
together and says which is A (the first) and B (the second).  A comma inside a value is kept
unless it is followed by ``url=`` or ``model=``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from duplexeval.cli._options import add_judge_call_options
from duplexeval.errors import DuplexevalError

__all__ = ["add_judge_agreement", "judge_spec"]

Subparsers = Any  # argparse's private _SubParsersAction

SPEC_KEYS = ("url", "model")
_SPLIT = re.compile(r",(?=(?:" + "|".join(SPEC_KEYS) + r")=)")


def judge_spec(text: str) -> dict[str, str]:
    """``url=URL,model=MODEL`` as ``{"url": ..., "model": ...}``; one line naming the spec
    when a key is unknown, repeated, missing or empty."""
    out: dict[str, str] = {}
    for part in _SPLIT.split(text):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in SPEC_KEYS:
            raise DuplexevalError(f"--judge {text!r}: {part!r} is not url=URL or model=MODEL "
                                  "(expected url=URL,model=MODEL)")
        if key in out:
            raise DuplexevalError(f"--judge {text!r}: {key}= given twice")
        out[key] = value.strip()
    missing = [k for k in SPEC_KEYS if not out.get(k)]
    if missing:
        raise DuplexevalError(f"--judge {text!r}: no {' and no '.join(missing)} "
                              "(expected url=URL,model=MODEL)")
    return out


def add_judge_agreement(sub: Subparsers) -> None:
    """``judge-agreement RUN_DIR --judge A --judge B`` or ``--content A --content B``."""
    p = sub.add_parser("judge-agreement", help="agreement of two LLM judges on the same "
                       "content items (exact agreement, Cohen's kappa, Krippendorff's alpha, "
                       "mean difference, bootstrap CIs)")
    p.add_argument("run_dir", nargs="?", default=None, metavar="RUN_DIR",
                   help="a scored run: both judges are asked its content items")
    p.add_argument("--judge", action="append", default=[], metavar="url=URL,model=MODEL",
                   help="a judge (twice with RUN_DIR: A, then B); key from "
                        "DUPLEXEVAL_JUDGE_API_KEY or OPENAI_API_KEY")
    p.add_argument("--content", action="append", default=[], metavar="FILE",
                   help="a content.jsonl (or a scores folder holding one); twice: A, then B")
    p.add_argument("--content-mode", choices=["default", "official"], default="default",
                   help="with RUN_DIR: whose content inputs, as for `score`")
    p.add_argument("--json", action="store_true", help="strict JSON on stdout instead of the "
                   "table (null with a reason where a value is undefined)")
    add_judge_call_options(p.add_argument_group("judge calls (with RUN_DIR)"))
    p.set_defaults(func=_judge_agreement)


def _settings(args: argparse.Namespace, spec: dict[str, str]) -> Any:
    from duplexeval.metrics.content._score import JudgeSettings

    return JudgeSettings(base_url=spec["url"], model=spec["model"],
                         concurrency=args.judge_concurrency, timeout=args.judge_timeout,
                         cache_path=Path(args.judge_cache) if args.judge_cache else None)


def _report(args: argparse.Namespace) -> Any:
    """The report the arguments ask for (every argument checked before any call)."""
    from duplexeval.metrics._judge_agreement import compare_files, judge_run

    if args.run_dir is not None and args.content:
        raise DuplexevalError("give RUN_DIR with two --judge, or two --content files, not both")
    if args.run_dir is None:
        if args.judge or len(args.content) != 2:
            raise DuplexevalError("without RUN_DIR, give exactly two --content files (and no "
                                  f"--judge); got {len(args.content)} --content")
        return compare_files(Path(args.content[0]), Path(args.content[1]))
    if len(args.judge) != 2:
        raise DuplexevalError("RUN_DIR needs two --judge url=URL,model=MODEL (judge A, then "
                              f"judge B); got {len(args.judge)}")
    from duplexeval.metrics.content._inputs import ContentMode, ContentOptions

    a, b = (_settings(args, judge_spec(text)) for text in args.judge)
    return judge_run(Path(args.run_dir), a, b, ContentOptions(ContentMode(args.content_mode)))


def _judge_agreement(args: argparse.Namespace) -> int:
    from duplexeval.report._agreement import agreement_json_text, agreement_lines

    report = _report(args)
    print(agreement_json_text(report) if args.json else "\n".join(agreement_lines(report)))
    return 0
