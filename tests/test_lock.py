"""The lock files (``requirements.lock``, ``requirements-moshi.lock``; ``scripts/lock.py``) match
``pyproject.toml``, and ``.venv`` holds exactly ``requirements.lock``.

A stale lock (pyproject's requirements changed, ``make lock`` not run) fails here with the
command that refreshes it; so does a pin that a requirement does not allow, and a package in the
test environment at another version than its lock says (an install that did not come from the
lock)."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def lock_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lock_script", ROOT / "scripts" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


LOCK = lock_script()
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def pins(path: Path) -> dict[str, tuple[Version, Marker | None]]:
    """``name -> (version, marker)`` of a lock file (one version per package)."""
    out: dict[str, tuple[Version, Marker | None]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        found = PIN.match(line)
        if found:
            name = canonicalize_name(found[1])
            assert name not in out, f"{path.name}: {name} is pinned twice"
            out[name] = (Version(found[2]), Marker(found[3]) if found[3] else None)
    return out


@pytest.mark.parametrize("lock", LOCK.LOCKS, ids=lambda lock: lock.path.name)
def test_the_lock_was_compiled_from_pyproject_as_it_is(lock: object) -> None:
    first = lock.path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(LOCK.HEADER), f"{lock.path.name} has no inputs header"
    assert first.removeprefix(LOCK.HEADER) == LOCK.inputs_digest(lock), (
        f"{lock.path.name} is stale: pyproject.toml's requirements changed; run `make lock`")


@pytest.mark.parametrize("lock", LOCK.LOCKS, ids=lambda lock: lock.path.name)
def test_every_requirement_is_met_by_its_pin(lock: object) -> None:
    pinned = pins(lock.path)
    assert len(pinned) > 20
    for text in LOCK.direct_requirements(lock):
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{lock.path.name} lacks {requirement.name}"
        version, _ = pinned[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{lock.path.name}: {name}=={version} does not meet {text!r}")
        for extra in requirement.extras:  # e.g. dask[distributed]: its extra's packages too
            for dependency in extra_requirements(name, extra):
                assert canonicalize_name(dependency.name) in pinned, (
                    f"{lock.path.name} lacks {dependency.name} ({requirement.name}[{extra}])")


def extra_requirements(name: str, extra: str) -> list[Requirement]:
    """What the installed ``name`` asks for under ``extra`` (none when it is not installed
    here, e.g. the moshi lock's packages in ``.venv``)."""
    try:
        declared = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return []
    out = [Requirement(d) for d in declared]
    return [r for r in out if r.marker is not None and r.marker.evaluate({"extra": extra})]


def test_the_main_lock_pins_hashes_and_the_numeric_stack() -> None:
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    for block in re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 3)[3]):
        if PIN.match(block.splitlines()[0]):
            assert "--hash=sha256:" in block, f"requirements.lock: no hash for {block[:40]}"
    pinned = pins(ROOT / "requirements.lock")
    for name in ("numpy", "onnxruntime", "ctranslate2", "faster-whisper", "scipy", "soxr"):
        assert name in pinned and pinned[name][1] is None, name


def test_the_test_environment_is_the_lock() -> None:
    """What ``make`` installed: every package of ``requirements.lock`` that applies here, at its
    pinned version, and nothing besides them and duplexeval."""
    pinned = pins(ROOT / "requirements.lock")
    installed = {canonicalize_name(d.metadata["Name"]): Version(d.version)
                 for d in metadata.distributions()}
    wrong = {name: (str(installed.get(name)), str(version))
             for name, (version, marker) in pinned.items()
             if (marker is None or marker.evaluate()) and installed.get(name) != version}
    assert not wrong, f"installed vs locked (run `make venv`): {wrong}"
    extra = sorted(set(installed) - set(pinned) - {"duplexeval"})
    assert not extra, f"installed but not in requirements.lock: {extra}"


def lock_filter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lock_filter",
                                                  ROOT / "scripts" / "lock_filter.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_demo_install_leaves_out_exactly_the_judge_local_extra() -> None:
    """``make demo`` installs the lock without ``LOCAL_JUDGE`` (llama.cpp compiles for minutes)
    and ``make test`` adds it: the two parts are the lock, and ``LOCAL_JUDGE`` names the
    judge-local extra's packages."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    listed = re.search(r"^LOCAL_JUDGE := (\S+)$", makefile, re.MULTILINE)
    assert listed is not None, "the Makefile sets no LOCAL_JUDGE"
    names = {canonicalize_name(name) for name in listed[1].split(",")}
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]["judge-local"]
    assert names == {canonicalize_name(Requirement(text).name) for text in extra}
    script = lock_filter()
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    base = script.select(text, names, keep=False)
    judge = script.select(text, names, keep=True)
    assert set(pins_of(base)) | set(pins_of(judge)) == set(pins_of(text))
    assert set(pins_of(judge)) == names and not names & set(pins_of(base))
    whole = [line for line in text.splitlines() if not line.startswith("#")]
    assert sorted(whole) == sorted(
        line for part in (base, judge) for line in part.splitlines() if not line.startswith("#"))


def pins_of(text: str) -> list[str]:
    return [canonicalize_name(found[1]) for line in text.splitlines() if (found := PIN.match(line))]


def test_the_build_lock_pins_the_backends_of_the_locks_sdists() -> None:
    """``requirements-build.lock`` is compiled from ``scripts/lock.py``'s list as it is, pins a
    version meeting every backend requirement, and every sdist it lists is in the lock."""
    first = LOCK.BUILD_LOCK.read_text(encoding="utf-8").splitlines()[0]
    assert first == LOCK.HEADER + LOCK.build_digest(), (
        f"{LOCK.BUILD_LOCK.name} is stale: run `make lock`")
    built = pins(LOCK.BUILD_LOCK)
    for text in LOCK.build_requirements():
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in built, f"{LOCK.BUILD_LOCK.name} lacks {name}"
        assert requirement.specifier.contains(built[name][0]), (name, built[name][0])
    locked = pins(ROOT / "requirements.lock")
    for sdist in LOCK.SDIST_BACKENDS:
        assert canonicalize_name(sdist) in locked, f"requirements.lock has no {sdist}"
    shared = set(built) & set(locked)
    assert {name: built[name][0] for name in shared} == {name: locked[name][0] for name in shared}


def test_make_builds_the_sdists_with_the_pinned_backends() -> None:
    """Each hash-checked install of ``.venv``'s lock passes the build lock: uv as
    ``--build-constraints``, pip (its fallback, and the judge-local part) as
    ``--build-constraint``, with the lock's pip (which knows the option) and uv installed
    before them (they are wheels: no build)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    named = re.search(r"^BUILD_LOCK := (\S+)$", makefile, re.MULTILINE)
    assert named is not None and named[1] == LOCK.BUILD_LOCK.name
    installs = [line for line in makefile.splitlines()
                if "pip install" in line and "--require-hashes" in line
                and "$(VENV)/lock-" in line]
    assert len(installs) == 3
    assert "lock-pip.txt" in installs[0] and "--build-constraint" not in installs[0]
    base, judge = installs[1:]
    assert "$(BIN)/uv pip install" in base and "--build-constraints $(BUILD_LOCK)" in base
    assert "|| {" in base and "-m pip install" in base.split("|| {")[1]
    for line in (base.split("|| {")[1], judge):
        assert "--build-constraint $(BUILD_LOCK)" in line, line
    assert pins(ROOT / "requirements.lock")["pip"][0] >= Version("25.3")
    assert "uv" in pins(ROOT / "requirements.lock")


@pytest.mark.parametrize("sdist", sorted(LOCK.SDIST_BACKENDS))
def test_the_sdists_here_were_built_with_the_pinned_backend(sdist: str) -> None:
    """The wheel pip built for an sdist of ``.venv`` names its backend and version (``WHEEL``'s
    ``Generator``): the pinned one (a wheel cached from before the pins may differ: ``make
    clean`` and an empty pip cache rebuild it)."""
    try:
        wheel = metadata.distribution(sdist).read_text("WHEEL") or ""
    except metadata.PackageNotFoundError:
        pytest.skip(f"{sdist} is not installed here")
    generator = next(line.split(":", 1)[1].strip() for line in wheel.splitlines()
                     if line.startswith("Generator:"))
    found = re.fullmatch(r"([A-Za-z0-9_.-]+) \(?([0-9][^)\s]*)\)?", generator)
    assert found, generator
    built = pins(LOCK.BUILD_LOCK)
    backend = canonicalize_name(found[1])
    assert backend in built and Version(found[2]) == built[backend][0], (sdist, generator)
