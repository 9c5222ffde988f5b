"""``rtcheck --system S``: could the system run live on this hardware
(:mod:`duplexeval.app.rtcheck`)?"""

from __future__ import annotations

import argparse
from typing import Any

from duplexeval.cli._options import (
    dataset_folder,
    out_file,
    positive,
    positive_int,
    split_name,
    system_args,
)
from duplexeval.errors import DuplexevalError

__all__ = ["add_rtcheck"]

Subparsers = Any


def _levels(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or any(not 1 <= v <= 64 for v in values):
        raise argparse.ArgumentTypeError(f"levels must be session counts from 1 to 64 "
                                         f"separated by commas (got {text!r})")
    return values


def add_rtcheck(sub: Subparsers) -> None:
    """``rtcheck --system S [--dataset D]``."""
    p = sub.add_parser("rtcheck", help="could a system run live on this hardware: compute "
                       "per frame (in-process) or concurrent sessions with gates (servers)")
    p.add_argument("--system", required=True, help="a name from `duplexeval systems` or "
                   "module:Class")
    p.add_argument("--system-arg", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--dataset", default=None, metavar="DATASET_DIR|SUITE",
                   help="in-process systems: time over the user channel of this dataset's "
                        "first dialogue (default: 20 s of clip-bank speech and pauses)")
    p.add_argument("--split", type=split_name, default="test")
    p.add_argument("--seconds", type=positive, default=None,
                   help="in-process systems: time at most this much of the input (s)")
    p.add_argument("--rows", type=positive_int, default=8, metavar="N",
                   help="in-process systems with the batch capability: batch rows (default 8; "
                        "1: unbatched only)")
    p.add_argument("--levels", type=_levels, default=(1, 2, 4, 8), metavar="N,N,...",
                   help="servers: concurrent session counts (default 1,2,4,8)")
    p.add_argument("--json", type=out_file, default=None, metavar="FILE",
                   help="also write the figures as strict JSON")
    p.set_defaults(func=_rtcheck)


def _input(args: argparse.Namespace, rate: int) -> Any:
    import soxr

    from duplexeval._audio import read_audio
    from duplexeval.app.rtcheck._stimulus import compute_stream
    from duplexeval.data._validate import Need, load_dataset

    if args.dataset is None:
        x = compute_stream(rate, args.seconds or 20.0)
    else:
        dataset, _ = load_dataset(dataset_folder(args.dataset), args.split, audio=Need.REQUIRE)
        if not dataset.dialogues:
            raise DuplexevalError(f"{dataset.root}: no dialogue in split {args.split!r}")
        first = dataset.dialogues[0]
        assert first.audio is not None  # Need.REQUIRE
        audio, sr = read_audio(first.audio.path)
        channel = dataset.user_channels[0]
        x = audio[:, channel] if audio.ndim == 2 else audio
        if sr != rate:
            x = soxr.resample(x, sr, rate)
        if args.seconds is not None:
            x = x[:round(args.seconds * rate)]
    return x


def _rtcheck(args: argparse.Namespace) -> int:
    from duplexeval._fileio import atomic_write_json
    from duplexeval.app.rtcheck import check_compute, check_sessions
    from duplexeval.app.rtcheck._report import compute_lines, sessions_json, sessions_lines
    from duplexeval.systems._base import ClockKind
    from duplexeval.systems._registry import load_system

    system = load_system(args.system, system_args(args.system_arg))
    if system.capabilities.clock is ClockKind.WALL:
        if args.dataset is not None:
            raise DuplexevalError("rtcheck: --dataset is for in-process systems; a server is "
                                  "driven with the reactive stimulus")
        levels = check_sessions(system, args.levels)
        print("\n".join(sessions_lines(system.name, levels)))
        record = sessions_json(system.name, levels)
        passed = bool(record["passed"])
    else:
        check = check_compute(system, _input(args, system.capabilities.sample_rate), args.rows)
        print("\n".join(compute_lines(check)))
        record = check.to_json()
        passed = check.live
    if args.json is not None:
        atomic_write_json(args.json, record)
    return 0 if passed else 1
