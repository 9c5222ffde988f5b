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

* ``requirements-build.lock``: the build backends of the lock's sdists (:data:`SDIST_BACKENDS`:
  docopt's setuptools, llama-cpp-python's scikit-build-core) and what those backends may ask
  for (:data:`BACKEND_EXTRAS`: cmake and ninja when the machine has none), every version pinned
  (no hashes: pip does not check hashes in an isolated build environment).  ``make`` builds the
  sdists with pip's build isolation and passes this file as ``--build-constraint`` (pip >= 25.3:
  the lock's pip, installed first; Python 3.11's bundled pip 23.2 has no such option, and the
  lock's pip 26.3 no longer lets ``PIP_CONSTRAINT`` reach a build environment: checked by
  building docopt from an empty cache), so a fresh machine builds them with the same backend
  versions; its header hashes :func:`build_requirements`.

Refresh (needs the package index; ``make lock`` runs it with a pinned uv); the pins already in a
lock are kept where the requirements allow them, ``--upgrade`` resolves everything afresh::

    python scripts/lock.py [--uv PATH] [--upgrade]
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
               "conditions", "judge-local")
"""The extras ``make`` installs into ``.venv``."""
MOSHI_EXTRAS = ("moshi", "servers", "test")
"""The extras ``make venv-moshi`` installs into ``.venv-moshi``."""
BUILD_IN = ROOT / "requirements" / "build.in"
HEADER = "# inputs-sha256: "
BUILD_LOCK = ROOT / "requirements-build.lock"
"""The pinned build backends of the lock's sdists (``make`` passes it as ``--build-constraint``)."""
SDIST_BACKENDS = {
    "docopt": ("setuptools>=40.8.0",),
    "llama-cpp-python": ("scikit-build-core[pyproject]>=0.9.2",),
}
"""The packages of ``requirements.lock`` that PyPI has only as sdists, and their declared build
requirements: docopt 0.6.2 has no ``pyproject.toml`` (pip's default, setuptools'
``__legacy__`` backend), llama-cpp-python 0.3.36 declares scikit-build-core."""
BACKEND_EXTRAS = ("cmake>=3.21", "ninja>=1.5")
"""What scikit-build-core's ``get_requires_for_build_wheel`` adds when the machine has no cmake
(>= llama.cpp's minimum) or ninja: pinned too, used only when asked for."""


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


def compile_lock(lock: Lock, uv: str, upgrade: bool = False) -> None:
    """Resolve ``lock`` with ``uv pip compile`` and write it with its inputs header.

    The lock's current pins are kept where the requirements still allow them (uv reads the
    output file it is given as its preferences, as pip-compile does), so adding a requirement
    moves nothing else; ``upgrade`` resolves every package afresh."""
    tmp = lock.path.with_suffix(".tmp")
    command = [uv, "pip", "compile", "pyproject.toml", "--universal", "--fork-strategy",
               "fewest", "--python-version", PYTHON, "--no-header",
               "--output-file", str(tmp.relative_to(ROOT))]
    if lock.build:
        command.insert(4, str(BUILD_IN.relative_to(ROOT)))
    for extra in lock.extras:
        command += ["--extra", extra]
    if lock.hashes:
        command.append("--generate-hashes")
    if upgrade:
        command.append("--upgrade")
    if lock.path.exists():
        tmp.write_text(lock.path.read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        sys.exit(f"lock: uv pip compile failed for {lock.path.name}:\n{done.stderr}")
    resolved = tmp.read_text(encoding="utf-8")
    extras = ",".join(lock.extras)
    header = (f"{HEADER}{inputs_digest(lock)}\n"
              f"# {lock.path.name}: duplexeval[{extras}]"
              f"{' + requirements/build.in' if lock.build else ''}, Python >= {PYTHON}, every "
              "platform.\n# Generated by `make lock` (scripts/lock.py); do not edit.\n")
    tmp.write_text(header + resolved, encoding="utf-8")
    tmp.replace(lock.path)
    print(f"lock: wrote {lock.path.relative_to(ROOT)}")


def build_requirements() -> list[str]:
    """What ``requirements-build.lock`` is resolved from: the sdists' backends, then the
    backends' conditional requirements (sorted, no duplicates)."""
    backends = sorted({r for reqs in SDIST_BACKENDS.values() for r in reqs})
    return backends + list(BACKEND_EXTRAS)


def build_digest() -> str:
    """SHA-256 of what ``requirements-build.lock`` is resolved from (Python version, the
    requirements of :func:`build_requirements`)."""
    payload = {"python": PYTHON, "requirements": build_requirements()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def compile_build_lock(uv: str) -> None:
    """Resolve :func:`build_requirements` with ``uv pip compile`` into ``requirements-build.lock``
    (pins, no hashes)."""
    command = [uv, "pip", "compile", "-", "--universal", "--fork-strategy", "fewest",
               "--python-version", PYTHON, "--no-header", "--no-annotate"]
    done = subprocess.run(command, cwd=ROOT, input="\n".join(build_requirements()) + "\n",
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"lock: uv pip compile failed for {BUILD_LOCK.name}:\n{done.stderr}")
    sdists = ", ".join(sorted(SDIST_BACKENDS))
    header = (f"{HEADER}{build_digest()}\n"
              f"# {BUILD_LOCK.name}: the build backends of the sdists of requirements.lock "
              f"({sdists}), Python >= {PYTHON},\n# every platform; pip's --build-constraint.  "
              "Generated by `make lock` (scripts/lock.py); do not edit.\n")
    tmp = BUILD_LOCK.with_suffix(".tmp")
    tmp.write_text(header + done.stdout, encoding="utf-8")
    tmp.replace(BUILD_LOCK)
    print(f"lock: wrote {BUILD_LOCK.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uv", default="uv", help="the uv executable (default: uv on PATH)")
    parser.add_argument("--build-only", action="store_true",
                        help=f"refresh {BUILD_LOCK.name} only (the other locks stay as they are)")
    parser.add_argument("--upgrade", action="store_true",
                        help="resolve every package afresh (default: keep the locks' pins "
                             "where the requirements allow them)")
    args = parser.parse_args(argv)
    if not args.build_only:
        for lock in LOCKS:
            compile_lock(lock, args.uv, args.upgrade)
    compile_build_lock(args.uv)


if __name__ == "__main__":
    main()
