"""The figures of a report, drawn with matplotlib (Agg, no display) and saved as PNG and SVG.

Summary figures, from results files (one ``(label, Results)`` per run):

* :func:`latency_cdf` - M3 Figure 4: the cumulative proportion of SHIFT events answered within
  a latency, one panel per system, one line per protocol.  The denominator is every scored
  SHIFT event, so a curve levels off at the system's TOR (events never answered never count).
* :func:`tor_bars` - M3 Figure 5: SHIFT TOR and PAUSE TOR bars per system and protocol, with
  their difference Δ = SHIFT - PAUSE (percentage points) written above; a larger Δ separates
  turn ends from held pauses better.
* :func:`round_curves` - SHIFT TOR (higher is better) and PAUSE TOR (lower is better) per user
  round of M3-scored runs, from the results' per-round aggregates.
* :func:`mtr_feature_curves` - MTR's success by round per feature, from the rows per dialogue
  label of ``mtr``-scored runs.
* :func:`realism_distributions` - distributional realism: per ``realism``-scored run (a row) and
  timing feature (a column), the system's and the reference's histograms overlaid over the
  feature's bins (each normalised to proportions), the KS, Wasserstein and JS distances in the
  panel title (:mod:`duplexeval.metrics._distributions`).

Runs are named ``system protocol`` (:func:`run_names`), or by their label where that is shared.

Event figures, from :class:`~.event_cases.EventCase` (dialogue seconds):

* :func:`event_timeline` - two channels (user above, system below), the event span, the
  scoring window, the system segment the metric detected and the verdict in the title.
* :func:`side_by_side` - the same event under several protocols, one timeline per protocol
  on a shared axis, the context region (heard before the input) shaded grey, as the seed's
  Figure 3 draws it.

Every artist that is a series carries a ``label`` (the tests look them up before saving).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from duplexeval.report._columns import (
    PAUSE_TOR,
    SHIFT_TOR,
    MetricColumn,
    protocol_name,
    protocol_order,
    protocol_title,
)
from duplexeval.report._event_cases import EventCase
from duplexeval.results._model import Results

__all__ = ["FORMATS", "TIMELINE_KEYS", "event_timeline", "latency_cdf", "mtr_feature_curves",
           "realism_distributions", "round_curves",
           "run_names", "save_figure", "side_by_side", "timeline_legend", "tor_bars"]

FORMATS = ("png", "svg")
USER, SYSTEM = "#1f77b4", "#ff7f0e"
VERDICT_COLOURS = {"pass": "#2ca02c", "fail": "#d62728", "none": "#555555",
                   "unscored": "#999999"}

Runs = Sequence[tuple[str, Results]]


_SAVING = threading.Lock()


def save_figure(fig: Figure, stem: Path, formats: Sequence[str] = FORMATS,
                dpi: int = 100) -> list[Path]:
    """Write ``stem.png``, ``stem.svg`` (the ``formats``); returns the files."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    out = []
    # a fixed salt for the SVG element ids (matplotlib draws a random one by default), so that
    # one figure gives one file; rcParams are the process's, so two threads saving at once
    # (the demo's rows side by side) take turns, or one's exit would unset the other's salt
    with _SAVING, matplotlib.rc_context({"svg.hashsalt": "duplexeval"}):
        for ext in formats:
            path = stem.with_name(f"{stem.name}.{ext}")
            fig.savefig(path, format=ext, dpi=dpi, bbox_inches="tight",
                        metadata={"Date": None} if ext == "svg" else None)
            out.append(path)
    return out


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777777")
    ax.set_xticks([])
    ax.set_yticks([])


def _by_system(runs: Runs) -> dict[str, list[tuple[str, Results]]]:
    out: dict[str, list[tuple[str, Results]]] = {}
    for label, results in runs:
        out.setdefault(results.source.system or label, []).append((label, results))
    for group in out.values():
        group.sort(key=lambda r: protocol_order(r[1].source.protocol))
    return out


def run_names(runs: Runs) -> list[str]:
    """A name per run for legends and axes: ``system protocol`` (``cascade Gen.``), or the
    run's label where that name is shared (one system on several datasets)."""
    names = [f"{results.source.system or label} {protocol_title(results.source.protocol)}"
             .strip() for label, results in runs]
    return [name if names.count(name) == 1 else label
            for name, (label, _) in zip(names, runs, strict=True)]


def shift_latencies(results: Results) -> tuple[list[float], int]:
    """The answered SHIFT latencies (sorted) and the number of scored SHIFT events."""
    values = [e.values.get("latency ↓") for e in results.events
              if e.dimension == "smooth_turn_taking" and e.values.get("tor ↑") is not None]
    answered = sorted(float(v) for v in values if v is not None)
    return answered, len(values)


def latency_cdf(runs: Runs, max_latency: float = 5.0) -> Figure:
    """M3 Figure 4 (see the module docstring); lines are labelled with the protocol."""
    systems = _by_system(runs)
    fig = Figure(figsize=(3.2 * max(len(systems), 1), 3.0))
    axes = fig.subplots(1, max(len(systems), 1), squeeze=False)[0]
    if not systems:
        _empty(axes[0], "no runs")
    for ax, (system, group) in zip(axes, systems.items(), strict=False):
        drawn = False
        for label, results in group:
            answered, total = shift_latencies(results)
            if total == 0:
                continue
            xs = [min(0.0, answered[0]) if answered else 0.0, *answered, max_latency]
            ys = [0.0, *[(i + 1) / total for i in range(len(answered))],
                  len(answered) / total]
            protocols = [r.source.protocol for _, r in group]
            name = protocol_name(results.source.protocol)
            ax.step(xs, ys, where="post",
                    label=name if protocols.count(results.source.protocol) == 1 else label)
            drawn = True
        ax.set_title(system, fontsize=10)
        ax.set_xlim(min(0.0, ax.get_xlim()[0]), max_latency)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("SHIFT latency (s)")
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=8, loc="lower right")
        else:
            _empty(ax, "no SHIFT events")
    axes[0].set_ylabel("cumulative proportion")
    fig.tight_layout()
    return fig


def _proportions(values: Sequence[float], edges: Sequence[float]) -> list[float]:
    """The share of ``values`` in each bin of ``edges`` (clipped into the end bins)."""
    lo, hi = edges[0], edges[-1]
    counts = [0] * (len(edges) - 1)
    for v in values:
        v = min(max(v, lo), hi)
        i = next((k for k in range(len(counts)) if v < edges[k + 1]), len(counts) - 1)
        counts[i] += 1
    total = sum(counts)
    return [c / total for c in counts] if total else [0.0] * len(counts)


def realism_distributions(runs: Runs) -> Figure:
    """Distributional realism (see the module docstring): lines labelled ``system`` and
    ``reference``."""
    rows = [(name, r) for name, (_, r) in zip(run_names(runs), runs, strict=True)
            if r.distributions is not None]
    columns = max((len(r.distributions.features) for _, r in rows
                   if r.distributions is not None), default=1)
    fig = Figure(figsize=(2.8 * columns, 2.4 * max(len(rows), 1)))
    axes = fig.subplots(max(len(rows), 1), columns, squeeze=False)
    if not rows:
        _empty(axes[0][0], "no realism-scored runs")
        return fig
    for line, (name, results) in zip(axes, rows, strict=True):
        assert results.distributions is not None
        for ax, f in zip(line, results.distributions.features, strict=False):
            if not f.bins or not (f.system or f.reference):
                _empty(ax, f"{f.feature}: no values")
                continue
            for values, label, colour in ((f.reference, "reference", USER),
                                          (f.system, "system", SYSTEM)):
                shares = _proportions(values, f.bins)
                ax.stairs(shares, f.bins, label=label, color=colour, linewidth=1.4)
            ks = "-" if f.ks.value is None else f"{f.ks.value:.2f}"
            emd = "-" if f.wasserstein.value is None else f"{f.wasserstein.value:.2f}"
            js = "-" if f.js.value is None else f"{f.js.value:.2f}"
            ax.set_title(f"{name}: {f.feature}\nKS {ks}  W {emd}  JS {js}", fontsize=8)
            ax.set_xlabel(f.unit, fontsize=7)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
        line[0].set_ylabel("proportion", fontsize=8)
        line[0].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def _aggregate(results: Results, column: MetricColumn, round_: int | None = None
               ) -> float | None:
    for row in results.aggregates:
        if (row.language, row.domain, row.event_type, row.metric, row.round) == (
                "all", "all", column.event_type, column.metric, round_) and row.mean is not None:
            return row.mean * column.scale
    return None


def tor_bars(runs: Runs) -> Figure:
    """M3 Figure 5 (see the module docstring): bars labelled ``SHIFT TOR`` and ``PAUSE TOR``
    (one of each per run), Δ as text above each pair."""
    names = [name.replace(" ", "\n", 1) for name in run_names(runs)]
    fig = Figure(figsize=(max(3.0, 1.3 * len(runs) + 1.0), 3.2))
    ax = fig.subplots()
    if not runs:
        _empty(ax, "no runs")
        return fig
    shift = [_aggregate(r, SHIFT_TOR) for _, r in runs]
    pause = [_aggregate(r, PAUSE_TOR) for _, r in runs]
    xs = list(range(len(runs)))
    width = 0.38
    ax.bar([x - width / 2 for x in xs], [v or 0.0 for v in shift], width, label="SHIFT TOR",
           color="#4c72b0")
    ax.bar([x + width / 2 for x in xs], [v or 0.0 for v in pause], width, label="PAUSE TOR",
           color="#dd8452")
    for x, s, p in zip(xs, shift, pause, strict=True):
        text = f"Δ {s - p:.1f}" if s is not None and p is not None else "Δ –"
        ax.text(x, max(s or 0.0, p or 0.0) + 2, text, ha="center", fontsize=8)
    ax.set_xticks(xs, names, fontsize=7, rotation=30 if len(runs) > 6 else 0,
                  ha="right" if len(runs) > 6 else "center")
    ax.set_ylim(0, 130)
    ax.set_ylabel("TOR (%)")
    ax.legend(fontsize=8, loc="upper right", ncols=2)
    fig.tight_layout()
    return fig


def round_curves(runs: Runs) -> Figure:
    """Success by user round (see the module docstring): one panel per metric, one line per
    run, labelled with the run's system and protocol."""
    fig = Figure(figsize=(9.0, 3.0))
    axes = fig.subplots(1, 2, squeeze=False)[0]
    for ax, column, title in ((axes[0], SHIFT_TOR, "SHIFT TOR ↑"),
                              (axes[1], PAUSE_TOR, "PAUSE TOR ↓")):
        drawn = False
        for name, (_, results) in zip(run_names(runs), runs, strict=True):
            points = [(row.round, row.mean * column.scale) for row in results.aggregates
                      if row.round is not None and row.mean is not None
                      and (row.event_type, row.metric) == (column.event_type, column.metric)]
            if not points:
                continue
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
            drawn = True
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("user round")
        if drawn:
            ax.set_ylim(-5, 105)
            ax.set_ylabel("%")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        else:
            _empty(ax, "no per-round aggregates")
    fig.tight_layout()
    return fig


MTR_FEATURES = (("smooth", "smooth_turn_taking", "Smooth turn-taking"),
                ("interruption", "interruption", "Interruption"),
                ("pause", "pause_handling", "Pause handling"),
                ("background", "background", "Background speech"))
"""(label, dimension, title) of MTR's features, as :mod:`.mtr_tables` reads them."""


def mtr_feature_curves(runs: Runs) -> Figure:
    """MTR's success by round per feature (higher is better), from each run's rows per
    dialogue label (``label_aggregates``: the dialogues of that feature only); one panel per
    feature, one line per run, the legend beside the last panel."""
    fig = Figure(figsize=(12.0, 3.0))
    axes = fig.subplots(1, len(MTR_FEATURES), squeeze=False)[0]
    names = run_names(runs)
    for ax, (label, dimension, title) in zip(axes, MTR_FEATURES, strict=True):
        drawn = False
        for name, (_, results) in zip(names, runs, strict=True):
            points = sorted((row.round, row.mean * 100.0) for row in results.label_aggregates
                            if row.label == label and row.dimension == dimension
                            and row.metric == "success ↑" and row.round is not None
                            and row.mean is not None)
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
                drawn = True
        ax.set_title(f"{title} ↑", fontsize=10)
        ax.set_xlabel("round")
        if drawn:
            ax.set_ylim(-5, 105)
            ax.grid(alpha=0.3)
        else:
            _empty(ax, "no dialogue of this feature")
    axes[0].set_ylabel("success %")
    handles, labels = next(((h, lab) for h, lab in (a.get_legend_handles_labels() for a in axes)
                            if h), ([], []))
    if handles:
        axes[-1].legend(handles, labels, fontsize=6, loc="upper left",
                        bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def _draw_case(ax: Axes, case: EventCase, xlim: tuple[float, float]) -> None:
    """One timeline on ``ax``: user row at y=1, system row at y=0."""
    if case.context is not None:
        ax.axvspan(*case.context, color="#bbbbbb", alpha=0.5, label="context")
    start, end = case.span
    ax.axvspan(start, max(end, start + 0.02), color="#9467bd", alpha=0.25, label="event")
    w0, w1 = case.window
    ax.broken_barh([(w0, max(w1 - w0, 0.02))], (-0.45, 0.1), color="#7f7f7f",
                   label="scoring window")
    for channel, y, colour, name in ((0, 1, USER, "user speech"), (1, 0, SYSTEM,
                                                                     "system speech")):
        bars = [(s.start, max(s.end - s.start, 0.01)) for s in case.segments
                if s.channel == channel]
        if bars:
            ax.broken_barh(bars, (y - 0.3, 0.6), color=colour, label=name)
    if case.detected is not None:
        a, b = case.detected
        ax.broken_barh([(a, max(b - a, 0.01))], (-0.3, 0.6), facecolor="none",
                       edgecolor="black", linewidth=1.5, label="detected")
    ax.set_xlim(*xlim)
    ax.set_ylim(-0.6, 1.5)
    ax.set_yticks([0, 1], ["system", "user"])
    ax.grid(axis="x", alpha=0.3)


def _title(case: EventCase) -> str:
    r = case.result
    miss = f" ({case.miss_type})" if case.miss_type not in ("", "none") else ""
    language = f" · {r.language}" if r.language else ""
    return (f"{case.run} · {protocol_name(case.protocol)}{language} · {r.event_type} · "
            f"{case.verdict}{miss}")


def _limits(cases: Sequence[EventCase]) -> tuple[float, float]:
    lo = min(min(c.context[0] if c.context else c.input_start, c.span[0] - 1.0)
             for c in cases)
    hi = max(max(c.input_end, c.span[1] + 1.0) for c in cases)
    return lo, hi


def event_timeline(case: EventCase, legend: bool = True) -> Figure:
    """The two-channel timeline of one event (see the module docstring).  Without ``legend``
    the layout is fixed (no legend, no layout pass): the report draws hundreds of these and
    shows one legend (:func:`timeline_legend`) for all."""
    fig = Figure(figsize=(8.0, 1.9) if legend else (6.4, 1.6))
    ax = fig.subplots()
    lo = case.input_start - 0.5 if case.context is not None else case.input_start
    _draw_case(ax, case, (min(lo, case.span[0] - 1.0), case.input_end))
    ax.set_title(_title(case), fontsize=9, color=VERDICT_COLOURS.get(case.verdict, "black"))
    ax.set_xlabel("dialogue time (s)", fontsize=8)
    ax.tick_params(labelsize=8)
    if legend:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        fig.tight_layout()
    else:
        fig.subplots_adjust(left=0.09, right=0.99, bottom=0.26, top=0.85)
    return fig


TIMELINE_KEYS = (("context", "#bbbbbb"), ("event", "#9467bd"), ("scoring window", "#7f7f7f"),
                 ("user speech", USER), ("system speech", SYSTEM), ("detected", "none"))
"""The timeline's series, in legend order, with their colours."""


def timeline_legend() -> Figure:
    """The legend of :func:`event_timeline` alone (one per report)."""
    from matplotlib.patches import Patch

    fig = Figure(figsize=(6.4, 0.35))
    handles = [Patch(facecolor=colour, edgecolor="black" if colour == "none" else colour,
                     alpha=0.5 if name in ("context", "event") else 1.0, label=name)
               for name, colour in TIMELINE_KEYS]
    fig.legend(handles=handles, loc="center", ncols=len(handles), fontsize=7, frameon=False)
    return fig


def side_by_side(cases: Sequence[EventCase]) -> Figure:
    """The same event under each case's protocol (see the module docstring): one row each,
    titled with the protocol, on a shared dialogue-time axis."""
    fig = Figure(figsize=(8.0, 1.6 * max(len(cases), 1) + 0.4))
    axes = fig.subplots(max(len(cases), 1), 1, squeeze=False, sharex=True)[:, 0]
    if not cases:
        _empty(axes[0], "no events")
        return fig
    xlim = _limits(cases)
    for ax, case in zip(axes, cases, strict=True):
        _draw_case(ax, case, xlim)
        ax.set_title(_title(case), fontsize=9,
                     color=VERDICT_COLOURS.get(case.verdict, "black"))
    axes[-1].set_xlabel("dialogue time (s)", fontsize=8)
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(name, handle)
    fig.legend(list(handles.values()), list(handles), fontsize=7, loc="upper right")
    fig.tight_layout(rect=(0, 0, 0.85, 1))
    return fig
