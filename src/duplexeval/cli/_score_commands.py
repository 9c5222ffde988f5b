"""Analysis and scoring subcommands: ``analyze``, ``score`` and ``demo``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duplexeval.cli._options import (
    add_analysis_options,
    add_executor_options,
    add_judge_endpoint_options,
    analysis_options,
    executor_from,
    out_folder,
    positive,
    variant_name,
    worker_count,
)
from duplexeval.errors import DuplexevalError

__all__ = ["add_analyze", "add_demo", "add_score"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_analyze(sub: Subparsers) -> None:
    """``analyze RUN_DIR``."""
    p = sub.add_parser("analyze", help="voice activity and ASR on every sample of a run")
    p.add_argument("run_dir", metavar="RUN_DIR")
    add_analysis_options(p)
    p.add_argument("--truth", action="store_true", help="segments from the speech intervals "
                   "the system logged (scripted), into the run's truth analysis folder")
    add_executor_options(p, units=False)
    p.set_defaults(func=_analyze)


def _analyze(args: argparse.Namespace) -> int:
    from duplexeval.analysis._pipeline import AnalysisOptions, analyze_run

    options = analysis_options(args) or AnalysisOptions()
    refuse_unlisted_samples(Path(args.run_dir))
    with executor_from(args) as executor:
        folder = analyze_run(Path(args.run_dir), options, truth=args.truth, executor=executor)
    print(f"analysis written to {folder}")
    return 0


def refuse_unlisted_samples(run_dir: Path) -> None:
    """Refuse a run whose ``metadata.jsonl`` lists no sample while ``samples/`` holds output
    audio (an emptied or cut file): analysed and scored, it gave 0 events with exit 0.  A run
    whose every sample failed lists none and has no output audio: it goes on as before."""
    from duplexeval.runs._directory import RunDir

    run = RunDir(run_dir)
    if not run.metadata_path.is_file() or run.read_metadata():
        return
    outputs = run.output_wavs()
    if outputs:
        raise DuplexevalError(f"{run.metadata_path}: lists no sample, but {run.samples_dir} "
                              f"holds {len(outputs)} sample output(s); `duplexeval run` with "
                              "the run's options writes the list again")


def add_score(sub: Subparsers) -> None:
    """``score RUN_DIR`` or ``score --m3 DIR -o OUT``."""
    p = sub.add_parser("score", help="timing metrics of a run directory (or, with --m3, of an "
                       "official M3-DuplexBench output folder)")
    p.add_argument("path", metavar="RUN_DIR|DIR")
    p.add_argument("--m3", action="store_true", help="PATH is an official M3 output folder")
    p.add_argument("-o", "--output", type=out_folder, default=None, metavar="OUT_DIR",
                   help="where to write (default RUN_DIR/scores; required with --m3)")
    p.add_argument("--variant", type=variant_name, default="m3",
                   help="timing metric variant: m3 (default), "
                   "fdb-v1, mtr, flexi, turnbench, realism (the system's timing distributions "
                   "against the reference channel's)")
    p.add_argument("--compat", action="store_true", help="with --variant flexi: the released "
                   "code's conventions instead of the paper's")
    p.add_argument("--domain", default=None, help="with --m3: the domain, for breakdowns")
    p.add_argument("--transcript-key", default="output_asr_path",
                   help="with --m3: the metadata field holding the transcript path")
    p.add_argument("--truth", action="store_true", help="score the logged-truth analysis")
    _add_content_options(p)
    _add_peer_options(p)
    add_analysis_options(p)
    add_executor_options(p, units=False)
    p.set_defaults(func=_score)


def _add_content_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("content (offline metrics always; LLM judges with --judge-url)")
    add_judge_endpoint_options(g)
    g.add_argument("--judge-batch-api", action="store_true",
                   help="send the uncached requests as one OpenAI Batch API job and wait for it "
                        "(a killed wait resumes the same job)")
    g.add_argument("--judge-batch-poll", type=positive, default=30.0, metavar="SECONDS",
                   help="with --judge-batch-api: seconds between status checks (default 30)")
    g.add_argument("--content-mode", choices=["default", "official"], default="default",
                   help="whose content inputs: ours (whole QA reference turn, response inside "
                        "the event window) or the released M3 code's")
    g.add_argument("--rounds", default=None, metavar="FILE",
                   help="a `duplexeval segment` output numbering each event's user round (for "
                        "the round-by-round curves; default: the annotator's rounds)")
    g.add_argument("--history", choices=["reference", "generated"], default="reference",
                   help="consistency context: the reference (the paper's) or what the run's "
                        "context audio says (the system's own earlier words under multi-gen)")


def _variant_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Settings of the chosen timing variant from the options that apply to it."""
    if args.variant == "flexi":
        return {"compat": args.compat, "latency": args.latency}
    if args.variant == "fdb-v1":
        return {"compat": not args.paper}
    if args.variant == "m3" and args.paper:
        return {"paper": True}
    if args.compat:
        raise DuplexevalError(f"--compat applies to --variant flexi, not {args.variant}")
    return {}


def _judge_settings(args: argparse.Namespace, workers: Any = None) -> Any:
    """The judge the options name; ``workers``: the executor its calls are spread over."""
    from duplexeval.metrics.content._score import JudgeSettings

    if (args.judge_url is None) != (args.judge_model is None):
        raise DuplexevalError("--judge-url and --judge-model go together")
    if args.judge_url is None:
        if args.judge_batch_api:
            raise DuplexevalError("--judge-batch-api needs --judge-url and --judge-model")
        return None
    prefetch = None
    if args.judge_batch_api:
        from functools import partial

        from duplexeval.judge._batch_api import BatchApiOptions, prefetch_with_batch_api

        prefetch = partial(prefetch_with_batch_api,
                           options=BatchApiOptions(poll_seconds=args.judge_batch_poll))
    return JudgeSettings(base_url=args.judge_url, model=args.judge_model,
                         concurrency=args.judge_concurrency, timeout=args.judge_timeout,
                         cache_path=Path(args.judge_cache) if args.judge_cache else None,
                         prefetch=prefetch, workers=workers)


def _add_peer_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("peer benchmarks (re-score a peer's own output folders)")
    g.add_argument("--peer", default=None, metavar="NAME",
                   help="PATH is a peer benchmark's output root (e.g. flexi, fdb-v1); needs "
                        "--task and -o")
    g.add_argument("--task", default=None, help="with --peer: the peer's task name")
    g.add_argument("--paper", action="store_true",
                   help="with --peer, or --variant fdb-v1 or m3: the paper's definitions "
                        "instead of the released code's (m3: stop latency only when speaking "
                        "at the onset; with --peer each difference is reported)")
    g.add_argument("--latency", type=positive, default=None, metavar="SECONDS",
                   help="with --peer flexi or --variant flexi: the pause-handling latency "
                        "allowance")
    g.add_argument("--reference-distribution", default=None, metavar="FILE",
                   help="with --peer: per-item reference backchannel distributions (JSON)")


def _score_peer(args: argparse.Namespace) -> int:
    from duplexeval.peers._registry import PeerOptions, check_task, get_peer

    scorer = get_peer(args.peer)
    if args.task is None or args.output is None:
        raise DuplexevalError(f"score --peer {args.peer} needs --task TASK and -o OUT_DIR")
    check_task(scorer, args.task)
    ref = Path(args.reference_distribution) if args.reference_distribution else None
    if ref is not None and not ref.is_file():
        raise DuplexevalError(f"{ref}: --reference-distribution file not found")
    options = PeerOptions(compat=not args.paper, latency=args.latency,
                          reference_distribution=ref, judge=_judge_settings(args))
    aggregate = scorer.score(args.task, Path(args.path), Path(args.output), options)
    for name, value in aggregate.items():
        print(f"{name}: {value}")
    print(f"per-sample values and the aggregate written to {args.output}")
    return 0


def _score(args: argparse.Namespace) -> int:
    from duplexeval.metrics._score_run import score_run_dir
    from duplexeval.report._text import (
        FLEXI_COLUMNS,
        counterfactual_table_lines,
        distribution_table_lines,
        stability_lines,
        timing_table_lines,
        variant_curve_lines,
        variant_table_lines,
    )
    from duplexeval.runs._directory import ScoreFiles

    if args.peer is not None:
        return _score_peer(args)
    if args.reference_distribution is not None:  # it was ignored without a word
        raise DuplexevalError("--reference-distribution applies only with --peer")
    path = Path(args.path)
    if args.m3:  # the peer m3, with the timing tables printed as for a run
        if args.output is None:
            raise DuplexevalError("score --m3 needs -o OUT_DIR")
        out = Path(args.output)
        results = _score_official(args, path, out)
    else:
        from duplexeval.metrics.content._inputs import ContentMode, ContentOptions, HistorySource

        content = ContentOptions(ContentMode(args.content_mode), HistorySource(args.history))
        if args.judge_batch_api and args.executor == "dask":
            raise DuplexevalError("--judge-batch-api sends the calls as one remote job; it "
                                  "does not go with --executor dask")
        refuse_unlisted_samples(path)
        with executor_from(args) as executor:
            results, out = score_run_dir(
                path, Path(args.output) if args.output else None, args.variant,
                analysis_options(args), truth=args.truth, content=content,
                judge=_judge_settings(args, executor),
                rounds=Path(args.rounds) if args.rounds else None,
                variant_settings=_variant_settings(args), executor=executor)
    label = path.name or str(path)
    if results.variant.name == "m3":
        print("\n".join(timing_table_lines([(label, results)])))
    elif results.variant.name == "flexi":
        print("\n".join(timing_table_lines([(label, results)], columns=FLEXI_COLUMNS)))
    else:
        print("\n".join(variant_table_lines(results) + variant_curve_lines(results)))
        if results.distributions is not None:
            print("\n" + "\n".join(distribution_table_lines(results.distributions)))
    if results.counterfactual:
        print("\n" + "\n".join(counterfactual_table_lines(results.counterfactual)))
    if results.stability is not None:
        print("\n" + "\n".join(stability_lines(results)))
    _print_content(label, results)
    files = ScoreFiles(out)
    print(f"\n{len(results.events)} event(s) scored ({results.variant.name} "
          f"v{results.variant.version}); {files.per_event.name}, {files.aggregate.name} and "
          f"{files.results.name} in {out}")
    return 0


def _score_official(args: argparse.Namespace, path: Path, out: Path) -> Any:
    """``score --m3``: the ``m3`` peer on an official output folder, and its results."""
    from duplexeval.peers._registry import PeerOptions, get_peer
    from duplexeval.results import load

    options = PeerOptions(variant=args.variant, language=args.language or "",
                          domain=args.domain or "", transcript_key=args.transcript_key)
    get_peer("m3").score("all", path, out, options)
    return load(out)


def _print_content(label: str, results: Any) -> None:
    from duplexeval.report._content import content_curve_lines, content_table_lines

    lines = content_table_lines([(label, results)])
    if lines:
        print("\ncontent (TURN_SHIFT events):")
        print("\n".join(lines + content_curve_lines(label, results)))
    usage = results.content.usage if results.content is not None else None
    if usage:
        print(usage["summary"])


def add_demo(sub: Subparsers) -> None:
    """``demo [--full | --quick]``."""
    p = sub.add_parser("demo", help="the main job on the bundled data")
    p.add_argument("--data", action="append", default=[], metavar="DATASET_DIR",
                   help="extra dataset folders to include (repeatable)")
    p.add_argument("--full", action="store_true",
                   help="the whole suites instead of their quick subsets")
    p.add_argument("--quick", action="store_true",
                   help="one dialogue per suite: a smoke run in a minute or two")
    p.add_argument("--variants", action="store_true",
                   help="also the cascade variants on English chat (end of turn after 0.2 s, "
                        "half-duplex)")
    p.add_argument("--no-flexi", action="store_true",
                   help="leave out the FLEXI stage (flexi-en under multi-gen and multi-ref)")
    p.add_argument("--jobs", type=worker_count, default=None, metavar="N",
                   help="worker processes the runs are spread over (default: one per CPU; "
                        "1: in this process); the outputs are the same")
    p.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    from duplexeval.app._demo import run_demo

    return run_demo([Path(p) for p in args.data], full=args.full,
                    limit=1 if args.quick else None, flexi=not args.no_flexi,
                    variants=args.variants, jobs=args.jobs)
