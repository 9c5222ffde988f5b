"""The HTML report: ``OUT_DIR/index.html``, in which every scored event can be seen and heard.

``duplexeval report RUN_DIR... -o OUT_DIR --html`` writes it (the demo does, into
``runs/demo/report/``).  The page is self-contained and works offline from a ``file://`` URL:
its style and scripts are inline (:mod:`.html_assets`), no font, script or style is fetched,
and every link is relative.  It shows:

* the paper tables (Table 5; Table 6 when a system ran under several protocols) and the paired
  comparisons of ``duplexeval compare``;
* the figures (:mod:`.plots`): latency CDF, SHIFT/PAUSE TOR with Δ, round curves, and the
  side-by-side views of events scored under several protocols (at most
  :data:`MAX_SIDE_BY_SIDE` of them);
* the measures' sections (:mod:`.measure_plots`), for the scorings that have them: realism's
  overlaid system-vs-human distributions, the barge-in cost per event, pass@k and pass^k
  against k with the flips and latency spread of repeated tries, and the counterfactual paired
  effects with their intervals;
* an event browser filtering by system, task, verdict and miss type; per event its values,
  timeline, audio player, transcripts, offline content texts and judge answers with reasons.

Files written beside ``index.html``: ``figures/*.png|svg`` (summary figures) and
``side/KEY.svg`` (side-by-side views, shown as drawn).  Each event's timeline is inline SVG
(:mod:`.svg_timeline`: matplotlib would take minutes for the hundreds of events of a demo).

Audio is **linked, not copied**: each ``<audio>`` points at the run's own stereo wav by a
relative path from ``OUT_DIR`` (``events[].audio`` of the results, relative to the run
directory).  The report stays small and never duplicates audio, but it must be moved together
with the run directories (keeping their relative places); a report moved alone still shows
everything but plays nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from pathlib import Path

from matplotlib.figure import Figure

from duplexeval._fileio import atomic_write_text
from duplexeval.report._columns import protocol_name
from duplexeval.report._compare import Comparison, compare_lines
from duplexeval.report._event_cases import (
    EventCase,
    event_cases,
    matched_across_languages,
    matched_across_protocols,
)
from duplexeval.report._html_assets import BROWSER, ERROR_TRAP, FILTERS, STYLE
from duplexeval.report._html_parts import case_html, filters_html, table_html, url
from duplexeval.report._plots import (
    latency_cdf,
    mtr_feature_curves,
    realism_distributions,
    round_curves,
    save_figure,
    side_by_side,
    timeline_legend,
    tor_bars,
)
from duplexeval.report._svg_timeline import timeline_svg
from duplexeval.report._table_data import label_runs, m3_timing
from duplexeval.report._tables import RowSource, has_protocol_comparison, table5, table6
from duplexeval.results import ScoredRun, load_scored
from duplexeval.results._model import Results

__all__ = ["MAX_SIDE_BY_SIDE", "html_report_of", "measure_label", "write_html_report"]

MAX_SIDE_BY_SIDE = 30
"""Side-by-side views drawn at most (each is a figure of up to three timelines)."""

Runs = Sequence[tuple[str, Results]]
Lines = Callable[[Results], list[str]]
"""A text table of one scoring: its title line, then the table and its indented notes."""


def _figure_list(pairs: Sequence[tuple[str, Results]]) -> dict[str, list[tuple[str, Figure, str]]]:
    """The figures that apply to the runs' variants, by benchmark: M3's (the SHIFT latency
    CDF, SHIFT and PAUSE TOR, and TOR by round where rounds are known) from M3-scored runs,
    MTR's success by round per feature from ``mtr``-scored runs of labelled dialogues."""
    m3 = [(label, r) for label, r in pairs if m3_timing(r)]
    mtr = [(label, r) for label, r in pairs if r.variant.name == "mtr" and r.label_aggregates]
    figures: dict[str, list[tuple[str, Figure, str]]] = {}
    if m3:
        figures["m3"] = [("latency_cdf", latency_cdf(m3), "M3 Figure 4: SHIFT latency CDF"),
                         ("tor_shift_pause", tor_bars(m3), "M3 Figure 5: SHIFT and PAUSE TOR")]
        if any(row.round is not None for _, r in m3 for row in r.aggregates):
            figures["m3"].append(("round_curves", round_curves(m3), "TOR by round"))
    if mtr:
        figures["mtr"] = [("mtr_feature_rounds", mtr_feature_curves(mtr),
                           "MTR success by round, per feature")]
    return figures


def _figures_html(figures: Sequence[tuple[str, Figure, str]], out: Path) -> str:
    parts = []
    for name, fig, alt in figures:
        png, svg = save_figure(fig, out / "figures" / name)
        parts.append(f'<a href="{url(png, out)}"><img alt="{escape(alt)}" '
                     f'src="{url(svg, out)}"></a>')
    return '<div class="figures">' + "".join(parts) + "</div>" if parts else ""


def _benchmark_sections(runs: Sequence[tuple[str, ScoredRun]], sources: Sequence[RowSource],
                        allow_mixed: bool, out: Path,
                        measures: Sequence[tuple[str, Results]] = ()) -> str:
    """One section per benchmark the runs' variants belong to, each with its tables and the
    figures that apply (M3-DuplexBench, FLEXI, MTR-DuplexBench); rows named by system and
    protocol."""
    from duplexeval.report import _mtr_tables as mtr_tables
    from duplexeval.report._text import (
        FLEXI_COLUMNS,
        markdown_from_lines,
        timing_table_lines,
    )

    pairs = [(label, s.results) for label, s in runs]
    figures = _figure_list(pairs)
    html = ""
    if sources or "m3" in figures:
        html += ("<h2>M3-DuplexBench</h2>" + _tables(sources, allow_mixed)
                 + _figures_html(figures.get("m3", []), out))
    flexi = [(label, r) for label, r in pairs if r.variant.name == "flexi"]
    if flexi:
        lines = markdown_from_lines(timing_table_lines(flexi, columns=FLEXI_COLUMNS))
        html += "<h2>FLEXI</h2>" + _pipe_table_html(lines)
    mtr = [(f"{label} ({protocol_name(r.source.protocol)})", r) for label, r in pairs
           if r.variant.name == "mtr" and r.label_aggregates]
    if mtr:
        html += ("<h2>MTR-DuplexBench</h2>"
                 + "".join(mtr_tables.table_html(t) for t in mtr_tables.mtr_tables(mtr))
                 + _figures_html(figures.get("mtr", []), out))
    html += _measure_sections([*pairs, *measures], out)
    return html or '<p class="muted">No runs.</p>'


def _measure_sections(pairs: Sequence[tuple[str, Results]], out: Path) -> str:
    """The sections of the measures beyond the benchmarks' own, each with its table and figure:
    distributional realism (the overlaid distributions), the barge-in cost (``turnbench``
    scorings: penalty seconds per event), repeated tries (pass@k and pass^k against k, flips,
    the latency spread) and counterfactual pairs (the paired effects with their intervals)."""
    from duplexeval.report._measure_plots import bargein_cost, counterfactual_effects, pass_curves
    from duplexeval.report._text import (
        counterfactual_table_lines,
        distribution_table_lines,
        markdown_from_lines,
        stability_lines,
        variant_table_lines,
    )

    def tables(title: str, chosen: Sequence[tuple[str, Results]], lines: Lines,
               figure: tuple[str, Callable[[Runs], Figure], str]) -> str:
        if not chosen:
            return ""
        html = f"<h2>{escape(title)}</h2>"
        for label, r in chosen:
            head, *table = lines(r)
            rows = [line for line in table if not line.startswith("  ")]
            notes = [f"- {line.strip()}" for line in table if line.startswith("  ")]
            html += (f"<h3>{escape(label)} ({escape(r.variant.name)})</h3><p>{escape(head)}</p>"
                     + _pipe_table_html(markdown_from_lines([*rows, *notes])))
        name, draw, alt = figure
        return html + _figures_html([(name, draw(chosen), alt)], out)

    realism = [(label, r) for label, r in pairs if r.distributions is not None]
    cost = [(label, r) for label, r in pairs if r.variant.name == "turnbench"]
    tries = [(label, r) for label, r in pairs if r.stability is not None]
    paired = [(label, r) for label, r in pairs if r.counterfactual]
    return "".join((
        tables("Distributional realism", realism,
               lambda r: distribution_table_lines(r.distributions),  # type: ignore[arg-type]
               ("realism_distributions", realism_distributions,
                "timing distributions: system against the reference")),
        tables("TurnBench matching and barge-in cost", cost,
               lambda r: [f"turnbench rows ({r.variant.definition})",
                          *variant_table_lines(r)],
               ("bargein_cost", bargein_cost, "barge-in cost: penalty seconds per event")),
        tables("Repeated tries: pass@k, pass^k and stability", tries, stability_lines,
               ("pass_curves", pass_curves, "pass@k and pass^k against k")),
        tables("Counterfactual pairs", paired,
               lambda r: counterfactual_table_lines(r.counterfactual),
               ("counterfactual_effects", counterfactual_effects,
                "the effect of the user's act, with 95 % intervals"))))


def _pipe_table_html(lines: Sequence[str]) -> str:
    """A Markdown pipe table (header, rule, rows) and its note lines as HTML."""
    rows = [line for line in lines if line.startswith("|")]
    notes = [line for line in lines if line and not line.startswith("|")]
    cells = [[c.strip() for c in row.strip().strip("|").split(" | ")] for row in rows]
    head = "".join(f"<th>{escape(c)}</th>" for c in cells[0]) if cells else ""
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                   for row in cells[2:])
    items = "".join(f"<li>{escape(n.lstrip('- '))}</li>" for n in notes)
    return (f'<table class="results"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            f'</table><ul class="notes">{items}</ul>')


def _side_by_side(cases: Sequence[EventCase], out: Path, by_language: bool = False) -> str:
    groups = (matched_across_languages if by_language else matched_across_protocols)(cases)
    parts = []
    for group in groups[:MAX_SIDE_BY_SIDE]:
        key = "-".join(c.key for c in group[:1]) + f"-x{len(group)}" + (
            "-lang" if by_language else "")
        (svg,) = save_figure(side_by_side(group), out / "side" / key, formats=("svg",))
        links = ", ".join(f'<a href="#{escape(c.key, quote=True)}">'
                          f"{escape(c.result.language if by_language else c.protocol or c.run)}"
                          "</a>" for c in group)
        parts.append(f'<figure><img loading="lazy" alt="side by side" src="{url(svg, out)}">'
                     f"<figcaption class=\"muted\">{links}</figcaption></figure>")
    if not parts:
        what = "language" if by_language else "protocol"
        return (f'<p class="muted">No event was scored in more than one {what} by one '
                "system.</p>")
    more = len(groups) - MAX_SIDE_BY_SIDE
    tail = f'<p class="muted">{more} more not drawn.</p>' if more > 0 else ""
    return '<div class="figures">' + "".join(parts) + "</div>" + tail


def _cases(cases: Sequence[EventCase], out: Path) -> str:
    return "".join(case_html(case, timeline_svg(case),
                             url(case.audio, out) if case.audio is not None else None)
                   for case in cases)


def _tables(sources: Sequence[RowSource], allow_mixed: bool) -> str:
    if not sources:
        return ""
    html = table_html(table5(sources), "M3-DuplexBench: Table 5 layout")
    if has_protocol_comparison(sources):
        html += table_html(table6(sources, allow_mixed=allow_mixed),
                           "M3-DuplexBench: Table 6 layout")
    return html


def _comparisons(comparisons: Sequence[Comparison]) -> str:
    if not comparisons:
        return ""
    blocks = "".join(f"<h3>{escape(c.b)} vs {escape(c.a)}</h3><pre class=\"compare\">"
                     f"{escape(chr(10).join(compare_lines(c)))}</pre>" for c in comparisons)
    return f"<h2>Paired comparisons</h2>{blocks}"


def _distinct(runs: Sequence[tuple[str, ScoredRun]]) -> list[tuple[str, ScoredRun]]:
    """A label that several runs share gets the protocol added (one system under several
    protocols) or, when that is still shared, becomes the run's folder name (one system on
    several datasets)."""
    labels = [label for label, _ in runs]
    out = [f"{label} ({protocol_name(run.results.source.protocol)})"
           if labels.count(label) > 1 else label for label, run in runs]
    return [(label if out.count(label) == 1 else run.run_dir.resolve().name, run)
            for label, (_, run) in zip(out, runs, strict=True)]


def write_html_report(runs: Sequence[tuple[str, ScoredRun]], out: Path,
                      sources: Sequence[RowSource], comparisons: Sequence[Comparison] = (),
                      allow_mixed: bool = False,
                      measures: Sequence[tuple[str, Results]] = ()) -> Path:
    """Write ``out/index.html`` and its figures for ``(label, run)`` pairs; returns the page.
    ``sources`` are the runs' table rows (:func:`~.paper_tables.sources_of`); ``measures``
    more ``(label, results)`` scorings for the measures' sections (realism, barge-in cost,
    repeated tries, counterfactual pairs) alone."""
    out.mkdir(parents=True, exist_ok=True)
    runs = _distinct(runs)
    cases = [c for label, run in runs for c in event_cases(run, label)]
    (legend,) = save_figure(timeline_legend(), out / "figures" / "timeline_legend",
                            formats=("svg",))
    body = [
        "<h1>duplexeval report</h1>",
        f'<p class="muted">{len(runs)} run(s), {len(cases)} scored events. '
        "Audio is linked from the run directories (keep this folder beside them).</p>",
        '<pre id="page-errors" hidden></pre>',
        _benchmark_sections(runs, sources, allow_mixed, out, measures),
        _comparisons(comparisons),
        "<h2>The same event under several protocols</h2>", _side_by_side(cases, out),
        "<h2>The same event in English and Japanese</h2>",
        _side_by_side(cases, out, by_language=True),
        "<h2>Events</h2>", filters_html(cases),
        f'<img alt="legend" src="{url(legend, out)}">',
        _cases(cases, out),
    ]
    script = BROWSER % {"filters": "[" + ", ".join(f'"{n}"' for n in FILTERS) + "]"}
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>duplexeval report</title>"
            f"<style>{STYLE}</style><script>{ERROR_TRAP}</script></head>"
            f"<body>{''.join(body)}<script>{script}</script></body></html>\n")
    index = out / "index.html"
    atomic_write_text(index, page)
    return index


def measure_label(scored: ScoredRun) -> str:
    """A measure scoring's name in the report: its run's folder, and ``tries`` for a run
    with repeated tries or twins."""
    results = scored.results
    tries = results.stability is not None or bool(results.counterfactual)
    return f"{scored.run_dir.resolve().name}{' tries' if tries else ''}"


def html_report_of(paths: Sequence[Path], out: Path, measures: Sequence[Path] = ()) -> Path:
    """The HTML report of scored runs (run directories, scores folders or results files),
    labelled as ``duplexeval report`` labels them, without the table files or comparisons
    (the demo's report).  ``measures``: more scorings (results files of ``eval --measures``)
    shown in the measures' sections only, not among the events."""
    from duplexeval.report._paper_tables import sources_of

    scored = [load_scored(path) for path in paths]
    runs = [(s.run_dir.resolve().name, s.results) for s in scored]
    labelled = list(zip(label_runs(runs), scored, strict=True))
    extra = [(measure_label(s), s.results) for s in (load_scored(p) for p in measures)]
    return write_html_report(labelled, out, sources_of(runs, [str(s.path) for s in scored]),
                             measures=extra)
