"""Pieces of the HTML report as strings: the paper tables, the filters and one event's card.

Every text that comes from data (labels, transcripts, judge answers, paths) goes through
:func:`html.escape`; attribute values too (``quote=True``).  Links are relative URLs
(:func:`url`), percent-encoded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote

from duplexeval.report._columns import language_title, protocol_name
from duplexeval.report._event_cases import EventCase, Segment
from duplexeval.report._html_assets import FILTERS
from duplexeval.report._realtime_trace import realtime_html
from duplexeval.report._render_md import DASH, header
from duplexeval.report._tables import Table, cell_text

__all__ = ["case_html", "filters_html", "table_html", "url"]


def url(target: Path, base: Path) -> str:
    """``target`` relative to the folder ``base``, as a percent-encoded relative URL."""
    return quote(Path(os.path.relpath(target.resolve(), base.resolve())).as_posix())


def table_html(table: Table, title: str) -> str:
    """A paper table (:mod:`.tables`) as an HTML table with its notes; the best values bold."""
    head = "".join(f"<th>{escape(h)}</th>" for h in
                   ["Lang", "Model", *(header(c) for c in table.columns)])
    rows, previous = [], None
    for row in table.rows:
        language = language_title(row.language) if row.language != previous else ""
        previous = row.language
        cells = []
        for c, col in zip(row.cells, table.columns, strict=True):
            parts = cell_text(c, col.metric, table)
            if parts.empty:
                cells.append(f'<td class="num">{DASH}</td>')
                continue
            value = escape(parts.value())
            value = f"<b>{value}</b>" if parts.best else value
            value += ("†" if parts.dagger else "") + {"+": "+", "-": DASH}.get(parts.delta, "")
            extra = ", ".join(x for x in (f"n={parts.n}" if parts.n else "", parts.unscored)
                              if x)
            note = f' <span class="muted">({escape(extra)})</span>' if extra else ""
            cells.append(f'<td class="num">{value}{note}</td>')
        rows.append(f"<tr><td>{escape(language)}</td><td>{escape(row.label)}</td>"
                    f"{''.join(cells)}</tr>")
    notes = "".join(f"<li>{escape(n)}</li>" for n in table.notes)
    return (f"<h3>{escape(title)}</h3><table class=\"results\"><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table><ul class=\"notes\">{notes}</ul>")


def _facet(case: EventCase, name: str) -> str:
    return {"system": case.run, "task": case.result.dimension, "verdict": case.verdict,
            "miss": case.miss_type or "none"}[name]


def filters_html(cases: Sequence[EventCase]) -> str:
    """The filter selects (one per :data:`~.html_assets.FILTERS`), options from the cases."""
    titles = {"system": "system", "task": "task", "verdict": "verdict", "miss": "miss type"}
    parts = []
    for name in FILTERS:
        values = sorted({_facet(c, name) for c in cases})
        options = "".join(f'<option value="{escape(v, quote=True)}">{escape(v)}</option>'
                          for v in values)
        parts.append(f'<label>{titles[name]} <select id="f-{name}"><option value="">all'
                     f"</option>{options}</select></label>")
    return ('<div id="filters">' + "".join(parts)
            + ' <span id="shown-count" class="muted"></span></div>')


def _number(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return DASH if value is None else str(int(value))
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _values(case: EventCase) -> str:
    """The metric values; a latency's name carries where its interval starts and ends as its
    tooltip (``measurement_origin``)."""
    items = {**case.result.values, **case.result.extras}
    cells = []
    for k, v in items.items():
        origin = case.origins.get(k)
        title = (f' title="{escape(f"from {origin[0]} to {origin[1]}", quote=True)}"'
                 if origin else "")
        cells.append(f"<b{title}>{escape(k)}</b> {escape(_number(v))}")
    return f'<p class="values">{" · ".join(cells)}</p>'


def _transcripts(segments: Sequence[Segment]) -> str:
    lines = []
    for s in sorted(segments, key=lambda s: (s.start, s.channel)):
        who = "user" if s.channel == 0 else "system"
        text = escape(s.text) if s.text else '<span class="muted">(no words)</span>'
        lines.append(f'<div class="transcript"><span class="who">{who}</span> '
                     f'<span class="muted">{s.start:.2f}–{s.end:.2f} s</span> {text}</div>')
    return "".join(lines) or '<p class="muted">no speech segments</p>'


def _content(case: EventCase) -> str:
    parts = []
    if case.offline is not None:
        o = case.offline
        parts.append('<p class="muted">content (offline)</p>' + "".join(
            f'<div class="transcript"><span class="who">{k}</span> {escape(v)}</div>'
            for k, v in (("user", o.user), ("response", o.response),
                         ("reference", o.reference)) if v))
    for r in case.judged:
        score = DASH if r.score is None else f"{r.score} ({_number(r.score_100)}/100)"
        why = r.reason or r.unscored_reason or ""
        parts.append(f'<div class="transcript judge"><span class="who">{escape(r.dimension)}'
                     f"</span> {escape(score)} <span class=\"muted\">{escape(r.judge_model)}"
                     f"</span><br>{escape(why)}</div>")
    return "".join(parts)


def case_html(case: EventCase, timeline: str, audio: str | None) -> str:
    """One event's card: heading, values, timeline (inline ``<svg>`` markup), audio player,
    transcripts, the real-time trace (wall-clock systems) and content (``audio`` a relative
    URL, ``None`` when the results name no wav)."""
    r = case.result
    data = " ".join(f'data-{n}="{escape(_facet(case, n), quote=True)}"' for n in FILTERS)
    miss = f" ({case.miss_type})" if case.miss_type not in ("", "none") else ""
    start, end = case.span
    head = (f"{case.run} · {protocol_name(case.protocol)} · {r.event_type} · "
            f"{r.dimension} · {case.verdict}{miss}")
    player = (f'<audio controls preload="none" src="{escape(audio, quote=True)}"></audio>'
              if audio else '<p class="muted">no audio referenced</p>')
    return (f'<section class="case" id="{escape(case.key, quote=True)}" {data}>'
            f"<h3>{escape(head)}</h3>"
            f'<p class="muted">{escape(r.sample_id)} / {escape(r.event_id)}; event '
            f"{start:.2f}–{end:.2f} s; window {case.window[0]:.2f}–{case.window[1]:.2f} s</p>"
            f"{_values(case)}"
            f"{timeline}{player}"
            f"<details><summary>transcripts</summary>{_transcripts(case.segments)}</details>"
            f"{realtime_html(case.realtime)}{_content(case)}</section>")
