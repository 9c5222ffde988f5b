"""The documentation: the site builds with ``mkdocs build --strict`` (no warning), no link in it
is broken, its search works in headless Chromium, the CLI reference is what the parsers say,
and the tutorial's and the README's code runs as written.

The tutorial (``docs/getting-started/your-system.md``) and the README run on the M3 benchmark;
here the benchmark name ``m3`` in their code is replaced by a one-cell declaration of it
(``m3-qa-en``'s first dialogue under Multi (gen), and the Multi (ref) cell the tutorial's system
skips), so the test takes seconds; everything else is their text as written.

The browser is Debian's ``chromium`` (``.ci/run`` installs it; the test skips without it),
driven over the DevTools protocol on loopback with the ``websockets`` client; nothing is
downloaded.
"""

from __future__ import annotations

import contextlib
import http.server
import importlib.util
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from browser import Elements, chromium
from conftest import ModuleTemp
from duplexeval.benchmarks import BENCHMARKS, Benchmark, Cell
from duplexeval.benchmarks._m3 import M3
from duplexeval.cli import main
from duplexeval.plan import EvalProtocol

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "getting-started" / "your-system.md"
MKDOCS = Path(sys.executable).with_name("mkdocs")


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# -- the CLI reference ----------------------------------------------------------------------

def test_the_cli_reference_is_what_the_parsers_say() -> None:
    cli_reference = _script("cli_reference")
    assert cli_reference.PAGE.read_text(encoding="utf-8") == cli_reference.render(), (
        "docs/reference/cli.md is stale: run .venv/bin/python scripts/cli_reference.py")


def test_the_cli_reference_names_every_subcommand_and_option() -> None:
    import argparse

    from duplexeval.cli import build_parser

    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[Any]:
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, (*path, name))

    for path, parser in walk(build_parser(), ()):
        heading = f"`{' '.join(('duplexeval', *path))}`"
        assert re.search(rf"^#+ {re.escape(heading)}$", page, re.M), heading
        section = page.split(heading, 1)[1]
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section, f"{heading} lacks {option}"


# -- the reST idioms of the docstrings, as Markdown -----------------------------------------

def test_the_docstring_idioms_become_markdown() -> None:
    rst = _script("griffe_rst").rst_to_markdown
    text = ("Title\n-----\nSee :func:`~duplexeval.runs.open_run` and :data:`TOL`.\n\n"
            "A timeline::\n\n    user  uuuu|\n      model MM\n\nAfter.\n\n"
            "====  ====\nkind  time\n====  ====\nBC    [a, b]\n====  ====\n"
            "a pause\n> 0.5 s\n")
    assert rst(text).splitlines() == [
        "**Title**", "See `open_run` and `TOL`.", "", "A timeline:", "", "```text",
        "user  uuuu|", "  model MM", "```", "", "After.", "",
        "```text", "====  ====", "kind  time", "====  ====", "BC    [a, b]", "====  ====", "```",
        "a pause", "\\> 0.5 s"]


# -- the built site -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(module_tmp: ModuleTemp) -> Path:
    """The site, built as ``make docs`` builds it (``--strict``), into a temporary folder."""
    out = module_tmp.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([str(MKDOCS), "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    assert "WARNING" not in log, log[-4000:]
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


def test_the_site_has_every_page_of_the_nav(site: Path) -> None:
    names = {p.relative_to(site).as_posix() for p in _pages(site)}
    assert {"index.html", "getting-started/your-system.html", "concepts/metrics.html",
            "reference/cli.html", "reference/api.html", "measurements/index.html",
            "changelog.html"} <= names
    # the concepts come from the docstrings: the ASCII timelines are there, as code
    metrics = (site / "concepts" / "metrics.html").read_text(encoding="utf-8")
    assert "Smooth turn-taking (TURN_SHIFT" in metrics and "<code>user  uuuuuuuuuuuuu|" in metrics
    api = (site / "reference" / "api.html").read_text(encoding="utf-8")
    for anchor in ("duplexeval.benchmarks.evaluate", "duplexeval.runs.open_run",
                   "duplexeval.results.load", "duplexeval.systems.System"):
        assert f'id="{anchor}"' in api, anchor


def test_no_link_of_the_site_is_broken(site: Path) -> None:
    """Every relative ``href`` and ``src`` names a file of the site, and every fragment an id
    of the page it points to; external links are only the few the pages cite."""
    ids: dict[Path, set[str]] = {}

    def ids_of(page: Path) -> set[str]:
        if page not in ids:
            found = Elements(page.read_text(encoding="utf-8")).found
            ids[page] = {str(a["id"]) for _, a in found if a.get("id")}
            ids[page] |= {str(a["name"]) for tag, a in found if tag == "a" and a.get("name")}
        return ids[page]

    broken, external = [], set()
    for page in _pages(site):
        for tag, attrs in Elements(page.read_text(encoding="utf-8")).found:
            for key in ("href", "src"):
                link = attrs.get(key)
                if not link or (tag == "link" and attrs.get("rel") == "canonical"):
                    continue
                parts = urlsplit(link)
                if parts.scheme in ("http", "https"):
                    external.add(f"{parts.scheme}://{parts.netloc}")
                    continue
                if parts.scheme in ("mailto", "data", "javascript"):
                    continue
                target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
                if target.is_dir():
                    target = target / "index.html"
                where = f"{page.relative_to(site)}: {link}"
                if not target.is_file():
                    broken.append(f"{where} (no file)")
                elif parts.fragment and target.suffix == ".html" and (
                        unquote(parts.fragment) not in ids_of(target)):
                    broken.append(f"{where} (no id)")
    assert not broken, "\n".join(broken)
    assert external <= {"https://keepachangelog.com", "https://semver.org",
                        "https://squidfunk.github.io", "https://www.mkdocs.org"}, external


class _Quiet(http.server.SimpleHTTPRequestHandler):
    statuses: list[tuple[str, int]]

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.statuses.append((self.path, int(code)))


@pytest.fixture
def served(site: Path) -> Iterator[tuple[str, list[tuple[str, int]]]]:
    """The site over HTTP on loopback (the search index is fetched, which ``file://`` forbids),
    with every request's path and status."""
    statuses: list[tuple[str, int]] = []
    handler = type("Handler", (_Quiet,), {"statuses": statuses})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: handler(*a, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", statuses
    finally:
        server.shutdown()
        server.server_close()


class DevTools:
    """One page of a headless Chromium, driven over the DevTools protocol."""

    def __init__(self, program: str, profile: Path) -> None:
        from websockets.sync.client import connect

        self.process = subprocess.Popen(
            [program, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--remote-debugging-port=0",
             "--remote-debugging-address=127.0.0.1", f"--user-data-dir={profile}",
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        address = None
        deadline = time.monotonic() + 60
        while address is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on ws://([\d.:]+)/", line)
            if found:
                address = found[1]
            elif not line and self.process.poll() is not None:
                break
        assert address is not None, "chromium did not start its DevTools endpoint"
        with urllib.request.urlopen(f"http://{address}/json/list", timeout=10) as answer:
            pages = [t for t in json.load(answer) if t["type"] == "page"]
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(connect(pages[0]["webSocketDebuggerUrl"],
                                                    max_size=None))
        self._id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == self._id:
                assert "error" not in message, message
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && !!document.querySelector('.md-content')")

    def wait(self, condition: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(condition)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {condition}")

    def close(self) -> None:
        self._stack.close()
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.mark.skipif(chromium() is None,
                    reason="no chromium (Debian's package; .ci/run installs it)")
def test_the_site_in_chromium_searches_and_loads_every_page(
        site: Path, served: tuple[str, list[tuple[str, int]]], tmp_path: Path) -> None:
    base, statuses = served
    program = chromium()
    assert program is not None
    browser = DevTools(program, tmp_path / "profile")
    try:
        browser.call("Page.enable")
        browser.open(f"{base}/index.html")
        # the search: type a query as a reader does, wait for the worker's results
        browser.evaluate("""(() => {
            const input = document.querySelector('[data-md-component=search-query]');
            input.focus(); input.value = 'barge-in';
            for (const kind of ['input', 'keyup'])
                input.dispatchEvent(new Event(kind, {bubbles: true}));
        })()""")
        count = browser.wait("document.querySelectorAll('.md-search-result__item').length")
        meta = browser.evaluate("document.querySelector('.md-search-result__meta').textContent")
        assert count > 0 and "matching" in meta, meta
        links = browser.evaluate("""[...document.querySelectorAll('.md-search-result__link')]
                                      .map(a => a.href)""")
        assert any("metrics.html" in link or "events.html" in link for link in links), links
        # every page loads with every resource it asks for, and its navigation links resolve
        for page in _pages(site):
            browser.open(f"{base}/{page.relative_to(site).as_posix()}")
    finally:
        browser.close()
    missing = sorted({path for path, status in statuses if status >= 400})
    assert not missing, missing
    assert len({path for path, _ in statuses}) > len(_pages(site))


# -- the tutorial and the README, as written ------------------------------------------------

TINY = Benchmark(
    name="m3-docs", version="0", title="M3-DuplexBench (one cell)", seed="the docs' test",
    cells=(Cell("m3-qa-en", EvalProtocol.MULTI_GEN, "m3", content_events=()),
           Cell("m3-qa-en", EvalProtocol.MULTI_REF, "m3", content_events=())),
    write_tables=M3.write_tables)


@pytest.fixture
def tiny_m3() -> Iterator[str]:
    BENCHMARKS.add(TINY.name, TINY)
    yield TINY.name
    BENCHMARKS.remove(TINY.name)


def _files(markdown: str) -> dict[str, str]:
    """The page's code blocks that carry a file name (```` ```python title="mybot.py" ````)."""
    return dict(re.findall(r'```python title="([^"]+)"\n(.*?)```', markdown, re.S))


def _on_tiny(code: str, name: str) -> str:
    replaced = code.replace('["m3"]', f'["{name}"]').replace('cells["m3"]', f'cells["{name}"]')
    assert replaced != code
    return replaced


def test_the_tutorial_scores_its_system_as_written(
        tiny_m3: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    page = TUTORIAL.read_text(encoding="utf-8")
    files = _files(page)
    assert set(files) == {"mybot.py", "scores.py"}
    (tmp_path / "mybot.py").write_text(files["mybot.py"], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    # the console script's sys.path: the current folder is not on it unless PYTHONPATH says so
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(ROOT), ".")])
    # step 2: the commands of its bash block, with the one-cell benchmark for m3
    block = re.search(r"## 2\. Run the benchmark\n\n```bash\n(.*?)```", page, re.S)
    assert block is not None
    commands = [shlex.split(line) for line in block[1].splitlines() if line.strip()]
    ran = []
    for command in commands:
        env = dict(word.split("=", 1) for word in command if re.match(r"^[A-Z_]+=", word))
        words = [word for word in command if not re.match(r"^[A-Z_]+=", word)]
        assert words[0] == ".venv/bin/duplexeval" and set(env) <= {"PYTHONPATH"}, command
        with monkeypatch.context() as scope:
            for folder in reversed(env.get("PYTHONPATH", "").split(os.pathsep)):
                if folder:
                    scope.syspath_prepend(str((tmp_path / folder).resolve()))
            args = [tiny_m3 if a == "m3" else a for a in words[1:]]
            assert main(args) == 0, command
            sys.modules.pop("mybot", None)
        ran.append(words[1])
    assert ran == ["eval", "verify"]
    printed = capsys.readouterr().out
    assert "1 of 2 cells run" in printed and "needs teacher forcing" in printed
    assert "all hold" in printed
    # step 3: `python scores.py`, which finds mybot.py beside it, as Python puts the script's
    # folder first on sys.path (evaluate resumes the bundle: nothing to run)
    monkeypatch.syspath_prepend(str(tmp_path))
    runpy.run_path(_write(tmp_path / "scores.py", _on_tiny(files["scores.py"], tiny_m3)),
                   run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    shift = [line.split() for line in lines if "TURN_SHIFT tor ↑" in line]
    assert shift and shift[0][0] == "m3-qa-en-multi-gen" and float(shift[0][4]) > 0.5, lines
    assert any("skipped" in line for line in lines)


def test_the_readme_snippet_runs_as_written(
        tiny_m3: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    block = re.search(r"## From Python\n\n```python\n(.*?)```", readme, re.S)
    assert block is not None
    monkeypatch.chdir(tmp_path)
    runpy.run_path(_write(tmp_path / "snippet.py", _on_tiny(block[1], tiny_m3)),
                   run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("m3-qa-en-multi-gen scripted ") and lines[-1] == "True", lines


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- the Measurements pages -----------------------------------------------------------------

def test_every_measurement_names_a_script_that_exists() -> None:
    """Each page names the ``perf/`` scripts its figures come from; a generated block (filled
    by ``scripts/measure.py``) carries its command, date, commit and machine."""
    measure = _script("measure")
    pages = sorted((ROOT / "docs" / "measurements").glob("*.md"))
    assert len(pages) >= 7
    blocks = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        scripts = set(re.findall(r"perf/\w+\.py", text))
        assert scripts, f"{page.name} names no perf/ script"
        for script in scripts:
            assert (ROOT / script).is_file(), f"{page.name}: {script} does not exist"
        for block in measure.BLOCK.finditer(text):
            blocks += 1
            body = block["body"]
            assert body.startswith(f"`{block['command']}`, run on "), body[:200]
            assert re.search(r"UTC at commit [0-9a-f]{7,}", body) and " cores" in body, body[:300]
            assert "```text\n" in body, body[:300]
    assert blocks >= 1
