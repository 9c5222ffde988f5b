"""``duplexeval replay RUN``: interactive runs reproduced from their decision logs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_replay"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_replay(sub: Subparsers) -> None:
    """``replay RUN --dataset D``."""
    from duplexeval.cli._options import split_name

    p = sub.add_parser("replay", help="replay an interactive run's decision logs on the "
                       "system they name and say where the system's output diverges (exit 1)")
    p.add_argument("run", metavar="RUN", help="run directory with an interactive/ folder")
    p.add_argument("--dataset", required=True, help="the dataset the run was made on")
    p.add_argument("--split", type=split_name, default="test")
    p.set_defaults(func=_replay)


def _replay(args: argparse.Namespace) -> int:
    from duplexeval.cli._options import dataset_folder
    from duplexeval.data._validate import load_dataset
    from duplexeval.errors import DuplexevalError
    from duplexeval.runs._interactive import (
        INTERACTIVE_DIR,
        output_digest,
        read_log,
        replay_log,
    )
    from duplexeval.runs._units import conditioned_audio, load_dialogue_audio
    from duplexeval.systems._registry import load_system

    logs = sorted((Path(args.run) / INTERACTIVE_DIR).glob("*.decisions.jsonl"))
    if not logs:
        raise DuplexevalError(f"{args.run}: no {INTERACTIVE_DIR}/*.decisions.jsonl (not an "
                              "interactive run)")
    parsed = [(path, read_log(path)) for path in logs]  # every log checked before any replay
    dataset, _ = load_dataset(dataset_folder(args.dataset), args.split)
    diverged = 0
    for path, log in parsed:
        head = log[0]
        try:
            dialogue = dataset.get(str(head["dialogue"]))
        except KeyError:
            raise DuplexevalError(f"{path}:1: dialogue {head['dialogue']!r} is not in "
                                  f"{args.dataset}") from None
        system = load_system(str(head["system"]), dict(head["system_args"]))
        conditions = _conditions(path, head)
        audio = conditioned_audio(load_dialogue_audio(dialogue), dialogue,
                                  {int(head["user_channel"])}, conditions, int(head["seed"]))
        out, frame = replay_log(system, dialogue, audio, log, conditions)
        recorded = head.get("system_sha256")
        if frame is None and recorded is not None and output_digest([out]) != recorded:
            diverged += 1
            print(f"{path.name}: every decision reproduced ({head['frames']} frames), but the "
                  "system output is not bit-identical to the run's (system_sha256 differs)")
        elif frame is None:
            same = "" if recorded is None else ", system output bit-identical"
            print(f"{path.name}: reproduced ({head['frames']} frames{same})")
        else:
            diverged += 1
            seconds = frame * int(head["frame_size"]) / int(head["sample_rate"])
            print(f"{path.name}: diverges at frame {frame} ({seconds:.3f} s)")
    return 1 if diverged else 0


def _conditions(path: Path, head: dict[str, Any]) -> tuple[Any, ...]:
    """The acoustic conditions a log's header names (none: ``()``), parsed again by the
    condition registry; a header naming one it refuses is one line naming the log."""
    from duplexeval.conditions import parse_condition
    from duplexeval.errors import DuplexevalError

    found = []
    for c in head.get("conditions", []):
        try:
            spec = str(c["kind"]) + ":" + ",".join(
                f"{k}={v}" for k, v in c.items() if k != "kind")
            found.append(parse_condition(spec))
        except (DuplexevalError, KeyError, TypeError, AttributeError) as exc:
            raise DuplexevalError(f"{path}:1: condition {c!r} not understood ({exc})") \
                from None
    return tuple(found)
