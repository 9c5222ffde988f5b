"""``duplexeval --version``: the release number, with the git revision when the code is a
checkout that is not the release (:func:`duplexeval.version.describe`)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from duplexeval.cli import main
from duplexeval.version import __version__

ROOT = Path(__file__).resolve().parents[1]
VERSION_PY = ROOT / "src" / "duplexeval" / "version.py"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git program")


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"version_copy_{abs(hash(path))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _checkout(tmp_path: Path) -> tuple[Path, ModuleType]:
    """A repository holding a copy of version.py where duplexeval's is, with one commit."""
    repo = tmp_path / "repo"
    (repo / "src" / "duplexeval").mkdir(parents=True)
    shutil.copy(VERSION_PY, repo / "src" / "duplexeval" / "version.py")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    return repo, _load(repo / "src" / "duplexeval" / "version.py")


@needs_git
def test_a_commit_that_is_not_the_release_names_its_revision(tmp_path: Path) -> None:
    repo, version = _checkout(tmp_path)
    revision = _git(repo, "rev-parse", "--short", "HEAD")
    assert version.describe() == f"{__version__} (git {revision})"
    (repo / "src" / "duplexeval" / "version.py").write_text("# changed\n", encoding="utf-8")
    assert version.describe() == f"{__version__} (git {revision}, modified)"


@needs_git
def test_the_release_tag_and_an_installed_copy_are_the_plain_version(tmp_path: Path) -> None:
    repo, version = _checkout(tmp_path)
    _git(repo, "tag", f"v{__version__}")
    assert version.describe() == __version__
    # outside any repository, or inside another project's: the version alone
    alone = tmp_path / "site-packages" / "duplexeval"
    alone.mkdir(parents=True)
    shutil.copy(VERSION_PY, alone / "version.py")
    assert _load(alone / "version.py").describe() == __version__
    _git(tmp_path / "site-packages", "init", "-q")
    assert _load(alone / "version.py").describe() == __version__


def test_the_command_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    from duplexeval.version import describe

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"duplexeval {describe()}\n"


def _hatchling_version(repo: Path) -> str:
    import sys

    done = subprocess.run([sys.executable, "-m", "hatchling", "version"], cwd=repo,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@needs_git
def test_the_version_comes_from_git_tags(tmp_path: Path) -> None:
    """A project with duplexeval's own ``[tool.hatch.version]`` (read from pyproject.toml):
    before any tag a dev version after the fallback, at tag ``v2.3.4`` exactly ``2.3.4``, one
    commit later a dev version of ``2.3.5``; :func:`release_of` keeps the release part, the
    number results and caches record."""
    import tomllib

    from duplexeval.version import release_of

    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    hatch = table["tool"]["hatch"]["version"]
    assert hatch["source"] == "vcs"
    repo = tmp_path / "project"
    repo.mkdir()
    settings = "\n".join(f'{key} = "{value}"' for key, value in hatch.items())
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling", "hatch-vcs"]\nbuild-backend = "hatchling.build"\n'
        f'[project]\nname = "x"\ndynamic = ["version"]\n[tool.hatch.version]\n{settings}\n',
        encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "one")
    untagged = _hatchling_version(repo)
    assert ".dev1+g" in untagged and release_of(untagged) == "0.1.1"
    _git(repo, "tag", "v2.3.4")
    assert _hatchling_version(repo) == "2.3.4"
    (repo / "README").write_text("two\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "two")
    later = _hatchling_version(repo)
    assert later.startswith("2.3.5.dev1+g") and release_of(later) == "2.3.5"


def test_the_recorded_version_is_the_installed_release() -> None:
    from importlib.metadata import version

    from duplexeval.version import release_of

    assert __version__ == release_of(version("duplexeval")) != ""
