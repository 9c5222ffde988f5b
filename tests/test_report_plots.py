"""The report's figures on scored fixture runs (``scripted`` under the three protocols): each
is drawn with every expected series (looked up on the matplotlib Figure before saving) and
written as PNG and SVG of a plausible size."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ModuleTemp

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure

from duplexeval.report import _plots as plots
from duplexeval.report._event_cases import (
    EventCase,
    event_cases,
    matched_across_languages,
    matched_across_protocols,
)
from duplexeval.results import ScoredRun, load_scored
from report_fixtures import make_report_runs


@pytest.fixture(scope="module")
def scored(module_tmp: ModuleTemp) -> list[ScoredRun]:
    runs = make_report_runs(module_tmp.mktemp("plots"))
    return [load_scored(run / "scores-truth") for run in runs]


@pytest.fixture(scope="module")
def cases(scored: list[ScoredRun]) -> list[EventCase]:
    return [c for s in scored for c in event_cases(s, s.results.source.protocol)]


def _saved(fig: Figure, stem: Path, smallest: int = 3000) -> None:
    files = plots.save_figure(fig, stem)
    assert [f.suffix for f in files] == [".png", ".svg"]
    for f in files:
        assert smallest < f.stat().st_size < 2_000_000, f
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in files[1].read_bytes()[:2000]


def _labels(fig: Figure) -> list[list[str]]:
    return [[a.get_label() for a in [*ax.lines, *ax.patches, *ax.collections]
             if not a.get_label().startswith("_")] for ax in fig.axes]


def test_latency_cdf_has_a_line_per_protocol(scored: list[ScoredRun], tmp_path: Path) -> None:
    fig = plots.latency_cdf([("scripted", s.results) for s in scored])
    (ax,) = fig.axes  # one system: one panel
    assert [line.get_label() for line in ax.lines] == ["Single", "Multi (gen)", "Multi (ref)"]
    for line, s in zip(ax.lines, scored, strict=True):
        answered, total = plots.shift_latencies(s.results)
        # the curve ends at the share of answered SHIFT events (the TOR)
        assert line.get_ydata()[-1] == pytest.approx(len(answered) / total)
    _saved(fig, tmp_path / "cdf")


def test_tor_bars_have_two_bars_and_a_delta_per_run(scored: list[ScoredRun],
                                                    tmp_path: Path) -> None:
    fig = plots.tor_bars([(s.results.source.protocol, s.results) for s in scored])
    (ax,) = fig.axes
    bars = [p for p in ax.patches if p.get_label() in ("SHIFT TOR", "PAUSE TOR")] or [
        p for c in ax.containers for p in c]
    assert len(bars) == 2 * len(scored)
    assert [c.get_label() for c in ax.containers] == ["SHIFT TOR", "PAUSE TOR"]
    assert sum(t.get_text().startswith("Δ ") for t in ax.texts) == len(scored)
    _saved(fig, tmp_path / "tor")


def test_round_curves_draw_a_line_per_run_with_rounds(scored: list[ScoredRun],
                                                      tmp_path: Path) -> None:
    fig = plots.round_curves([(s.results.source.protocol, s.results) for s in scored])
    shift, _pause = fig.axes
    with_rounds = [s for s in scored if any(r.round for r in s.results.aggregates
                                            if r.event_type == "TURN_SHIFT")]
    assert with_rounds, "the fixture's events carry rounds"
    assert len(shift.lines) == len(with_rounds)
    assert all(line.get_label().startswith("scripted") for line in shift.lines)
    assert all(len(line.get_xdata()) >= 1 for line in shift.lines)
    _saved(fig, tmp_path / "rounds")


def test_event_timeline_draws_both_channels_window_span_and_detection(
        cases: list[EventCase], tmp_path: Path) -> None:
    case = next(c for c in cases if c.result.dimension == "smooth_turn_taking"
                and c.verdict == "pass" and c.protocol == "multi-gen")
    fig = plots.event_timeline(case)
    (labels,) = _labels(fig)
    assert {"user speech", "system speech", "event", "scoring window",
            "detected"} <= set(labels)
    assert "pass" in fig.axes[0].get_title()
    _saved(fig, tmp_path / "timeline")
    plain = plots.event_timeline(case, legend=False)
    assert plain.axes[0].get_legend() is None
    _saved(plots.timeline_legend(), tmp_path / "legend", smallest=500)


def test_side_by_side_shades_the_context_of_the_multi_turn_protocols(
        cases: list[EventCase], tmp_path: Path) -> None:
    groups = matched_across_protocols(cases)
    group = next(g for g in groups if len(g) == 3)
    assert [c.protocol for c in group] == ["single", "multi-gen", "multi-ref"]
    fig = plots.side_by_side(group)
    labels = _labels(fig)
    assert len(labels) == 3
    assert "context" not in labels[0]  # Single hears no context
    assert "context" in labels[1] and "context" in labels[2]
    for row in labels:
        assert {"event", "scoring window", "system speech"} <= set(row)
    assert [ax.get_xlim() for ax in fig.axes[1:]] == [fig.axes[0].get_xlim()] * 2
    _saved(fig, tmp_path / "side")


def test_the_inline_svg_timeline_draws_the_same_series(cases: list[EventCase]) -> None:
    from xml.etree import ElementTree

    from duplexeval.report._svg_timeline import timeline_svg

    for case in cases:
        svg = ElementTree.fromstring(timeline_svg(case))
        tips = [r.findtext("title") or "" for r in svg.iter("rect")]
        expected = len(case.segments) + 2 + (case.context is not None) + (
            case.detected is not None)
        assert len(tips) == expected
        assert sum(t.startswith(("user ", "system ")) for t in tips) == len(case.segments)
        assert any(t.startswith("scoring window") for t in tips)
        assert case.verdict in "".join(svg.itertext())


def test_the_same_event_in_english_and_japanese_side_by_side(cases: list[EventCase],
                                                             tmp_path: Path) -> None:
    """A translated suite keeps dialogue ids and events, so the event ids match across
    languages; the pairs are drawn English first, one row each, titled with the language."""
    from dataclasses import replace

    english = [c for c in cases if c.protocol == "multi-gen"][:3]
    japanese = [replace(c, result=c.result.model_copy(update={"language": "ja"}))
                for c in english]
    english = [replace(c, result=c.result.model_copy(update={"language": "en"}))
               for c in english]
    groups = matched_across_languages([*japanese, *english])
    assert len(groups) == 3 and all([c.result.language for c in g] == ["en", "ja"]
                                    for g in groups)
    assert matched_across_languages(english) == []
    fig = plots.side_by_side(groups[0])
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert " · en · " in titles[0] and " · ja · " in titles[1]
    _saved(fig, tmp_path / "languages")


def test_realism_distributions_overlay_the_two_sides_per_feature(
        scored: list[ScoredRun], tmp_path: Path) -> None:
    """One row per realism-scored run, one panel per feature, the ``reference`` and ``system``
    stairs each summing to 1 over the bins; runs without the section are left out."""
    from duplexeval.metrics._distributions import compare_distributions

    timelines = {"d": [{"fto": [0.2, 0.4, 1.0], "pause": [0.6], "turn_length": [2.0]}]}
    shifted = {"d": [{"fto": [1.2, 1.4, 2.0], "pause": [0.6], "turn_length": [4.0]}]}
    found = compare_distributions(shifted, timelines, "the reference", resamples=50)
    base = scored[0].results
    runs = [("plain", base), ("realism", base.model_copy(update={"distributions": found}))]
    fig = plots.realism_distributions(runs)
    assert len(fig.axes) == len(found.features)  # one row: the plain run has no section
    fto = fig.axes[0]
    assert [a.get_label() for a in fto.patches] == ["reference", "system"]
    for stairs in fto.patches:
        assert sum(stairs.get_data().values) == pytest.approx(1.0)
    assert "KS 1.00" in fto.get_title() and "W 1.00" in fto.get_title()
    _saved(fig, tmp_path / "realism")
    assert len(plots.realism_distributions(runs[:1]).axes) == 1  # "no realism-scored runs"
