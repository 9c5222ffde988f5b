"""``data import FORMAT SOURCE -o DATASET_DIR`` (one subcommand per registered recipe),
``data stats DATASET_DIR``, ``data split DATASET_DIR`` and ``data segment DATASET_DIR``."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from duplexeval.cli._options import out_folder, split_name
from duplexeval.cli._quality_commands import add_dnsmos_options, dnsmos_for_split
from duplexeval.errors import DuplexevalError, number_type

__all__ = ["add_import", "add_segment", "add_split", "add_stats"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_import(data_sub: Subparsers) -> None:
    """``data import FORMAT ...``: one sub-subcommand per recipe of
    :data:`duplexeval.data.recipes.RECIPES`."""
    from duplexeval.data.recipes import recipes

    table = recipes()
    p = data_sub.add_parser("import", help="a corpus you have, in the M3 layout (nothing is "
                            f"downloaded): {', '.join(table)}")
    formats = p.add_subparsers(dest="import_format", required=True, metavar="FORMAT")
    for name, item in table.items():
        q = formats.add_parser(name, help=item.help)
        q.add_argument("source", metavar="SOURCE", help=item.source_help)
        q.add_argument("-o", "--output", type=out_folder, required=True, metavar="DATASET_DIR")
        q.add_argument("--split", type=split_name, default="test",
                       help="the split written (default: test)")
        q.add_argument("--force", action="store_true", help="replace the split if DATASET_DIR "
                       "already holds it (its other splits stay)")
        item.add_arguments(q)
        q.set_defaults(func=_import, recipe_name=name)


def _import(args: argparse.Namespace) -> int:
    from duplexeval.data.recipes import recipe, staged_output

    item = recipe(args.recipe_name)
    out = Path(args.output)
    if not item.staged:
        print(item.run(args, out))
        return 0
    guards = (f"{args.split}.jsonl",) + (("specs",) if item.writes_specs else ())
    with staged_output(out, guards, args.force) as staging:
        line = item.run(args, staging)
        if item.writes_specs and getattr(args, "synth", False):
            line += "; " + _synth_specs(staging, args.split)
    print(f"{out} [{args.split}]: {line}")
    return 0


def _synth_specs(root: Path, split: str) -> str:
    """Voice ``root/specs/`` into ``root`` with the synthesizer's defaults."""
    from duplexeval.synth._build import Synthesizer, SynthSettings
    from duplexeval.synth._spec import load_specs

    specs = load_specs(root / "specs")
    synth = Synthesizer(SynthSettings())
    built = [synth.build(spec) for spec in specs]
    synth.write(built, root, split)
    return f"{len(built)} dialogue(s) synthesized"


def add_stats(data_sub: Subparsers) -> None:
    """``data stats DATASET_DIR [--split NAME] [--json]``."""
    q = data_sub.add_parser("stats", help="dialogues, hours and events per kind and domain "
                            "(the M3 paper's Table 3)")
    q.add_argument("dataset", metavar="DATASET_DIR")
    q.add_argument("--split", type=split_name, action="append", default=None,
                   help="a split to count (repeatable; default: every split)")
    q.add_argument("--json", action="store_true", help="print JSON instead of a table")
    q.set_defaults(func=_stats)


def _stats(args: argparse.Namespace) -> int:
    from duplexeval.data._m3 import available_splits
    from duplexeval.data._stats import dataset_groups, stats_rows
    from duplexeval.data._validate import load_dataset
    from duplexeval.report._text import format_table

    root = Path(args.dataset)
    splits = args.split or available_splits(root)
    if not splits:
        raise DuplexevalError(f"{root}: no split (*.jsonl) here")
    datasets = [load_dataset(root, split)[0] for split in splits]
    groups = dataset_groups(datasets)
    if args.json:
        json.dump({"dataset": str(root), "name": datasets[0].name,
                   "language": datasets[0].language, "domain": datasets[0].domain,
                   "groups": {k: g.to_json() for k, g in groups.items()}},
                  sys.stdout, ensure_ascii=False, indent=2)
        print()
        return 0
    head = f"{datasets[0].name} ({datasets[0].language or '?'}, {datasets[0].domain or '?'})"
    print(head)
    print("\n".join(format_table(["", *groups], stats_rows(groups))))
    return 0


def add_split(data_sub: Subparsers) -> None:
    """``data split DATASET_DIR [--from all] [--hours 1] [--scores FILE.json | --dnsmos]``."""
    q = data_sub.add_parser("split", help="a deterministic speaker-disjoint test/dev split: "
                            "about --hours of the best-scored dialogues as test, the dialogues "
                            "sharing no speaker with them as dev")
    q.add_argument("dataset", metavar="DATASET_DIR")
    q.add_argument("--from", dest="source_split", default="all",
                   help="the split to divide (default: all)")
    q.add_argument("--hours", type=number_type(float, 0, 10000, low_open=True), default=1.0,
                   help="test-set length (h; default 1)")
    q.add_argument("--scores", metavar="FILE.json", default=None,
                   help='{"dialogue id": score} (higher is better, e.g. DNSMOS); without it the '
                   "order is sha256 of the ids")
    q.add_argument("--dnsmos", action="store_true",
                   help="rank by DNSMOS computed now (the M3 paper's selection; see also "
                        "data quality, whose dnsmos_scores.json --scores reads)")
    add_dnsmos_options(q)
    q.add_argument("--force", action="store_true", help="overwrite existing test/dev splits")
    q.set_defaults(func=_split)


def _split(args: argparse.Namespace) -> int:
    from duplexeval._fileio import atomic_write_json, atomic_write_text, json_line, read_json
    from duplexeval.data._m3 import record_json
    from duplexeval.data._split import speaker_disjoint_split
    from duplexeval.data._validate import load_dataset

    root = Path(args.dataset)
    if args.source_split in ("test", "dev"):
        raise DuplexevalError(f"--from {args.source_split}: the split written would overwrite "
                              "it; import into another split (e.g. --split all)")
    for name in ("test", "dev"):
        if (root / f"{name}.jsonl").exists() and not args.force:
            raise DuplexevalError(f"{root / f'{name}.jsonl'} exists; pass --force to replace it")
    dataset, _ = load_dataset(root, args.source_split)
    if args.dnsmos and args.scores:
        raise DuplexevalError("give --scores or --dnsmos, not both")
    scores = read_json(Path(args.scores), "scores file") if args.scores else None
    if args.dnsmos:
        scores = dnsmos_for_split(args, dataset)
    if scores is not None and not (isinstance(scores, dict) and all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in scores.values())):
        raise DuplexevalError(f"{args.scores}: expected an object of dialogue id to finite "
                              "number")
    result = speaker_disjoint_split(dataset.dialogues, args.hours * 3600, scores)
    by_id = {d.id: d for d in dataset.dialogues}
    for name, ids in (("test", result.test), ("dev", result.dev)):
        atomic_write_text(root / f"{name}.jsonl",
                          "".join(json_line(record_json(by_id[i])) for i in ids))
    atomic_write_json(root / "split.json", {
        "from": args.source_split, "hours": args.hours,
        "scores": f"dnsmos {args.dnsmos_measure}" if args.dnsmos else args.scores,
        "test_seconds": round(result.test_seconds, 3), "test": list(result.test),
        "dev": list(result.dev), "dropped": list(result.dropped)})
    print(f"{root}: test {len(result.test)} dialogue(s), {result.test_seconds / 3600:.2f} h; "
          f"dev {len(result.dev)}; {len(result.dropped)} dropped (they share a speaker with "
          "the test set)")
    return 0


def add_segment(data_sub: Subparsers) -> None:
    """``data segment DATASET_DIR -o OUT [--segment 120]``."""
    from duplexeval.data.recipes._common import add_segment_arguments

    q = data_sub.add_parser("segment", help="cut every dialogue of a dataset into ~120 s "
                            "segments in silences of both speakers (ids ID.START-END)")
    q.add_argument("dataset", metavar="DATASET_DIR")
    q.add_argument("-o", "--output", type=out_folder, required=True, metavar="OUT_DIR")
    q.add_argument("--split", type=split_name, default="test")
    q.add_argument("--force", action="store_true", help="replace the split if OUT_DIR holds it")
    add_segment_arguments(q)
    q.set_defaults(func=_segment)


def _segment(args: argparse.Namespace) -> int:
    from duplexeval.data._segment_dataset import segment_dataset
    from duplexeval.data._validate import load_dataset
    from duplexeval.data.recipes import staged_output

    dataset, _ = load_dataset(Path(args.dataset), args.split)
    out = Path(args.output)
    if out.resolve() == Path(args.dataset).resolve():
        raise DuplexevalError(f"{out}: write the segments to another folder")
    with staged_output(out, (f"{args.split}.jsonl",), args.force) as staging:
        dialogues = segment_dataset(dataset, staging, args.segment, args.min_last)
    print(f"{out} [{args.split}]: {len(dialogues)} segment(s) from {len(dataset)} dialogue(s)")
    return 0
