"""Events per cell of the tables an evaluation wrote: every cell of every table CSV in a bundle
(``duplexeval eval ... -o BUNDLE``; ``BUNDLE/tables/BENCH/*.csv`` with ``n`` and ``dagger``
columns, i.e. M3's Tables 5 and 6, FLEXI's and MTR's tables), with its event count and whether
it is marked ``†`` (fewer than 20 events: the estimate is not ranked).  The seeds report the
Single, Multi (gen) and Multi (ref) protocols; ``interactive`` (duplexeval's simulated user) is
counted apart.

Issue 32's check on the full suites: ``duplexeval eval m3 --system reference --full -o BUNDLE``,
then this script on BUNDLE prints ``seed cells marked †: 0`` when every cell of the seeds'
protocols has at least 20 events.  Exit status 1 when any of those is marked, 2 when the bundle
has no such table.

Usage: .venv/bin/python perf/table_cells.py BUNDLE [--all]
(``--all``: print every cell, not only the smallest per table and the marked ones).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

KEYS = ("table", "language", "model", "run", "protocol", "domain", "group", "column", "metric")
"""What names a cell: M3's tidy CSV (:mod:`duplexeval.report._render_csv`: ``model``,
``protocol``, ``domain``, ...) and FLEXI's and MTR's grid CSV
(:mod:`duplexeval.report._mtr_tables`: ``run``, ``column``; the protocol in the table name,
e.g. ``flexi-interactive``)."""
SEED_PROTOCOLS = ("single", "multi-gen", "multi-ref")
"""The protocols the seed papers report."""


def protocol(row: dict[str, str]) -> str:
    """A cell's protocol: its column, else the one its table is named after ('' if none)."""
    if row.get("protocol"):
        return row["protocol"]
    table = row.get("table", "")
    return next((p for p in (*SEED_PROTOCOLS, "interactive") if table.endswith(f"-{p}")), "")


def is_seed(row: dict[str, str]) -> bool:
    """Whether a cell is of a protocol the seeds report (a table of no protocol counts)."""
    return protocol(row) != "interactive"


def table_files(bundle: Path) -> list[Path]:
    """The bundle's table CSVs that carry event counts, by path."""
    out = []
    for path in sorted((bundle / "tables").rglob("*.csv")):
        with path.open(newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
        if "n" in header and "dagger" in header:
            out.append(path)
    return out


def cells(path: Path) -> list[dict[str, str]]:
    """The rows of one table CSV (one per printed cell)."""
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _name(row: dict[str, str]) -> str:
    return " | ".join(row.get(k, "") for k in KEYS if row.get(k))


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.split("Usage: ")[1].strip(), file=sys.stderr)
        return 2
    bundle, every = Path(argv[0]), "--all" in argv[1:]
    files = table_files(bundle)
    if not files:
        print(f"{bundle}: no table CSV with event counts under tables/", file=sys.stderr)
        return 2
    marked = total = seed_marked = 0
    for path in files:
        rows = cells(path)
        counted = [r for r in rows if r.get("n")]
        total += len(counted)
        daggers = [r for r in counted if r["dagger"] == "true"]
        marked += len(daggers)
        seed_marked += sum(is_seed(r) for r in daggers)
        print(f"{path.relative_to(bundle)}: {len(counted)} cells, {len(daggers)} marked †")
        if not counted:
            continue
        seeds = [r for r in counted if is_seed(r)]
        for label, pool in (("smallest", counted), ("smallest of the seeds' protocols", seeds)):
            if pool:
                low = min(pool, key=lambda r: int(r["n"]))
                print(f"  {label} n={low['n']}: {_name(low)} ({low['data']})")
        for r in counted if every else daggers:
            print(f"  n={r['n']:>4} {'†' if r['dagger'] == 'true' else ' '} {_name(r)}")
    print(f"cells: {total}; cells marked †: {marked}; seed cells marked †: {seed_marked}")
    return 1 if seed_marked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
