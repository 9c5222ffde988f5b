"""M3-DuplexBench's Figures 4 and 5 for one system, per language, on Chat, with their data.

* Figure 4: the cumulative proportion of SHIFT events answered within a latency under each
  protocol (:func:`duplexeval.report._plots.latency_cdf`); the denominator is every scored SHIFT
  event, so a curve levels off at the protocol's SHIFT TOR.
* Figure 5: SHIFT TOR and PAUSE TOR under each protocol, with Δ = SHIFT - PAUSE in percentage
  points (:func:`duplexeval.report._plots.tor_bars`).

The seed draws both on Chat (its Section 5.3.2).  Each figure is written as PNG and SVG beside
a CSV of the numbers it draws (``figure4-chat-en.csv``: ``protocol, latency_s, cumulative``,
one line per answered event, ``total`` the scored events; ``figure5-chat-en.csv``:
``protocol, shift_tor, pause_tor, delta``, percent).  The CSVs are what ``verify``
recomputes; the images are checked by their hashes only, since a figure's bytes depend on the
installed matplotlib and fonts.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from duplexeval._fileio import atomic_write_text
from duplexeval.report._columns import PAUSE_TOR, SHIFT_TOR, MetricColumn, protocol_order
from duplexeval.report._plots import latency_cdf, save_figure, shift_latencies, tor_bars
from duplexeval.results._model import Results

__all__ = ["FIGURE_DOMAIN", "figure4_csv", "figure5_csv", "is_image", "write_m3_figures"]

FIGURE_DOMAIN = "chat"
"""The domain the seed draws Figures 4 and 5 on."""

IMAGE_SUFFIXES = (".png", ".svg")


def _overall(results: Results, column: MetricColumn) -> float | None:
    for row in results.aggregates:
        if (row.language, row.domain, row.event_type, row.metric, row.round) == (
                "all", "all", column.event_type, column.metric, None) and row.mean is not None:
            return row.mean * column.scale
    return None


def figure4_csv(runs: Sequence[Results]) -> str:
    """The points of Figure 4 (see the module docstring)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["protocol", "latency_s", "cumulative", "total"])
    for results in runs:
        answered, total = shift_latencies(results)
        for i, latency in enumerate(answered):
            writer.writerow([results.source.protocol, repr(latency), repr((i + 1) / total),
                             total])
    return out.getvalue()


def figure5_csv(runs: Sequence[Results]) -> str:
    """The bars of Figure 5 (see the module docstring); an empty field where a run has no
    such event."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["protocol", "shift_tor", "pause_tor", "delta"])
    for results in runs:
        shift, pause = _overall(results, SHIFT_TOR), _overall(results, PAUSE_TOR)
        delta = None if shift is None or pause is None else shift - pause
        writer.writerow([results.source.protocol, *("" if v is None else repr(v)
                                                   for v in (shift, pause, delta))])
    return out.getvalue()


def write_m3_figures(system: str, runs: Sequence[Results], out: Path,
                     language: str, stem_suffix: str = "") -> list[Path]:
    """Figures 4 and 5 of ``system``'s Chat runs in ``language`` (one per protocol) into
    ``out`` (``figure4-chat-LANG{stem_suffix}.csv`` ...); returns the CSVs first, then the
    images."""
    ordered = sorted(runs, key=lambda r: protocol_order(r.source.protocol))
    if not ordered:
        return []
    named = [(system, r) for r in ordered]
    stem = f"{FIGURE_DOMAIN}-{language}{stem_suffix}"
    data = [out / f"figure4-{stem}.csv", out / f"figure5-{stem}.csv"]
    atomic_write_text(data[0], figure4_csv(ordered))
    atomic_write_text(data[1], figure5_csv(ordered))
    images = [*save_figure(latency_cdf(named), out / f"figure4-{stem}"),
              *save_figure(tor_bars(named), out / f"figure5-{stem}")]
    return [*data, *images]


def is_image(path: Path) -> bool:
    """Whether a table file is a figure image (checked by hash, not recomputed)."""
    return path.suffix in IMAGE_SUFFIXES
