"""The HTML report end to end in headless Chromium, on scored fixture runs (``scripted`` under
the three protocols): it loads from file:// without console errors or page errors, fetches
nothing from a network, its filters change what is shown, every audio element's source and
every image exist on disk, and data is escaped.  A screenshot is kept as a test artefact."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from conftest import ModuleTemp

pytest.importorskip("matplotlib")

from browser import Elements, chromium, load, screenshot
from duplexeval.cli import main
from report_fixtures import JUDGE_REASON, make_report_runs

needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="no chromium on PATH (Debian package `chromium`; .ci/run "
    "installs it)")


@pytest.fixture(scope="module")
def report(module_tmp: ModuleTemp) -> Path:
    root = module_tmp.mktemp("html")
    runs = make_report_runs(root / "runs")
    out = root / "report"
    assert main(["report", *(str(r / "scores-truth") for r in runs), "-o", str(out),
                 "--html", "--format", "md"]) == 0
    return out / "index.html"


def _cases(dom: str) -> list[dict[str, str | None]]:
    return [a for a in Elements(dom).tags("section") if a.get("class") == "case"]


def test_the_page_is_self_contained_and_everything_it_links_exists(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    page = Elements(text)
    assert not page.tags("link"), "no external style sheet"
    # one section per benchmark, with its tables and its figures (M3's Figures 4 and 5)
    section = text[text.index("<h2>M3-DuplexBench</h2>"):]
    assert section.index("Table 5 layout") < section.index("M3 Figure 4") \
        < section.index("<h2>", 1)
    assert all("src" not in s for s in page.tags("script")), "scripts are inline"
    links = [(tag, a.get("src") or a.get("href") or "") for tag, a in page.found
             if tag in ("img", "audio", "a", "source")]
    assert not [x for x in links if "://" in x[1] or x[1].startswith("//")]
    audio = [unquote(a["src"] or "") for a in page.tags("audio")]
    assert audio and len(audio) == len(_cases(text))
    for src in audio + [unquote(a["src"] or "") for a in page.tags("img")]:
        assert (report.parent / src).is_file(), src
    assert len(page.tags("svg")) == len(_cases(text)), "an inline timeline per event"
    assert all(src.endswith(".wav") for src in audio)
    # data is shown as text, never as markup
    assert "&lt;b&gt;names&lt;/b&gt;" in text and JUDGE_REASON not in text
    assert "where was it &lt;held&gt;?" in text


@needs_chromium
def test_chromium_loads_the_report_and_the_filters_change_what_is_shown(
        report: Path, tmp_path: Path) -> None:
    started = time.perf_counter()
    everything = load(report)
    assert everything.console == [], everything.console
    page = Elements(everything.dom)
    assert page.tags("body")[0].get("data-ready") == "1", "the page's script ran to its end"
    assert not page.texts.get("page-errors", "").strip()
    cases = _cases(everything.dom)
    assert len(cases) >= 20 and not [c for c in cases if "hidden" in c]
    assert page.texts["shown-count"].startswith(f"{len(cases)} of {len(cases)}")
    for fragment, key, value in (("#verdict=fail", "data-verdict", "fail"),
                                 ("#task=pause_handling", "data-task", "pause_handling"),
                                 ("#system=scripted%20(Single)&verdict=pass", "data-system",
                                  "scripted (Single)")):
        filtered = load(report, fragment)
        assert filtered.console == []
        shown = [c for c in _cases(filtered.dom) if "hidden" not in c]
        assert 0 < len(shown) < len(cases), fragment
        assert all(c[key] == value for c in shown), fragment
    shot = screenshot(report, tmp_path / "html_report.png")
    assert shot.stat().st_size > 20_000
    print(f"chromium checks: {time.perf_counter() - started:.1f} s")
