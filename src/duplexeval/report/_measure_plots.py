"""The figures of the measures no benchmark has, drawn as :mod:`.plots` draws (matplotlib, Agg),
from results files (one ``(label, Results)`` per scoring):

* :func:`pass_curves` - pass@k (solid) and pass^k (dashed) against k, one panel per scoring with
  repeated tries, one colour per event kind and dimension with a pass rule, 95 % intervals as
  error bars.  The two meet at k = 1 (the pass rate); pass^k falls with k exactly when the
  tries' verdicts differ, and a deterministic system's is flat.
* :func:`bargein_cost` - the penalty seconds of each event (dots) and their mean per event with
  its 95 % interval (a bar), per act (backchannel, barge-in, background speech) and
  ``turnbench`` scoring (:mod:`duplexeval.metrics.timing._bargein_cost`).
* :func:`counterfactual_effects` - each paired effect of the user's act (with minus without)
  as a point with its 95 % paired-bootstrap interval, one row per scoring, event kind,
  dimension and metric, and the line of no effect at 0.

Every series carries a ``label`` (the tests look them up).
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from duplexeval.report._measure_tables import ACTS
from duplexeval.results._intervals import IntervalFields
from duplexeval.results._model import Results

__all__ = ["bargein_cost", "counterfactual_effects", "pass_curves"]

Runs = Sequence[tuple[str, Results]]


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777777")
    ax.set_xticks([])
    ax.set_yticks([])


def _errors(points: Sequence[IntervalFields]) -> tuple[list[float], list[float]]:
    """Error-bar lengths below and above each mean (0 where the interval is unknown)."""
    low = [max(0.0, (p.mean or 0.0) - p.ci95_low) if p.ci95_low is not None else 0.0
           for p in points]
    high = [max(0.0, p.ci95_high - (p.mean or 0.0)) if p.ci95_high is not None else 0.0
            for p in points]
    return low, high


def pass_curves(runs: Runs) -> Figure:
    """pass@k and pass^k against k (module docstring); lines labelled ``EVENT dimension
    pass@k`` and ``... pass^k``."""
    rows = [(label, r) for label, r in runs if r.stability is not None]
    fig = Figure(figsize=(3.6 * max(len(rows), 1), 3.0))
    axes = fig.subplots(1, max(len(rows), 1), squeeze=False)[0]
    if not rows:
        _empty(axes[0], "no runs with repeated tries")
        return fig
    for ax, (label, results) in zip(axes, rows, strict=True):
        st = results.stability
        assert st is not None
        drawn = [r for r in st.rows if r.pass_at_k]
        for i, r in enumerate(drawn):
            colour = f"C{i % 10}"
            for points, name, style in ((r.pass_at_k, "pass@k", "-o"),
                                        (r.pass_hat_k, "pass^k", "--s")):
                ks = [p.k for p in points if p.mean is not None]
                kept = [p for p in points if p.mean is not None]
                ax.errorbar(ks, [p.mean for p in kept], yerr=_errors(kept), fmt=style,
                            color=colour, markersize=3, capsize=2, linewidth=1.2,
                            label=f"{r.event_type} {r.dimension} {name}")
        verdict = "deterministic" if st.deterministic else f"{st.tries} tries"
        ax.set_title(f"{label} ({results.variant.name}, {verdict})", fontsize=8)
        ax.set_xlabel("k (tries)")
        ax.set_ylim(-0.02, 1.05)
        ax.grid(alpha=0.3)
        if drawn:
            ax.set_xticks(range(1, st.tries + 1))
            ax.legend(fontsize=6, loc="lower left")
        else:
            _empty(ax, "no pass rule")
    axes[0].set_ylabel("pass rate")
    fig.tight_layout()
    return fig


def bargein_cost(runs: Runs) -> Figure:
    """Penalty seconds per event (module docstring); bars labelled ``LABEL DIMENSION mean``,
    dots ``LABEL DIMENSION events``."""
    groups = []
    for label, results in runs:
        for dimension, _verdict, _latency in ACTS:
            values = [float(v) for e in results.events if e.dimension == dimension
                      and isinstance(v := e.extras.get("penalty_s ↓"), int | float)]
            row = next((a for a in results.aggregates if a.dimension == dimension
                        and a.metric == "penalty_s ↓" and a.round is None
                        and a.language == "all" and a.domain == "all"), None)
            if values and row is not None:
                groups.append((f"{label}\n{dimension}", values, row))
    fig = Figure(figsize=(max(3.5, 1.2 * len(groups) + 1.0), 3.2))
    ax = fig.subplots()
    if not groups:
        _empty(ax, "no barge-in cost (turnbench scorings)")
        return fig
    for x, (name, values, row) in enumerate(groups):
        tag = name.replace("\n", " ")
        ax.bar([x], [row.mean or 0.0], 0.6, yerr=list(_errors([row])),
               color="#cccccc", edgecolor="#555555", capsize=3, label=f"{tag} mean")
        spread = [x + 0.25 * ((i % 5) - 2) / 2 for i in range(len(values))]
        ax.scatter(spread, values, s=10, color="#d62728", zorder=3, label=f"{tag} events")
    ax.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=7)
    ax.set_ylabel("penalty (s per event)")
    ax.set_title("barge-in cost: penalty seconds per event", fontsize=9)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def counterfactual_effects(runs: Runs) -> Figure:
    """The paired effects (module docstring); points labelled ``LABEL EVENT dimension
    metric``."""
    rows = [(f"{label} ({r.variant.name}) {e.event_type} {e.dimension} {e.metric}", e)
            for label, r in runs for e in r.counterfactual]
    fig = Figure(figsize=(6.5, 0.9 + 0.28 * max(len(rows), 1)))
    ax = fig.subplots()
    if not rows:
        _empty(ax, "no counterfactual pairs")
        return fig
    for y, (name, e) in enumerate(rows):
        ax.errorbar([e.effect], [y], xerr=[[max(0.0, e.effect - e.ci95_low)],
                                         [max(0.0, e.ci95_high - e.effect)]],
                    fmt="o", color="#4c72b0", markersize=4, capsize=3, label=name)
    ax.axvline(0.0, color="#555555", linewidth=0.8, linestyle=":")
    ax.set_yticks(range(len(rows)), [f"{n} (n={e.n})" for n, e in rows], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("effect of the act (with minus without), 95 % CI")
    ax.set_title("counterfactual pairs", fontsize=9)
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig
