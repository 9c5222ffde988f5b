"""Headless Chromium for the HTML report's tests: a DOM dump after the page's scripts ran, the
console messages, and a screenshot.  Debian's ``chromium`` package (``.ci/run`` installs it);
no browser is downloaded.  The network is cut off (every host resolves to nothing), so a
page that needed one would show it."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-extensions", "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
         "--virtual-time-budget=5000", "--enable-logging=stderr", "--v=0")


def chromium() -> str | None:
    """The browser program, or ``None`` when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass(frozen=True)
class Loaded:
    dom: str
    console: list[str]
    """The page's console messages (errors and logs), from Chromium's stderr."""


def load(page: Path, fragment: str = "", timeout: float = 90.0) -> Loaded:
    """The page's DOM after its scripts ran (``--dump-dom``) and its console messages."""
    program = chromium()
    assert program is not None
    run = subprocess.run([program, *FLAGS, "--dump-dom", page.resolve().as_uri() + fragment],
                         capture_output=True, text=True, timeout=timeout, check=False)
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert run.returncode == 0, run.stderr[-2000:]
    return Loaded(run.stdout, console)


def screenshot(page: Path, out: Path, timeout: float = 90.0) -> Path:
    """A PNG of the page (1280 px wide), also copied into ``$DUPLEXEVAL_TEST_ARTEFACTS``."""
    program = chromium()
    assert program is not None
    subprocess.run([program, *FLAGS, "--window-size=1280,2400", f"--screenshot={out}",
                    page.resolve().as_uri()], capture_output=True, timeout=timeout, check=True)
    folder = os.environ.get("DUPLEXEVAL_TEST_ARTEFACTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(out, Path(folder) / out.name)
    return out


class Elements(HTMLParser):
    """Start tags with their attributes, in document order."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.texts: dict[str, str] = {}
        self._open: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.found.append((tag, values))
        self._open = values.get("id")

    def handle_data(self, data: str) -> None:
        if self._open:
            self.texts[self._open] = self.texts.get(self._open, "") + data

    def handle_endtag(self, tag: str) -> None:
        self._open = None

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for tag, attrs in self.found if tag == name]
