"""Make the shipped quick-subset packs (``src/duplexeval/bundled/quick/SUITE``) from builds
synthesized with the current code (see :mod:`duplexeval.suites._quick_pack`).

Run it when ``tests/test_quick_pack.py`` says a pack is no longer current (a spec of its
dialogues or the quick rule changed), or to ship audio from a changed synthesizer; commit the
packs with the change.  Prints each pack's dialogues, audio seconds and size.

Usage::

    .venv/bin/python scripts/pack_quick_suites.py            # the demo's suites
    .venv/bin/python scripts/pack_quick_suites.py m3-qa-en   # one
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from duplexeval.suites import SUITES
from duplexeval.suites._build import build_suite, quick_rule, synthesizer_digest
from duplexeval.suites._quick_pack import pack_root, write_pack

ROOT = Path(__file__).resolve().parents[1]
PACKED = ("m3-qa-en", "m3-qa-ja", "m3-chat-en", "m3-chat-ja", "flexi-en")
"""The suites whose quick subsets the default ``make demo`` evaluates."""


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=False).stdout.strip()


def _commit() -> str:
    """HEAD's short hash, ``-dirty`` when the package's code differs from it (the packs
    themselves and files outside the package left aside)."""
    changed = _git("status", "--porcelain", "--", "src/duplexeval",
                   ":!src/duplexeval/bundled/quick")
    return (_git("rev-parse", "--short=10", "HEAD") or "unknown") + ("-dirty" if changed else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", default=list(PACKED))
    args = parser.parse_args()
    commit = _commit()
    for name in args.suites:
        suite = SUITES.get(name)
        build = build_suite(name, limit="quick", synthesize=True, jobs=None)
        out = pack_root() / name
        manifest = write_pack(build, name, suite.spec_folder(), quick_rule(suite), out, commit,
                              synthesizer_digest())
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        seconds = json.loads((out / "quality.json").read_text("utf-8"))["seconds"]
        print(f"{name}: {len(manifest['dialogues'])} dialogues, {seconds:.0f} s of audio, "
              f"{size / 1e6:.2f} MB ({out.relative_to(ROOT)})")


if __name__ == "__main__":
    main()
