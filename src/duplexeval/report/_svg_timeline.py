"""An event's two-channel timeline as inline SVG markup, for the HTML report's event browser.

The same picture as :func:`~.plots.event_timeline` (user row above, system row below; context
region grey, event span purple, scoring window a grey bar under the system row, the detected
system segment outlined, the verdict in the title), written directly as a few ``<rect>``
elements: a report has hundreds of events, and matplotlib takes about 0.3 s per figure where
this takes well under a millisecond.  Each speech segment has a ``<title>`` with its times and
words (shown on hover).  Every text is escaped.

Geometry: :data:`WIDTH` x :data:`HEIGHT` px; x is dialogue seconds over
``[first shown second, input end]``, ticks every 1, 2, 5 or 10 s.
"""

from __future__ import annotations

from html import escape

from duplexeval.report._columns import protocol_name
from duplexeval.report._event_cases import EventCase, Segment
from duplexeval.report._plots import SYSTEM, TIMELINE_KEYS, USER, VERDICT_COLOURS

__all__ = ["HEIGHT", "WIDTH", "timeline_svg"]

WIDTH, HEIGHT = 760, 104
LEFT, RIGHT = 58, 10
ROWS = {0: 30, 1: 58}
"""Channel -> top of its row (px); rows are 20 px high."""
COLOURS = dict(TIMELINE_KEYS)


def _ticks(lo: float, hi: float) -> list[float]:
    span = max(hi - lo, 1e-6)
    step = next((s for s in (1.0, 2.0, 5.0, 10.0, 20.0, 60.0) if span / s <= 10), 120.0)
    first = -(-lo // step) * step
    return [first + i * step for i in range(int((hi - first) // step) + 1)]


class _Scale:
    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, max(hi, lo + 1e-3)

    def x(self, t: float) -> float:
        t = min(max(t, self.lo), self.hi)
        return LEFT + (t - self.lo) / (self.hi - self.lo) * (WIDTH - LEFT - RIGHT)

    def rect(self, a: float, b: float, y: float, h: float, style: str, tip: str = "") -> str:
        x0, x1 = self.x(a), self.x(b)
        title = f"<title>{escape(tip)}</title>" if tip else ""
        return (f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0, 1.0):.1f}" '
                f'height="{h:.1f}" {style}>{title}</rect>')


def _segment(scale: _Scale, s: Segment) -> str:
    colour = USER if s.channel == 0 else SYSTEM
    who = "user" if s.channel == 0 else "system"
    tip = f"{who} {s.start:.2f}-{s.end:.2f} s" + (f": {s.text}" if s.text else "")
    return scale.rect(s.start, s.end, ROWS[0 if s.channel == 0 else 1], 20,
                      f'fill="{colour}"', tip)


def _axis(scale: _Scale) -> list[str]:
    out = [f'<text x="{LEFT - 6}" y="{ROWS[0] + 14}" text-anchor="end">user</text>',
           f'<text x="{LEFT - 6}" y="{ROWS[1] + 14}" text-anchor="end">system</text>',
           f'<line x1="{LEFT}" y1="88" x2="{WIDTH - RIGHT}" y2="88" stroke="#888"/>']
    for t in _ticks(scale.lo, scale.hi):
        x = scale.x(t)
        out.append(f'<line x1="{x:.1f}" y1="24" x2="{x:.1f}" y2="90" stroke="#e4e4e4"/>'
                   f'<text x="{x:.1f}" y="100" text-anchor="middle">{t:g}</text>')
    return out


def timeline_svg(case: EventCase) -> str:
    """The ``<svg>`` element of one event (see the module docstring)."""
    lo = case.input_start - 0.5 if case.context is not None else case.input_start
    scale = _Scale(min(lo, case.span[0] - 1.0), case.input_end)
    parts = _axis(scale)
    if case.context is not None:
        parts.append(scale.rect(*case.context, 24, 60, f'fill="{COLOURS["context"]}" '
                                'fill-opacity="0.5"', "context"))
    start, end = case.span
    parts.append(scale.rect(start, max(end, start + 0.02), 24, 60,
                            f'fill="{COLOURS["event"]}" fill-opacity="0.3"',
                            f"event {start:.2f}-{end:.2f} s"))
    parts.append(scale.rect(*case.window, 81, 4, f'fill="{COLOURS["scoring window"]}"',
                            f"scoring window {case.window[0]:.2f}-{case.window[1]:.2f} s"))
    parts += [_segment(scale, s) for s in case.segments]
    if case.detected is not None:
        parts.append(scale.rect(*case.detected, ROWS[1] - 2, 24,
                                'fill="none" stroke="black" stroke-width="2"', "detected"))
    miss = f" ({case.miss_type})" if case.miss_type not in ("", "none") else ""
    title = (f"{case.run} · {protocol_name(case.protocol)} · {case.result.event_type} · "
             f"{case.verdict}{miss}")
    colour = VERDICT_COLOURS.get(case.verdict, "black")
    return (f'<svg class="timeline" width="{WIDTH}" '
            f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-size="10" '
            f'font-family="sans-serif" role="img" aria-label="{escape(title, quote=True)}">'
            f'<text x="{WIDTH / 2}" y="13" text-anchor="middle" fill="{colour}">'
            f"{escape(title)}</text>{''.join(parts)}</svg>")
