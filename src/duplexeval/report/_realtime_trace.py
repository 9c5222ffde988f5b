"""What the HTML report shows of a wall-clock sample's real-time trace.

The trace file (``samples/{dialogue}/{event_id}.trace.json``, read through
:meth:`~duplexeval.runs._directory.RunDir.read_trace`) is the real-time driver's record
(:mod:`duplexeval.systems.realtime._driver`); this module keeps the figures a reader needs to judge
the sample's timing: the send drift (ms: how late each user frame went out after its deadline),
the arrival jitter (ms), the initial silence of the played-out channel (ms), the playout
flushes and the server's events, at their dialogue times (s).  Samples of other systems have no
trace file and show nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

__all__ = ["RealtimeSummary", "realtime_html"]

SHOWN_EVENTS = 12
"""Server events listed on a card (the rest are counted)."""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} ms"


@dataclass(frozen=True)
class RealtimeSummary:
    """The figures of one trace (times of events and flushes in dialogue seconds)."""

    frames_sent: int
    frame_ms: float
    drift_max: float | None
    drift_p95: float | None
    drift_mean: float | None
    jitter_p95: float | None
    jitter_rfc3550: float | None
    initial_silence_ms: float | None
    events: tuple[tuple[float, str], ...]
    flushes: tuple[tuple[float, int], ...]

    @classmethod
    def of(cls, trace: dict[str, Any] | None) -> RealtimeSummary | None:
        """The summary of a trace file's content; ``None`` without a driver record."""
        rt = trace.get("realtime") if isinstance(trace, dict) else None
        if not isinstance(rt, dict) or trace is None:
            return None
        drift = rt.get("send_drift_ms") or {}
        jitter = rt.get("arrival_jitter_ms") or {}
        rate, frame = _number(rt.get("rate")) or 0.0, _number(rt.get("frame")) or 0.0
        events = tuple((float(e.get("time", 0.0)), str(e.get("type", "")))
                       for e in trace.get("server_events") or [] if isinstance(e, dict))
        flushes = tuple((float(e.get("time", 0.0)), int(e.get("dropped", 0)))
                        for e in trace.get("playout_flushes") or [] if isinstance(e, dict))
        return cls(frames_sent=int(rt.get("frames_sent") or 0),
                   frame_ms=1000 * frame / rate if rate else 0.0,
                   drift_max=_number(drift.get("max")), drift_p95=_number(drift.get("p95")),
                   drift_mean=_number(drift.get("mean")),
                   jitter_p95=_number(jitter.get("p95_abs")),
                   jitter_rfc3550=_number(jitter.get("rfc3550")),
                   initial_silence_ms=_number(rt.get("initial_silence_ms")),
                   events=events, flushes=flushes)


def realtime_html(summary: RealtimeSummary | None) -> str:
    """A card's collapsible "real-time trace" section ('' without a summary)."""
    if summary is None:
        return ""
    s = summary
    lines = [
        f"{s.frames_sent} frames of {s.frame_ms:g} ms sent on absolute deadlines; send drift "
        f"max {_ms(s.drift_max)}, p95 {_ms(s.drift_p95)}, mean {_ms(s.drift_mean)}",
        f"arrival jitter p95 {_ms(s.jitter_p95)}, RFC 3550 {_ms(s.jitter_rfc3550)}; "
        f"initial silence of the played-out channel {_ms(s.initial_silence_ms)}",
    ]
    if s.flushes:
        lines.append("playout flushed at " + ", ".join(
            f"{t:.2f} s ({n} samples dropped)" for t, n in s.flushes))
    shown = [f"{t:.2f} s {kind}" for t, kind in s.events[:SHOWN_EVENTS]]
    more = len(s.events) - SHOWN_EVENTS
    lines.append(f"{len(s.events)} server events" + (": " + ", ".join(shown) if shown else "")
                 + (f", … {more} more" if more > 0 else ""))
    body = "".join(f'<div class="transcript">{escape(line)}</div>' for line in lines)
    return f'<details class="realtime"><summary>real-time trace</summary>{body}</details>'
