"""``data import FORMAT SOURCE -o DATASET_DIR`` (one subcommand per registered recipe)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_import"]

Subparsers = Any  # argparse's private _SubParsersAction


def add_import(data_sub: Subparsers) -> None:
    """``data import FORMAT ...``: one sub-subcommand per recipe of
    :data:`duplexeval.data.recipes.RECIPE_MODULES`."""
    from ..data.recipes import recipes

    table = recipes()
    p = data_sub.add_parser("import", help="a corpus you have, in the M3 layout (nothing is "
                            f"downloaded): {', '.join(table)}")
    formats = p.add_subparsers(dest="import_format", required=True, metavar="FORMAT")
    for name, item in table.items():
        q = formats.add_parser(name, help=item.help)
        q.add_argument("source", metavar="SOURCE", help=item.source_help)
        q.add_argument("-o", "--output", required=True, metavar="DATASET_DIR")
        q.add_argument("--split", default="test", help="the split written (default: test)")
        q.add_argument("--force", action="store_true", help="replace an existing DATASET_DIR")
        item.add_arguments(q)
        q.set_defaults(func=_import, recipe_name=name)


def _import(args: argparse.Namespace) -> int:
    from ..data.recipes import recipe, staged_output

    item = recipe(args.recipe_name)
    out = Path(args.output)
    with staged_output(out, args.force) as staging:
        line = item.run(args, staging)
        if item.writes_specs and getattr(args, "synth", False):
            line += "; " + _synth_specs(staging, args.split)
    print(f"{out} [{args.split}]: {line}")
    return 0


def _synth_specs(root: Path, split: str) -> str:
    """Voice ``root/specs/`` into ``root`` with the synthesizer's defaults."""
    from ..synth.build import Synthesizer, SynthSettings
    from ..synth.spec import load_specs

    specs = load_specs(root / "specs")
    synth = Synthesizer(SynthSettings())
    built = [synth.build(spec) for spec in specs]
    synth.write(built, root, split)
    return f"{len(built)} dialogue(s) synthesized"
