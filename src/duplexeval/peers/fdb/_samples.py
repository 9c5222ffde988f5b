"""Which sample folders (and files) each Full-Duplex-Bench evaluator reads, in compat mode
(its code's listing, quirks included) and in paper mode (one folder, one sample).

Order: FDB's v1 evaluators iterate ``os.listdir`` order, which depends on the file system;
we sort names (as ``eval_user_interruption.py`` and ``get_timing.py`` do with full paths).
Only the mis-pairing of ``eval_smooth_turn_taking.py`` depends on the order.  ``OUT_DIR`` is
never read as a sample when it lies inside the root.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from duplexeval.errors import DuplexevalError

__all__ = ["OUTPUT_JSON", "Listed", "inside", "interruption_folders", "listed_outputs",
           "paired_outputs", "sample_name"]

OUTPUT_JSON = "output.json"
TURN_TAKING_JSON = "turn_taking.json"
IGNORED_SUFFIXES = (".DS_Store", ".md")
"""Root entries ``eval_smooth_turn_taking.py`` / ``eval_pause_handling.py`` skip by name."""


@dataclass(frozen=True)
class Listed:
    """One sample as an evaluator lists it: its folder, the output JSON and, for smooth
    turn-taking, the ``turn_taking.json`` it is paired with (``None``: dropped by ``zip``)."""

    folder: Path
    output: Path | None
    annotation: Path | None = None


def sample_name(root: Path, folder: Path) -> str:
    """The sample id: the folder's path under the root, ``/``-separated."""
    return folder.relative_to(root).as_posix()


def inside(path: Path, out_dir: Path | None) -> bool:
    """True when ``path`` is ``out_dir`` or lies under it (never read as a sample)."""
    if out_dir is None:
        return False
    try:
        path.resolve().relative_to(out_dir.resolve())
    except ValueError:
        return False
    return True


def _folders(root: Path, out_dir: Path | None, compat: bool, script: str) -> list[Path]:
    folders = []
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if inside(entry, out_dir):
            continue
        if not compat:
            if entry.is_dir() and not entry.name.startswith("."):
                folders.append(entry)
            continue
        if entry.name.endswith(IGNORED_SUFFIXES):
            continue
        if not entry.is_dir():
            raise DuplexevalError(f"{entry}: not a folder; FDB's {script} reads every entry of "
                                  "the root but .DS_Store and *.md as a sample folder")
        folders.append(entry)
    return folders


def _outputs(folder: Path, compat: bool) -> list[str]:
    names = sorted(os.listdir(folder))
    if compat:
        return [n for n in names if n.endswith(OUTPUT_JSON)]
    return [OUTPUT_JSON] if OUTPUT_JSON in names else []


def listed_outputs(root: Path, out_dir: Path | None, compat: bool,
                   script: str) -> list[Listed]:
    """``eval_pause_handling.py``'s samples: every file whose name *ends with*
    ``output.json`` (``clean_output.json`` too) in every root entry (compat), or each folder's
    ``output.json`` (paper).  A folder without one is listed with ``output=None``."""
    listed = []
    for folder in _folders(root, out_dir, compat, script):
        names = _outputs(folder, compat)
        listed += [Listed(folder, folder / n) for n in names] or [Listed(folder, None)]
    return listed


def paired_outputs(root: Path, out_dir: Path | None, compat: bool) -> list[Listed]:
    """``eval_smooth_turn_taking.py``'s samples and their ``turn_taking.json``.

    Compat: for each output file found (as :func:`listed_outputs`), *every* file of that
    folder ending with ``turn_taking.json`` is appended to a second list, and the two lists
    are zipped, so a folder without (or with two) annotations shifts the pairing of all the
    folders after it and ``zip`` drops the unmatched tail::

        folders      1: out+tt   2: out   3: out+tt
        outputs      1/out       2/out    3/out
        annotations  1/tt        3/tt
        pairs        (1/out, 1/tt) (2/out, 3/tt)       3/out dropped

    Paper: each folder's ``output.json`` with the same folder's ``turn_taking.json``, which
    must exist.
    """
    script = "eval_smooth_turn_taking.py"
    outputs: list[Listed] = []
    annotations: list[Path] = []
    for folder in _folders(root, out_dir, compat, script):
        names = sorted(os.listdir(folder))
        found = _outputs(folder, compat)
        if not found:
            outputs.append(Listed(folder, None))
        for name in found:
            outputs.append(Listed(folder, folder / name))
            if compat:
                annotations += [folder / n for n in names if n.endswith(TURN_TAKING_JSON)]
            elif TURN_TAKING_JSON in names:
                annotations.append(folder / TURN_TAKING_JSON)
            else:
                raise DuplexevalError(f"{folder / TURN_TAKING_JSON}: not found")
    pending = iter(annotations)
    return [Listed(o.folder, o.output, next(pending, None)) if o.output is not None else o
            for o in outputs]


def interruption_folders(root: Path, out_dir: Path | None, compat: bool) -> list[Path]:
    """``eval_user_interruption.py``'s samples: every folder under the root *at any depth*
    (``os.walk``), sorted as path strings (compat), or the root's own folders (paper).
    FDB's code fails when one of them lacks ``output.json`` or ``interrupt.json``."""
    if not compat:
        return _folders(root, out_dir, False, "eval_user_interruption.py")
    found = []
    for top, dirs, _files in os.walk(root):
        found += [os.path.join(top, d) for d in dirs]
    return [Path(p) for p in sorted(found) if not inside(Path(p), out_dir)]
