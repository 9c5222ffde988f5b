"""The MT-QA spec steps: ``data rewrite SPECS_DIR -o OUT_DIR --judge-url URL --judge-model
MODEL [--translate ja]`` (spoken style and Japanese through an OpenAI-compatible endpoint,
:mod:`duplexeval.synth._rewrite`) and ``data voices SPECS_DIR --reference DATASET_DIR -o OUT_DIR``
(bundled voices after reference speakers, :mod:`duplexeval.synth._voice_choice`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duplexeval.cli._options import (
    http_url,
    out_folder,
    positive,
    positive_int,
    split_name,
    worker_count,
)
from duplexeval.errors import DuplexevalError

__all__ = ["add_rewrite", "add_voices"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_rewrite(data_sub: Subparsers) -> None:
    """``data rewrite``; the endpoint and the model are required: nothing is sent anywhere
    without them."""
    q = data_sub.add_parser("rewrite", help="dialogue specs (e.g. data import topiocqa's) "
                            "rewritten into spoken style and optionally translated into "
                            "Japanese by an LLM (M3 sec. 3.2.1); cached and recorded")
    q.add_argument("specs", metavar="SPECS_DIR", help="a folder of dialogue spec files (*.json)")
    q.add_argument("-o", "--output", type=out_folder, required=True, metavar="OUT_DIR")
    q.add_argument("--translate", choices=["ja"], default=None,
                   help="also translate the spoken text into this language")
    q.add_argument("--no-spoken", action="store_true",
                   help="translate the texts as they are, without the spoken-style step")
    q.add_argument("--force", action="store_true", help="overwrite specs already in OUT_DIR")
    g = q.add_argument_group("endpoint (any OpenAI-compatible chat-completions server)")
    g.add_argument("--judge-url", type=http_url, required=True, metavar="URL",
                   help="e.g. http://127.0.0.1:8080/v1 (key from DUPLEXEVAL_JUDGE_API_KEY or "
                        "OPENAI_API_KEY)")
    g.add_argument("--judge-model", required=True, metavar="MODEL")
    g.add_argument("--judge-concurrency", type=worker_count, default=4, metavar="N")
    g.add_argument("--judge-timeout", type=positive, default=120.0, metavar="SECONDS")
    g.add_argument("--judge-max-tokens", type=positive_int, default=4096, metavar="N",
                   help="answer length limit (a whole dialogue comes back; default 4096)")
    g.add_argument("--judge-cache", default=None, metavar="FILE",
                   help="the SQLite answer cache (default: the shared one)")
    q.set_defaults(func=_rewrite)


def _rewrite(args: argparse.Namespace) -> int:
    from duplexeval.judge import AnswerCache, JudgeClient, Sampling, default_cache_path
    from duplexeval.synth._rewrite import read_specs, rewrite_specs, write_rewritten

    steps = ([] if args.no_spoken else ["spoken"]) + (["translate"] if args.translate else [])
    if not steps:
        raise DuplexevalError("--no-spoken without --translate leaves nothing to do")
    source, out = Path(args.specs), Path(args.output)
    if out.resolve() == source.resolve():
        raise DuplexevalError(f"{out}: write the rewritten specs to another folder")
    read = read_specs(source)
    clash = [p.name for p, _ in read if (out / p.name).exists()]
    if clash and not args.force:
        raise DuplexevalError(f"{out / clash[0]} exists; pass --force to overwrite")
    client = JudgeClient(args.judge_url, args.judge_model, timeout=args.judge_timeout,
                         sampling=Sampling(temperature=0.0, max_tokens=args.judge_max_tokens))
    cache_path = Path(args.judge_cache) if args.judge_cache else default_cache_path()
    try:
        with AnswerCache(cache_path) as cache:
            outcome = rewrite_specs([s for _, s in read], steps, client, cache,
                                    args.judge_concurrency)
    finally:
        client.close()
    write_rewritten(out, [p.name for p, _ in read], outcome)
    for meter in outcome.meters:
        print(meter.summary())
    counts = outcome.counts()
    print(f"{out}: {len(read)} spec(s); " + "; ".join(
        f"{step}: {c['rewritten']} rewritten, {c['kept']} kept with the text before"
        for step, c in counts.items()) + " (reasons in rewrite.jsonl)")
    return 0


def add_voices(data_sub: Subparsers) -> None:
    """``data voices SPECS_DIR --reference DATASET_DIR -o OUT_DIR [--split S]``."""
    q = data_sub.add_parser("voices", help="give each spec speaker the bundled voice closest "
                            "in median F0 and gender to a reference speaker drawn from a "
                            "dataset (the offline stand-in for M3's voice cloning)")
    q.add_argument("specs", metavar="SPECS_DIR", help="a folder of dialogue spec files (*.json)")
    q.add_argument("--reference", required=True, metavar="DATASET_DIR",
                   help="the reference dialogues (e.g. MagicData for Japanese specs)")
    q.add_argument("--split", type=split_name, default="test",
                   help="the reference split (default: test)")
    q.add_argument("-o", "--output", type=out_folder, required=True, metavar="OUT_DIR")
    q.add_argument("--force", action="store_true", help="overwrite specs already in OUT_DIR")
    q.set_defaults(func=_voices)


def _voices(args: argparse.Namespace) -> int:

    from duplexeval._fileio import atomic_write_json
    from duplexeval.data._validate import Need, load_dataset
    from duplexeval.speech._tts import load_engine
    from duplexeval.synth._build import DEFAULT_ENGINES
    from duplexeval.synth._rewrite import read_specs
    from duplexeval.synth._voice_choice import assign_voices, speaker_profiles, voice_profiles

    source, out = Path(args.specs), Path(args.output)
    if out.resolve() == source.resolve():
        raise DuplexevalError(f"{out}: write the specs to another folder")
    read = read_specs(source)
    languages = sorted({s["language"] for _, s in read})
    if len(languages) != 1 or languages[0] not in DEFAULT_ENGINES:
        raise DuplexevalError(f"{source}: specs in {languages}; give specs of one language "
                              f"with a TTS engine ({', '.join(sorted(DEFAULT_ENGINES))})")
    clash = [p.name for p, _ in read if (out / p.name).exists()]
    if clash and not args.force:
        raise DuplexevalError(f"{out / clash[0]} exists; pass --force to overwrite")
    reference, _ = load_dataset(Path(args.reference), args.split, audio=Need.REQUIRE)
    speakers = speaker_profiles(reference)
    if not speakers:
        raise DuplexevalError(f"{args.reference}: no reference speaker with voiced speech")
    engine_name = DEFAULT_ENGINES[languages[0]]
    voices = voice_profiles(load_engine(engine_name))
    specs, records = assign_voices([s for _, s in read], speakers, voices)
    for (path, _), spec in zip(read, specs, strict=True):
        atomic_write_json(out / path.name, spec)
    atomic_write_json(out / "voices.json", {
        "engine": engine_name, "voices": [v.to_json() for v in voices],
        "reference": str(args.reference), "speakers": [s.to_json() for s in speakers],
        "assignments": records})
    chosen = sorted({r["voice"]["name"] for r in records})
    print(f"{out}: {len(specs)} spec(s); {len(speakers)} reference speaker(s), voices of "
          f"{engine_name} used: {', '.join(chosen)} (details in voices.json)")
    return 0
