"""``data import flexi`` and ``data import fdb-v1``: the peer benchmarks' released data, by
their importers (:mod:`duplexeval.data.recipes._flexi`, :mod:`duplexeval.data.recipes._fdb`).

Both write into ``DATASET_DIR`` themselves (``staged=False``) and refuse an existing split
unless ``--force``; their conventions (the user on channel 0, the peer's event kept in the
record) are in those modules' docstrings.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from duplexeval.data.recipes._registry import Recipe
from duplexeval.errors import DuplexevalError

__all__ = ["FDB_V1", "FLEXI"]


def _flexi_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scenario", default=None, help="the scenario of SOURCE when its folder "
                   "name does not say (turn_taking, pause_handling, user_interrupt, "
                   "model_interrupt, user_backchannel, model_backchannel)")


def _flexi(args: argparse.Namespace, out: Path) -> str:
    from duplexeval.data.recipes._flexi import import_flexi, summary

    dialogues = import_flexi(Path(args.source), out, args.split, args.scenario, args.force)
    return f"{out}: {summary(dialogues)}"


def _fdb(args: argparse.Namespace, out: Path) -> str:
    from duplexeval.data.recipes._fdb import import_fdb

    if (out / f"{args.split}.jsonl").exists() and not args.force:
        raise DuplexevalError(f"{out}: split {args.split!r} exists (use --force to overwrite)")
    dialogues = import_fdb(Path(args.source), out, args.split)
    tasks = Counter(str(d.extra.get("fdb_task")) for d in dialogues)
    unplaced = sum(d.extra.get("fdb_event") is not None and d.extra.get("fdb_event_as") is None
                   for d in dialogues)
    return (f"{out} [{args.split}]: {len(dialogues)} dialogue(s) from fdb-v1 ("
            + ", ".join(f"{t} {n}" for t, n in sorted(tasks.items())) + ")"
            + (f"; {unplaced} FDB event(s) with no M3 event over them" if unplaced else ""))


FLEXI = Recipe("flexi", "FLEXI's released scenario folders (peer benchmark)",
           "FLEXI's scenario folder(s) of dialog_N folders", _flexi_arguments, _flexi,
           staged=False)
FDB_V1 = Recipe("fdb-v1", "Full-Duplex-Bench v1/v1.5 sample folders (peer benchmark)",
           "a Full-Duplex-Bench v1/v1.5 folder of task folders", lambda p: None, _fdb,
           staged=False)
