"""The house rules that keep the layout readable: small modules and functions, and one owner
of the run directory's file names (:mod:`duplexeval.runs._directory`)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "duplexeval"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
RUN_DIR_NAMES = ("config.json", "metadata.jsonl", "run_summary.json", ".context.wav",
                 "settings.json", "inputs.json", "per_event.jsonl", "aggregate.json",
                 "results.json", "analysis-truth", "scores-truth", ".trace.json")
OWNER = PACKAGE / "runs" / "_directory.py"
OTHER_FORMATS = {
    PACKAGE / "metrics" / "_m3_metadata.py": "the official M3 pipeline's output folders",
    PACKAGE / "speech" / "_whisper_model.py": "the files of a Whisper model folder",
    PACKAGE / "peers" / "fdb" / "_io.py": "a peer re-scoring's output folder (per_sample.jsonl, "
                                     "aggregate.json)",
}
"""Modules that name files of other formats that happen to share a name."""


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_modules_and_functions_are_small() -> None:
    long_modules, long_functions = [], []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) >= MAX_MODULE_LINES:
            long_modules.append(path.relative_to(PACKAGE))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long_functions.append(f"{path.relative_to(PACKAGE)}:{node.lineno} "
                                          f"{node.name} ({length} lines)")
    assert long_modules == [] and long_functions == []


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that document (module, class, function and attribute
    docstrings: string expressions standing alone as statements)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def test_only_the_run_directory_owner_spells_its_file_names() -> None:
    """Code never spells a run-directory file name outside ``runs/_directory.py`` (documents
    may name them); a test of the test: the owner itself does."""
    found = []
    for path in _modules():
        if path == OWNER or path in OTHER_FORMATS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docs:
                found += [f"{path.relative_to(PACKAGE)}:{node.lineno} {name}"
                          for name in RUN_DIR_NAMES if name in node.value]
    assert found == []
    owner = ast.parse(OWNER.read_text(encoding="utf-8"))
    spelled = {n.value for n in ast.walk(owner) if isinstance(n, ast.Constant)
               and isinstance(n.value, str) and id(n) not in _docstrings(owner)}
    assert all(any(name in value for value in spelled) for name in RUN_DIR_NAMES)


CORE = {"__init__.py", "__main__.py", "_audio.py", "_cache.py", "_environment.py", "errors.py",
        "events.py", "_fileio.py", "registry.py", "timeline.py", "version.py"}
"""The modules the package root keeps: the core every stage imports (each stage is a package)."""
PUBLIC_MODULES = {"errors.py", "events.py", "registry.py", "timeline.py", "version.py"}
"""The root's public modules; every other module is private (a leading underscore): a package's
``__init__`` is its public surface (issue 28)."""


def test_the_root_keeps_only_the_core_and_one_module_touches_audio_files() -> None:
    assert {p.name for p in PACKAGE.glob("*.py")} == CORE
    readers = [str(path.relative_to(PACKAGE)) for path in _modules()
               if any(isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                   (alias.name if isinstance(node, ast.Import) else node.module or "")
                   .split(".")[0] == "soundfile" for alias in node.names)
                   for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))]
    assert readers == ["_audio.py"]


def test_internal_modules_are_private() -> None:
    """Outside the root's public core, every module's name starts with an underscore (the
    package's ``__init__`` re-exports what users import; ``__main__`` runs it)."""
    public = sorted(str(path.relative_to(PACKAGE)) for path in _modules()
                    if not path.name.startswith("_")
                    and not (path.parent == PACKAGE and path.name in PUBLIC_MODULES))
    assert public == [], f"modules to rename with a leading underscore: {public}"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_the_import_graph_has_no_cycles() -> None:
    """No module imports itself round a loop, counting imports inside functions and under
    ``TYPE_CHECKING`` (grimp, as import-linter reads them); a test of the test: a hand-made
    loop is found."""
    import grimp

    graph = grimp.build_graph("duplexeval")
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _cycles(edges) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
