"""The test suite stands alone: only tests named ``toy`` touch the third-party toy data.

In a fresh clone without ``../shared`` every other test must run (or skip only for a missing
optional extra or system program).  This reads the test sources: a function that asks for the
``m3_toy`` fixture, or names the toy data (``M3_TOY``, ``TOY_SETS``, a ``"shared"`` or
``"m3_toy"`` path part), must carry ``toy`` in its own or its file's name.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
TOY_NAMES = {"M3_TOY", "TOY_SETS", "m3_toy"}
TOY_STRINGS = {"shared", "m3_toy"}


def _uses_toy(fn: ast.FunctionDef) -> bool:
    if any(a.arg == "m3_toy" for a in fn.args.args):
        return True
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in TOY_NAMES:
            return True
        if isinstance(node, ast.Constant) and node.value in TOY_STRINGS:
            return True
    return False


def toy_users_not_named_toy(folder: Path) -> list[str]:
    """``file::function`` for each function using the toy data without ``toy`` in its name or
    its file's name (conftest.py, which defines the fixture, excepted)."""
    found = []
    for path in sorted(folder.glob("test_*.py")):
        if "toy" in path.name or path.name == Path(__file__).name:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and "toy" not in node.name and _uses_toy(node):
                found.append(f"{path.name}::{node.name}")
    return found


def test_only_tests_named_toy_use_the_toy_data() -> None:
    assert toy_users_not_named_toy(TESTS) == []


def test_the_check_finds_an_unnamed_toy_user(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "def test_ok_on_toy(m3_toy):\n    pass\n\n"
        "def test_hidden(m3_toy):\n    pass\n\n"
        "def fixture_reads_shared():\n    return REPO.parent / 'shared' / 'm3_toy'\n",
        encoding="utf-8")
    (tmp_path / "test_toy_y.py").write_text("def test_any(m3_toy):\n    pass\n",
                                            encoding="utf-8")
    assert toy_users_not_named_toy(tmp_path) == ["test_x.py::test_hidden",
                                                 "test_x.py::fixture_reads_shared"]
