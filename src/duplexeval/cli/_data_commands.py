"""Data subcommands: ``validate``, ``annotate``, ``synth`` and the ``data`` group
(``voice-bursts``, ``build``, ``list``, ``download``; ``import``, ``stats``, ``split`` and
``segment`` in :mod:`.import_commands`; ``quality`` in :mod:`.quality_commands`, ``rewrite`` and
``voices`` in :mod:`.rewrite_commands`)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from duplexeval.cli._failures import print_lines
from duplexeval.cli._import_commands import add_import, add_segment, add_split, add_stats
from duplexeval.cli._options import (
    non_negative,
    out_file,
    out_folder,
    positive,
    positive_int,
    random_seed,
    sample_rate,
    split_name,
    warn,
)
from duplexeval.cli._quality_commands import add_quality
from duplexeval.cli._rewrite_commands import add_rewrite, add_voices
from duplexeval.errors import DuplexevalError

__all__ = ["add_annotate", "add_data", "add_download", "add_synth", "add_validate"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_validate(sub: Subparsers) -> None:
    """``validate DATASET_DIR``."""
    p = sub.add_parser("validate", help="check a dataset folder in the M3 layout")
    p.add_argument("dataset", metavar="DATASET_DIR")
    p.add_argument("--split", type=split_name, default="test")
    p.add_argument("--annotations-only", action="store_true",
                   help="audio and alignment files may be absent (present ones are checked)")
    p.set_defaults(func=_validate)


def _validate(args: argparse.Namespace) -> int:
    from duplexeval.data._validate import Need, check_dataset

    need = Need.OPTIONAL if args.annotations_only else Need.REQUIRE
    report = check_dataset(Path(args.dataset), args.split, audio=need, alignment=need)
    print_lines([str(problem) for problem in report.problems])
    warn(report.warnings)
    if report.problems or report.dataset is None:
        if len(report.problems) > 1:  # one problem is its own line: no count under it
            print_lines([f"{args.dataset}: {len(report.problems)} problem(s)"])
        return 2
    dataset = report.dataset
    kinds = Counter(e.kind.value for d in dataset.dialogues for e in d.events)
    words = sum(len(d.words or ()) for d in dataset.dialogues)
    hours = sum(d.duration for d in dataset.dialogues) / 3600
    print(f"{args.dataset} [{args.split}]: ok, {len(dataset)} dialogue(s), {hours:.2f} h, "
          f"{sum(kinds.values())} events ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}"
          f"), {words} words")
    return 0


def add_annotate(sub: Subparsers) -> None:
    """``annotate SOURCE -o OUT.jsonl``."""
    p = sub.add_parser("annotate", help="derive M3 events from word alignments or stereo audio")
    p.add_argument("source", metavar="SOURCE",
                   help="a dataset folder, a folder of txt_align/*.txt or *.wav files, or a file")
    p.add_argument("-o", "--output", type=out_file, required=True, metavar="OUT.jsonl")
    p.add_argument("--from", dest="source_kind", choices=["auto", "words", "audio"],
                   default="auto", help="read word alignments or audio (default: whichever "
                   "is found, alignments first)")
    p.add_argument("--ipu-gap", type=non_negative, default=0.5,
                   help="words merge into one IPU while the silence is at most this (s)")
    p.add_argument("--bc-max", type=non_negative, default=0.8,
                   help="an IPU of at most this duration is a BC (s)")
    p.add_argument("--max-shift-overlap", type=non_negative, default=0.4,
                   help="a speaker change overlapping by more than this is a BARGE_IN (s)")
    p.add_argument("--vad", choices=["energy", "webrtc", "silero"], default="energy",
                   help="voice activity engine for audio sources")
    p.add_argument("--vad-threshold-db", type=positive, default=40.0,
                   help="energy VAD: speech is within this many dB of the loudest frame")
    p.set_defaults(func=_annotate)


def _annotate(args: argparse.Namespace) -> int:
    from duplexeval._fileio import atomic_write_text, json_line, overwrite_problem
    from duplexeval.data._annotate import SourceKind, annotate_source
    from duplexeval.data._m3 import record_json
    from duplexeval.events import AnnotationRules
    from duplexeval.speech._activity import ActivityOptions, VadEngine

    problem = overwrite_problem(Path(args.output), Path(args.source))
    if problem is not None:
        raise DuplexevalError(problem)
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


def add_synth(sub: Subparsers) -> None:
    """``synth SPEC -o DATASET_DIR``."""
    p = sub.add_parser("synth", help="synthesize a dataset (M3 layout) from dialogue specs")
    p.add_argument("spec", metavar="SPEC", help="a spec file (JSON/YAML) or a folder of them")
    p.add_argument("-o", "--output", type=out_folder, required=True, metavar="DATASET_DIR")
    p.add_argument("--split", type=split_name, default="test")
    p.add_argument("--seed", type=random_seed, default=0)
    p.add_argument("--sample-rate", type=sample_rate, default=16000)
    p.add_argument("--timing-reference", choices=["chat", "task"], default="chat",
                   help="packaged turn-shift gap reference (M3 toy chat or QA set)")
    p.add_argument("--timing-from", metavar="DATASET", default=None,
                   help="take the turn-shift gaps from any annotated dataset instead")
    p.add_argument("--no-quality", action="store_true", help="skip the quality report")
    p.add_argument("--no-asr", action="store_true", help="quality report without ASR")
    p.add_argument("--force", action="store_true", help="overwrite an existing dataset")
    p.set_defaults(func=_synth)


def _synth(args: argparse.Namespace) -> int:
    import dataclasses

    from tqdm import tqdm

    from duplexeval.synth._build import SynthSettings, reference_gaps
    from duplexeval.synth._mtr_synthesizer import synthesizer_for
    from duplexeval.synth._spec import load_specs

    specs = load_specs(Path(args.spec))
    out = Path(args.output)
    if (out / f"{args.split}.jsonl").exists() and not args.force:
        raise DuplexevalError(f"{out} already holds a dataset; pass --force to overwrite")
    gaps = _gaps_from(args.timing_from) if args.timing_from else \
        reference_gaps(args.timing_reference)
    settings = dataclasses.replace(SynthSettings(), seed=args.seed, gaps=gaps,
                                   sample_rate=args.sample_rate)
    for spec in specs:  # before any voicing: an unknown language names its spec
        if spec.language not in settings.engines:
            raise DuplexevalError(f"{args.spec}: spec {spec.id!r}: no TTS engine for language "
                                  f"{spec.language!r}; configured: "
                                  f"{', '.join(sorted(settings.engines))}")
    synth = synthesizer_for(specs, settings)
    built = []
    for spec in tqdm(specs, desc="synth", unit="dialogue", file=sys.stderr):
        try:
            built.append(synth.build(spec))
        except DuplexevalError as exc:  # an unknown voice, a text with no word: name the spec
            raise DuplexevalError(f"{args.spec}: spec {spec.id!r}: {exc}") from None
    synth.write(built, out, args.split)
    print(f"{out}: {len(built)} dialogue(s), "
          f"{sum(len(b.audio) for b in built) / settings.sample_rate / 60:.1f} min of audio")
    if not args.no_quality:
        _quality(out, args.split, gaps, asr=not args.no_asr)
    return 0


def _gaps_from(dataset: str) -> tuple[float, ...]:
    from duplexeval.data._validate import load_dataset
    from duplexeval.synth._quality import turn_shift_gaps

    reference, _ = load_dataset(Path(dataset))
    gaps = tuple(turn_shift_gaps(reference))
    if not gaps:
        raise DuplexevalError(f"{dataset}: no TURN_SHIFT events to take gaps from")
    return gaps


def _quality(out: Path, split: str, gaps: tuple[float, ...], asr: bool) -> None:
    from duplexeval._fileio import atomic_write_json
    from duplexeval.data._validate import Need, load_dataset
    from duplexeval.synth._quality import quality_report

    dataset, _ = load_dataset(out, split, audio=Need.REQUIRE)
    report = quality_report(dataset, gaps, asr=asr)
    atomic_write_json(out / "quality.json", report)
    round_trip = report.get("asr")
    if round_trip:
        print(f"  ASR round trip: {round_trip['metric']} {round_trip['value']:.3f} over "
              f"{round_trip['ipus']} IPUs")
    print(f"  turn-shift gaps: KS {report['timing']['ks']} against the reference "
          f"(n = {report['timing']['n']}); report in {out / 'quality.json'}")


def add_data(sub: Subparsers) -> None:
    """The ``data`` group: ``voice-bursts``, ``build``, ``list``, ``download``, ``import``,
    ``stats``, ``split``, ``segment``, ``quality``, ``rewrite``, ``voices``."""
    p = sub.add_parser("data", help="dataset utilities: voice annotations, bundled suites")
    data_sub = p.add_subparsers(dest="data_command", required=True, metavar="DATA_COMMAND")
    q = data_sub.add_parser("voice-bursts", help="stereo audio for an annotated dataset: "
                            "every word span filled with speech from the clip bank")
    q.add_argument("dataset", metavar="ANNOTATED_DIR")
    q.add_argument("-o", "--output", type=out_folder, required=True, metavar="DATASET_DIR")
    q.add_argument("--split", type=split_name, default="test")
    q.add_argument("--sample-rate", type=sample_rate, default=16000)
    q.set_defaults(func=_voice_bursts)
    q = data_sub.add_parser("build", help="build a bundled suite (cached): "
                            "m3-qa-en, m3-qa-ja, m3-chat-en, m3-chat-ja, m3-toy-ja-voiced, all")
    q.add_argument("name", metavar="NAME")
    q.add_argument("--force", action="store_true", help="rebuild even if cached")
    size = q.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="its quick subset (what the demo "
                      "and `eval --quick` run): decoded from the pack that ships with "
                      "duplexeval while it is current")
    size.add_argument("--limit", type=positive_int, default=None, metavar="N",
                      help="its first N dialogues (decoded from the pack where it holds them)")
    q.add_argument("--synthesize", action="store_true",
                   help="with --quick or --limit: synthesize even where a pack ships")
    q.set_defaults(func=_data_build)
    q = data_sub.add_parser("list", help="the bundled suites, built or not, with sizes")
    q.set_defaults(func=_data_list)
    add_download(data_sub)
    add_import(data_sub)
    add_stats(data_sub)
    add_split(data_sub)
    add_segment(data_sub)
    add_quality(data_sub)
    add_rewrite(data_sub)
    add_voices(data_sub)


def add_download(data_sub: Subparsers) -> None:
    """``data download NAME [--revision REV] [--endpoint URL] [--force]``."""
    from duplexeval.data.recipes._download import RELEASES

    names = ", ".join(RELEASES)
    q = data_sub.add_parser("download", help="fetch a peer benchmark's public data from the "
                            f"Hugging Face Hub into the cache and import it ({names}); the only "
                            "command that downloads data",
                            description="Download the pinned release NAME (only the files its "
                            "importer reads) into CACHE/official/hub and import it into "
                            "CACHE/official/NAME (CACHE: $DUPLEXEVAL_CACHE, else "
                            "~/.cache/duplexeval); a second call does nothing. "
                            "Exit 2: unknown NAME, not on the hub, not what the importer reads, "
                            "or HF_HUB_OFFLINE without the dataset; exit 1: the hub cannot be "
                            "reached or fails (try again).")
    q.add_argument("name", metavar="NAME", help=f"the release: {names}")
    q.add_argument("--revision", default=None, help="a commit or tag instead of the pinned one")
    q.add_argument("--endpoint", default=None, metavar="URL",
                   help="the hub (default: $HF_ENDPOINT, else https://huggingface.co)")
    q.add_argument("--force", action="store_true", help="resolve the revision again and "
                   "re-import even when the cache holds the dataset")
    q.set_defaults(func=_data_download)


def _data_download(args: argparse.Namespace) -> int:
    from duplexeval.data.recipes._download import fetch_official

    done = fetch_official(args.name, endpoint=args.endpoint, revision=args.revision,
                          force=args.force)
    where = f"{done.release.repo_id}@{done.revision}" + (
        f" ({done.commit[:12]})" if done.commit and done.commit != done.revision else "")
    state = f"imported: {done.imported}" if done.imported is not None else "already in the cache"
    print(f"{done.release.name}: {done.path} from {where}; {state}")
    return 0


def _voice_bursts(args: argparse.Namespace) -> int:
    from duplexeval.data._validate import Need, load_dataset
    from duplexeval.data._voice_bursts import voice_bursts

    dataset, _ = load_dataset(Path(args.dataset), args.split, alignment=Need.REQUIRE)
    written = voice_bursts(dataset, Path(args.output), args.sample_rate)
    print(f"{args.output}: {len(written)} dialogue(s) voiced at {args.sample_rate} Hz")
    return 0


def _data_build(args: argparse.Namespace) -> int:
    from duplexeval.suites import SUITES, build_suite

    names = SUITES.names() if args.name == "all" else [args.name]
    for name in names:
        limit = "quick" if args.quick else args.limit
        path = build_suite(name, force=args.force, limit=limit, synthesize=args.synthesize)
        print(f"{name}: {path}")
    return 0


def _data_list(args: argparse.Namespace) -> int:
    from duplexeval.report._text import format_table
    from duplexeval.suites import suite_rows

    print("\n".join(format_table(["suite", "lang", "domain", "dialogues", "state", "audio min",
                                  "MB", "path / how to build"], suite_rows())))
    return 0
