"""Compile the lock files of the two environments that ``make`` builds, from ``pyproject.toml``.

* ``requirements.lock``: ``.venv`` (``make test``, ``make demo``): the core dependencies, the
  extras that :data:`MAIN_EXTRAS` lists, and ``requirements/build.in`` (pip and the build
  backend), every package pinned with its SHA-256 hashes.  ``make`` installs it with
  ``pip install --require-hashes --no-deps``, then duplexeval itself without build isolation,
  so a fresh clone gets exactly the versions CI tested.
* ``requirements-moshi.lock``: ``.venv-moshi`` (``make test-moshi``): the core, ``moshi``,
  ``servers`` (the real ``moshi.server`` tests drive it with ``moshi-ws``) and ``test``.  Pins
  without hashes, used as pip constraints: PyPI's torch is the CUDA build and
  ``MOSHI_TORCH_INDEX`` may bring the CPU build of the same version instead (``2.9.1+cpu``
  satisfies ``==2.9.1``, its hashes are another file's).

Both are universal (one file for every platform, with environment markers) and resolved with
one version per package (``--fork-strategy fewest``), so Python 3.11 and 3.12 get the same
numeric stack.  Each file starts with ``# inputs-sha256: ...``, the hash of what it was compiled
from (:func:`inputs_digest`); ``tests/test_lock.py`` fails when ``pyproject.toml`` changed
without a new lock, when a requirement is not met by its pin, or when ``.venv`` holds another
version than its lock.

Refresh (needs the package index; ``make lock`` runs it with a pinned uv)::

    python scripts/lock.py [--uv PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = "3.11"
"""The oldest Python the project supports (``requires-python``), the one resolved for."""
MAIN_EXTRAS = ("test", "docs", "asr", "tts", "tts-en", "dask", "servers", "quality",
               "judge-local")
"""The extras ``make`` installs into ``.venv``."""
MOSHI_EXTRAS = ("moshi", "servers", "test")
"""The extras ``make venv-moshi`` installs into ``.venv-moshi``."""
BUILD_IN = ROOT / "requirements" / "build.in"
HEADER = "# inputs-sha256: "


@dataclass(frozen=True)
class Lock:
    """One lock file: where it goes, the extras it covers, whether it pins hashes."""

    path: Path
    extras: tuple[str, ...]
    hashes: bool
    build: bool
    """Whether ``requirements/build.in`` (pip, the build backend) is part of it."""


LOCKS = (Lock(ROOT / "requirements.lock", MAIN_EXTRAS, hashes=True, build=True),
         Lock(ROOT / "requirements-moshi.lock", MOSHI_EXTRAS, hashes=False, build=False))


def direct_requirements(lock: Lock, pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The requirement strings ``lock`` is compiled from: the core dependencies, its extras,
    and (for a lock with the build tools) ``requirements/build.in``."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    out = list(project["dependencies"])
    for extra in lock.extras:
        out += project["optional-dependencies"][extra]
    if lock.build:
        out += [line.split("#")[0].strip() for line in BUILD_IN.read_text().splitlines()
                if line.split("#")[0].strip()]
    return out


def inputs_digest(lock: Lock, pyproject: Path = ROOT / "pyproject.toml") -> str:
    """SHA-256 of what ``lock`` is resolved from: the Python version, ``requires-python``, the
    build system's requirements and :func:`direct_requirements` (not the rest of
    ``pyproject.toml``: a linter setting needs no new lock)."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    payload = {"python": PYTHON, "requires-python": data["project"]["requires-python"],
               "build-system": data["build-system"]["requires"], "extras": list(lock.extras),
               "requirements": direct_requirements(lock, pyproject)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def compile_lock(lock: Lock, uv: str) -> None:
    """Resolve ``lock`` with ``uv pip compile`` and write it with its inputs header."""
    command = [uv, "pip", "compile", "pyproject.toml", "--universal", "--fork-strategy",
               "fewest", "--python-version", PYTHON, "--no-header"]
    if lock.build:
        command.insert(4, str(BUILD_IN.relative_to(ROOT)))
    for extra in lock.extras:
        command += ["--extra", extra]
    if lock.hashes:
        command.append("--generate-hashes")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"lock: uv pip compile failed for {lock.path.name}:\n{done.stderr}")
    extras = ",".join(lock.extras)
    header = (f"{HEADER}{inputs_digest(lock)}\n"
              f"# {lock.path.name}: duplexeval[{extras}]"
              f"{' + requirements/build.in' if lock.build else ''}, Python >= {PYTHON}, every "
              "platform.\n# Generated by `make lock` (scripts/lock.py); do not edit.\n")
    tmp = lock.path.with_suffix(".tmp")
    tmp.write_text(header + done.stdout, encoding="utf-8")
    tmp.replace(lock.path)
    print(f"lock: wrote {lock.path.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uv", default="uv", help="the uv executable (default: uv on PATH)")
    args = parser.parse_args(argv)
    for lock in LOCKS:
        compile_lock(lock, args.uv)


if __name__ == "__main__":
    main()
