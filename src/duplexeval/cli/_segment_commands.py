"""``duplexeval segment``: user rounds of free conversation for MTR-style multi-round scoring."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duplexeval.cli._options import (
    add_judge_endpoint_options,
    number,
    out_file,
    positive_int,
    split_name,
)
from duplexeval.errors import DuplexevalError

__all__ = ["add_segment"]

Subparsers = Any  # argparse's private _SubParsersAction


_temperature = number(float, 0, 2)
"""A judge temperature in [0, 2]."""


def add_segment(sub: Subparsers) -> None:
    """``segment DATASET_DIR|TRANSCRIPT -o OUT.jsonl``."""
    from duplexeval.rounds._propose import PROPOSAL_MAX_TOKENS, PROPOSAL_TEMPERATURE

    p = sub.add_parser(
        "segment", help="split two-channel conversations into user rounds (MTR-style), by "
        "an LLM judge asked k times, or by the annotator without one")
    p.add_argument("input", metavar="DATASET_DIR|TRANSCRIPT",
                   help="a dataset folder (M3 layout) or one alignment file "
                        "(channel<TAB>start<TAB>end<TAB>word)")
    p.add_argument("-o", "--output", type=out_file, required=True, metavar="OUT.jsonl",
                   help="one JSON line per dialogue (written atomically)")
    p.add_argument("--split", type=split_name, default="test",
                   help="the dataset split (default test)")
    p.add_argument("--user-channel", type=int, choices=[0, 1], default=0,
                   help="the user's channel, whose rounds are segmented (default 0 = left, "
                        "as in the MTR README; the other channel is the assistant)")
    p.add_argument("--language", default=None,
                   help="the prompt language (default: the dataset's, else detected)")
    g = p.add_argument_group("judge (without --judge-url: the annotator fallback)")
    add_judge_endpoint_options(g)
    g.add_argument("-k", type=number(int, 1, 100), default=6, help="asks per dialogue (default 6)")
    g.add_argument("--judge-temperature", type=_temperature, default=PROPOSAL_TEMPERATURE,
                   metavar="T",
                   help=f"sampling temperature of the asks (default {PROPOSAL_TEMPERATURE}; "
                        "above 0 so that the k proposals are independent samples)")
    g.add_argument("--judge-max-tokens", type=positive_int, default=PROPOSAL_MAX_TOKENS,
                   metavar="N", help=f"answer length limit (default {PROPOSAL_MAX_TOKENS})")
    p.set_defaults(func=_segment)


def _judged(args: argparse.Namespace, dialogues: list[Any], settings: Any,
            language: str | None) -> list[Any]:
    from duplexeval.judge import AnswerCache, JudgeClient, default_cache_path
    from duplexeval.rounds import segment_with_judge
    from duplexeval.rounds._propose import proposal_sampling

    sampling = proposal_sampling(args.judge_temperature, args.judge_max_tokens)
    client = JudgeClient(args.judge_url, args.judge_model, timeout=args.judge_timeout,
                         sampling=sampling)
    cache_path = Path(args.judge_cache) if args.judge_cache else default_cache_path()
    try:
        with AnswerCache(cache_path) as cache:
            out, outcome = segment_with_judge(dialogues, client, cache, settings,
                                              default_language=language,
                                              max_concurrency=args.judge_concurrency)
    finally:
        client.close()
    print(outcome.meter.summary())
    return out


def _segment(args: argparse.Namespace) -> int:
    from duplexeval._fileio import overwrite_problem
    from duplexeval.rounds import (
        SegmentSettings,
        load_dialogues,
        segment_fallback,
        write_segmentations,
    )
    from duplexeval.rounds._propose import dialogue_language

    if (args.judge_url is None) != (args.judge_model is None):
        raise DuplexevalError("segment: give both --judge-url and --judge-model, or neither "
                              "(the annotator fallback)")
    problem = overwrite_problem(Path(args.output), Path(args.input))
    if problem is not None:
        raise DuplexevalError(problem)
    dialogues, language = load_dialogues(Path(args.input), args.split)
    settings = SegmentSettings(user_channel=args.user_channel, k=args.k,
                               language=args.language)
    if args.judge_url is None:
        out = [segment_fallback(d, settings,
                                language=args.language or dialogue_language(d, language))
               for d in dialogues]
    else:
        out = _judged(args, dialogues, settings, language)
    write_segmentations(Path(args.output), out)
    by_judge = sum(s.method == "judge" for s in out)
    rounds = sum(len(s.rounds) for s in out)
    discarded = sum(s.discarded_proposals for s in out)
    print(f"{len(out)} dialogue(s), {rounds} round(s): {by_judge} segmented by the judge, "
          f"{len(out) - by_judge} by the annotator fallback; {discarded} judge answer(s) "
          f"discarded")
    for s in out:
        if s.fallback_reason:
            print(f"  {s.dialogue_id}: fallback: {s.fallback_reason}")
    print(f"written to {args.output}")
    return 0
