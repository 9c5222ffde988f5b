"""The ``duplexeval`` command and its subcommands.

Errors caused by input (bad files, bad arguments) print one line per problem to stderr and exit
with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import __version__
from .errors import DuplexevalError

__all__ = ["main"]


def _channels(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip() != "")
    except ValueError:
        raise argparse.ArgumentTypeError(f"channels must be like 0,1 (got {text!r})") from None
    if not values or any(v not in (0, 1) for v in values):
        raise argparse.ArgumentTypeError(f"channels must be 0, 1 or 0,1 (got {text!r})")
    return tuple(dict.fromkeys(values))


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def _warn(lines: Sequence[str]) -> None:
    for line in lines:
        print(f"warning: {line}", file=sys.stderr)


# ---------------------------------------------------------------- validate
def _cmd_validate(args: argparse.Namespace) -> int:
    from .data.validate import Need, check_dataset

    need = Need.OPTIONAL if args.annotations_only else Need.REQUIRE
    report = check_dataset(Path(args.dataset), args.split, audio=need, alignment=need)
    for problem in report.problems:
        print(problem, file=sys.stderr)
    _warn(report.warnings)
    if report.problems or report.dataset is None:
        print(f"{args.dataset}: {len(report.problems)} problem(s)", file=sys.stderr)
        return 2
    dataset = report.dataset
    kinds = Counter(e.kind.value for d in dataset.dialogues for e in d.events)
    words = sum(len(d.words or ()) for d in dataset.dialogues)
    hours = sum(d.duration for d in dataset.dialogues) / 3600
    print(f"{args.dataset} [{args.split}]: ok, {len(dataset)} dialogue(s), {hours:.2f} h, "
          f"{sum(kinds.values())} events ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}"
          f"), {words} words")
    return 0


# ---------------------------------------------------------------- annotate
def _cmd_annotate(args: argparse.Namespace) -> int:
    from .data.annotate import SourceKind, annotate_source
    from .data.m3 import record_json
    from .events import AnnotationRules
    from .fileio import atomic_write_text, json_line
    from .speech.activity import ActivityOptions, VadEngine

    rules = AnnotationRules(args.ipu_gap, args.bc_max, args.max_shift_overlap)
    activity = ActivityOptions(engine=VadEngine(args.vad), threshold_db=args.vad_threshold_db)
    kind, dialogues = annotate_source(Path(args.source), SourceKind(args.source_kind), rules,
                                      activity)
    out = Path(args.output)
    atomic_write_text(out, "".join(json_line(record_json(d)) for d in dialogues))
    kinds = Counter(e.kind.value for d in dialogues for e in d.events)
    print(f"{out}: {len(dialogues)} dialogue(s) annotated from {kind.value}; "
          + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    return 0


# ---------------------------------------------------------------- plan
def _cmd_plan(args: argparse.Namespace) -> int:
    from .data.validate import load_dataset
    from .protocols import PlanOptions, Protocol, build_plan

    dataset, warnings = load_dataset(Path(args.dataset), args.split)
    _warn(warnings)
    options = PlanOptions(
        protocol=Protocol(args.protocol),
        channels=args.channels,
        window=args.window,
        context_max_len=args.context_max_len,
        include_short_pause=args.include_short_pause,
    )
    plan = build_plan(dataset.dialogues, options)
    if args.json:
        for sample in plan.samples:
            print(json.dumps(sample.to_json(), ensure_ascii=False))
    if args.summary_json:
        print(json.dumps(plan.summary_json(), ensure_ascii=False))
    if not (args.json or args.summary_json):
        from .report.text import plan_summary_lines

        print("\n".join(plan_summary_lines(dataset.name or str(args.dataset), plan)))
    return 0


# ---------------------------------------------------------------- systems / run
def _cmd_systems(args: argparse.Namespace) -> int:
    from .report.text import format_table
    from .systems.registry import available_systems, load_system

    rows = []
    for info in available_systems().values():
        try:
            system = load_system(info.name)
        except DuplexevalError as exc:
            rows.append([info.name, info.origin, "-", f"cannot load: {exc}"])
            continue
        caps = system.capabilities
        tf = "+".join(k for k, v in (("audio", caps.teacher_forcing_audio),
                                     ("text", caps.teacher_forcing_text)) if v) or "no"
        rows.append([info.name, info.origin, system.version,
                     f"{caps.sample_rate} Hz, {caps.frame_size}-sample frames, clock "
                     f"{caps.clock.value}, snapshot {'yes' if caps.snapshot else 'no'}, "
                     f"teacher forcing {tf}"])
    print("\n".join(format_table(["system", "from", "version", "capabilities"], rows)))
    return 0


def _system_args(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise DuplexevalError(f"--system-arg {pair!r}: expected KEY=VALUE")
        out[key] = value
    return out


def _cmd_run(args: argparse.Namespace) -> int:
    from .data.validate import Need, load_dataset
    from .protocols import PlanOptions, Protocol, build_plan
    from .runs import execute_run, summary_lines
    from .systems.registry import load_system

    system = load_system(args.system, _system_args(args.system_arg))
    dataset, warnings = load_dataset(Path(args.dataset), args.split, audio=Need.REQUIRE)
    _warn(warnings)
    options = PlanOptions(protocol=Protocol(args.protocol), channels=args.channels,
                          window=args.window, context_max_len=args.context_max_len,
                          include_short_pause=args.include_short_pause)
    plan = build_plan(dataset.dialogues, options)
    out = Path(args.out) if args.out else Path("runs") / f"{system.name}-{options.protocol}"
    result = execute_run(system, dataset, plan, out, seed=args.seed, fail_fast=args.fail_fast)
    print("\n".join(summary_lines(result, system, plan)))
    return 1 if result.failed else 0


def _cmd_voice_bursts(args: argparse.Namespace) -> int:
    from .data.validate import Need, load_dataset
    from .data.voice_bursts import voice_bursts

    dataset, _ = load_dataset(Path(args.dataset), args.split, alignment=Need.REQUIRE)
    written = voice_bursts(dataset, Path(args.output), args.sample_rate)
    print(f"{args.output}: {len(written)} dialogue(s) voiced at {args.sample_rate} Hz")
    return 0


# ---------------------------------------------------------------- synthesis and suites
def _cmd_synth(args: argparse.Namespace) -> int:
    import dataclasses

    from .synth.build import Synthesizer, SynthSettings, reference_gaps
    from .synth.quality import quality_report
    from .synth.spec import load_specs

    specs = load_specs(Path(args.spec))
    out = Path(args.output)
    if (out / f"{args.split}.jsonl").exists() and not args.force:
        raise DuplexevalError(f"{out} already holds a dataset; pass --force to overwrite")
    if args.timing_from:
        from .data.validate import load_dataset
        from .synth.quality import turn_shift_gaps

        reference, _ = load_dataset(Path(args.timing_from))
        gaps = tuple(turn_shift_gaps(reference))
        if not gaps:
            raise DuplexevalError(f"{args.timing_from}: no TURN_SHIFT events to take gaps from")
    else:
        gaps = reference_gaps(args.timing_reference)
    settings = dataclasses.replace(SynthSettings(), seed=args.seed, gaps=gaps,
                                   sample_rate=args.sample_rate)
    synth = Synthesizer(settings)
    from tqdm import tqdm

    built = [synth.build(s) for s in tqdm(specs, desc="synth", unit="dialogue",
                                           file=sys.stderr)]
    synth.write(built, out, args.split)
    print(f"{out}: {len(built)} dialogue(s), "
          f"{sum(len(b.audio) for b in built) / settings.sample_rate / 60:.1f} min of audio")
    if not args.no_quality:
        from .data.validate import Need, load_dataset
        from .fileio import atomic_write_json

        dataset, _ = load_dataset(out, args.split, audio=Need.REQUIRE)
        report = quality_report(dataset, gaps, asr=not args.no_asr)
        atomic_write_json(out / "quality.json", report)
        asr = report.get("asr")
        if asr:
            print(f"  ASR round trip: {asr['metric']} {asr['value']:.3f} over {asr['ipus']} IPUs")
        print(f"  turn-shift gaps: KS {report['timing']['ks']} against the reference "
              f"(n = {report['timing']['n']}); report in {out / 'quality.json'}")
    return 0


def _cmd_data_build(args: argparse.Namespace) -> int:
    from .suites import SUITES, build_suite

    names = list(SUITES) if args.name == "all" else [args.name]
    for name in names:
        path = build_suite(name, force=args.force)
        print(f"{name}: {path}")
    return 0


def _cmd_data_list(args: argparse.Namespace) -> int:
    from .report.text import format_table
    from .suites import suite_rows

    print("\n".join(format_table(["suite", "lang", "domain", "dialogues", "state", "audio min",
                                  "MB", "path / how to build"], suite_rows())))
    return 0


# ---------------------------------------------------------------- analysis and scores
def _analysis_options(args: argparse.Namespace) -> Any:
    from .analysis.pipeline import AnalysisOptions
    from .speech.activity import ActivityOptions, VadEngine

    vad = ActivityOptions(engine=VadEngine(args.vad))
    if args.vad_threshold is not None:
        vad = replace(vad, silero_threshold=args.vad_threshold)
    return AnalysisOptions(vad=vad, asr=args.asr, language=args.language)


def _add_analysis_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vad", choices=["silero", "energy", "webrtc"], default="silero",
                   help="voice activity engine (default silero, energy-refined)")
    p.add_argument("--vad-threshold", type=float, default=None,
                   help="silero speech probability threshold (default 0.5)")
    p.add_argument("--asr", default="base-packaged",
                   help="faster-whisper model name or path; base-packaged (offline default) "
                        "or none (voice activity only)")
    p.add_argument("--language", default=None, help="ASR language (default: the dataset's)")


def _cmd_analyze(args: argparse.Namespace) -> int:
    from .analysis.pipeline import analyze_run

    folder = analyze_run(Path(args.run_dir), _analysis_options(args), truth=args.truth)
    print(f"analysis written to {folder}")
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    from .metrics.score_run import score_official, score_run_dir
    from .report.text import timing_table_lines

    path = Path(args.path)
    if args.m3:
        if args.output is None:
            raise DuplexevalError("score --m3 needs -o OUT_DIR")
        out = Path(args.output)
        results = score_official(path, out, args.variant, args.language or "",
                                 args.domain or "", args.transcript_key)
    else:
        explicit = any(getattr(args, k) != v for k, v in
                       (("vad", "silero"), ("vad_threshold", None),
                        ("asr", "base-packaged"), ("language", None)))
        results, out = score_run_dir(path, Path(args.output) if args.output else None,
                                     args.variant, _analysis_options(args) if explicit else None,
                                     truth=args.truth)
    label = path.name or str(path)
    print("\n".join(timing_table_lines([(label, results)])))
    print(f"\n{len(results.events)} event(s) scored ({results.variant.name} "
          f"v{results.variant.version}); per_event.jsonl, aggregate.json and results.json "
          f"in {out}")
    return 0


# ---------------------------------------------------------------- demo
def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo([Path(p) for p in args.data], full=args.full,
                    limit=1 if args.quick else None)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``duplexeval`` command."""
    parser = argparse.ArgumentParser(
        prog="duplexeval",
        description="Benchmark full-duplex spoken dialogue systems (M3-DuplexBench, "
                    "MTR-DuplexBench, FLEXI).",
    )
    parser.add_argument("--version", action="version", version=f"duplexeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("validate", help="check a dataset folder in the M3 layout")
    p.add_argument("dataset", metavar="DATASET_DIR")
    p.add_argument("--split", default="test")
    p.add_argument("--annotations-only", action="store_true",
                   help="audio and alignment files may be absent (present ones are checked)")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("annotate", help="derive M3 events from word alignments or stereo audio")
    p.add_argument("source", metavar="SOURCE",
                   help="a dataset folder, a folder of txt_align/*.txt or *.wav files, or a file")
    p.add_argument("-o", "--output", required=True, metavar="OUT.jsonl")
    p.add_argument("--from", dest="source_kind", choices=["auto", "words", "audio"],
                   default="auto", help="read word alignments or audio (default: whichever "
                   "is found, alignments first)")
    p.add_argument("--ipu-gap", type=_non_negative, default=0.5,
                   help="words merge into one IPU while the silence is at most this (s)")
    p.add_argument("--bc-max", type=_non_negative, default=0.8,
                   help="an IPU of at most this duration is a BC (s)")
    p.add_argument("--max-shift-overlap", type=_non_negative, default=0.4,
                   help="a speaker change overlapping by more than this is a BARGE_IN (s)")
    p.add_argument("--vad", choices=["energy", "webrtc", "silero"], default="energy",
                   help="voice activity engine for audio sources")
    p.add_argument("--vad-threshold-db", type=_positive, default=40.0,
                   help="energy VAD: speech is within this many dB of the loudest frame")
    p.set_defaults(func=_cmd_annotate)

    p = sub.add_parser("plan", help="list the evaluation samples a run will execute")
    p.add_argument("dataset", metavar="DATASET_DIR")
    p.add_argument("--split", default="test")
    p.add_argument("--protocol", required=True, choices=["single", "multi-gen", "multi-ref"])
    p.add_argument("--channels", type=_channels, default=(0, 1),
                   help="user channels to evaluate, e.g. 0,1 (chat) or 1 (QA)")
    p.add_argument("--window", type=_positive, default=10.0,
                   help="evaluation window after the event (s)")
    p.add_argument("--context-max-len", type=_positive, default=None,
                   help="longest context (s); default: from the dialogue start")
    p.add_argument("--include-short-pause", action="store_true",
                   help="also evaluate SHORTPAUSE events (the official pipeline ignores them)")
    p.add_argument("--json", action="store_true", help="one JSON object per sample")
    p.add_argument("--summary-json", action="store_true", help="one JSON summary object")
    p.set_defaults(func=_cmd_plan)

    p = sub.add_parser("systems", help="list the systems that can be run")
    p.set_defaults(func=_cmd_systems)

    p = sub.add_parser("run", help="run a system on a dataset under one protocol")
    p.add_argument("--system", required=True, help="a name from `duplexeval systems` or "
                   "module:Class")
    p.add_argument("--system-arg", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--dataset", required=True, metavar="DATASET_DIR")
    p.add_argument("--split", default="test")
    p.add_argument("--protocol", required=True, choices=["single", "multi-gen", "multi-ref"])
    p.add_argument("--channels", type=_channels, default=(0, 1))
    p.add_argument("--window", type=_positive, default=10.0)
    p.add_argument("--context-max-len", type=_positive, default=None)
    p.add_argument("--include-short-pause", action="store_true")
    p.add_argument("--out", default=None, help="run directory (default runs/SYSTEM-PROTOCOL)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed sample")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("data", help="dataset utilities")
    data_sub = p.add_subparsers(dest="data_command", required=True, metavar="DATA_COMMAND")
    q = data_sub.add_parser("voice-bursts", help="stereo audio for an annotated dataset: "
                            "every word span filled with speech from the clip bank")
    q.add_argument("dataset", metavar="ANNOTATED_DIR")
    q.add_argument("-o", "--output", required=True, metavar="DATASET_DIR")
    q.add_argument("--split", default="test")
    q.add_argument("--sample-rate", type=int, default=16000)
    q.set_defaults(func=_cmd_voice_bursts)

    p = sub.add_parser("analyze", help="voice activity and ASR on every sample of a run")
    p.add_argument("run_dir", metavar="RUN_DIR")
    _add_analysis_args(p)
    p.add_argument("--truth", action="store_true", help="segments from the speech intervals "
                   "the system logged (scripted), into RUN_DIR/analysis-truth")
    p.set_defaults(func=_cmd_analyze)

    p = sub.add_parser("score", help="timing metrics of a run directory (or, with --m3, of an "
                       "official M3-DuplexBench output folder)")
    p.add_argument("path", metavar="RUN_DIR|DIR")
    p.add_argument("--m3", action="store_true", help="PATH is an official M3 output folder")
    p.add_argument("-o", "--output", default=None, metavar="OUT_DIR",
                   help="where to write (default RUN_DIR/scores; required with --m3)")
    p.add_argument("--variant", default="m3", help="timing metric variant (default m3)")
    p.add_argument("--domain", default=None, help="with --m3: the domain, for breakdowns")
    p.add_argument("--transcript-key", default="output_asr_path",
                   help="with --m3: the metadata field holding the transcript path")
    p.add_argument("--truth", action="store_true", help="score the logged-truth analysis")
    _add_analysis_args(p)
    p.set_defaults(func=_cmd_score)

    q = data_sub.add_parser("build", help="build a bundled suite (cached): "
                            "m3-qa-en, m3-qa-ja, m3-chat-en, m3-chat-ja, m3-toy-ja-voiced, all")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--force", action="store_true", help="rebuild even if cached")
    q.set_defaults(func=_cmd_data_build)
    q = data_sub.add_parser("list", help="the bundled suites, built or not, with sizes")
    q.set_defaults(func=_cmd_data_list)

    p = sub.add_parser("synth", help="synthesize a dataset (M3 layout) from dialogue specs")
    p.add_argument("spec", metavar="SPEC", help="a spec file (JSON/YAML) or a folder of them")
    p.add_argument("-o", "--output", required=True, metavar="DATASET_DIR")
    p.add_argument("--split", default="test")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--timing-reference", choices=["chat", "task"], default="chat",
                   help="packaged turn-shift gap reference (M3 toy chat or QA set)")
    p.add_argument("--timing-from", metavar="DATASET", default=None,
                   help="take the turn-shift gaps from any annotated dataset instead")
    p.add_argument("--no-quality", action="store_true", help="skip the quality report")
    p.add_argument("--no-asr", action="store_true", help="quality report without ASR")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    p.set_defaults(func=_cmd_synth)

    p = sub.add_parser("demo", help="the main job on the bundled data")
    p.add_argument("--data", action="append", default=[], metavar="DATASET_DIR",
                   help="extra dataset folders to include (repeatable)")
    p.add_argument("--full", action="store_true",
                   help="the whole suites instead of their quick subsets")
    p.add_argument("--quick", action="store_true",
                   help="one dialogue per suite: a smoke run in a minute or two")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``duplexeval`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
    except DuplexevalError as exc:
        for line in exc.lines():
            print(f"duplexeval: {line}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("duplexeval: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
