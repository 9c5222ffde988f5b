"""The tables ``duplexeval rtcheck`` prints and the strict JSON it writes (``--json``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from duplexeval.app.rtcheck._compute import ORIGIN, ComputeCheck
from duplexeval.app.rtcheck._sessions import CANCEL_WITHIN, ORIGINS, ConcurrencyLevel
from duplexeval.report._text import format_table

__all__ = ["compute_lines", "sessions_json", "sessions_lines"]


def _ms(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x * 1000:.{digits}f}"


def compute_lines(check: ComputeCheck) -> list[str]:
    """Step time per frame (ms) and as a real-time factor, per mode, with the verdict."""
    rows = [[m.mode, m.frames, f"{m.frame_seconds * 1000:.1f}", _ms(m.p50, 2), _ms(m.p95, 2),
             _ms(m.p99, 2), f"{m.rtf(m.p99):.3f}", "live" if m.live else "NOT live"]
            for m in check.modes]
    lines = [f"rtcheck {check.system}: compute per frame over {check.stream_seconds:.1f} s of "
             "input"]
    lines += format_table(["mode", "frames", "frame ms", "p50 ms", "p95 ms", "p99 ms",
                           "p99 RTF", "verdict"], rows)
    verdict = "could run live" if check.live else "could NOT run live"
    lines += [f"  measured: {ORIGIN}",
              "  verdict: live when the p99 step time is at most the frame duration; "
              f"{check.system} {verdict} on this hardware"]
    return lines


def sessions_lines(system: str, levels: Sequence[ConcurrencyLevel]) -> list[str]:
    """One row per concurrency level: TTFA, stalls, drift, cancel latency, gates."""
    rows = []
    for level in levels:
        s = level.summary()
        n = s["sessions"]
        gates = " ".join(f"{g} {k}/{n}" for g, k in s["gates"].items())
        rows.append([n, _ms(s["ttfa_p50_s"]), _ms(s["ttfa_max_s"]), s["stalls"],
                     f"{s['stall_s'] * 1000:.0f}",
                     "-" if s["drift_max_ms"] is None else f"{s['drift_max_ms']:.1f}",
                     _ms(s["cancel_max_s"]), gates, "PASS" if s["passed"] else "FAIL"])
    lines = [f"rtcheck {system}: concurrent sessions through the real-time driver"]
    lines += format_table(["sessions", "TTFA p50 ms", "TTFA max ms", "stalls", "stall ms",
                           "drift max ms", "cancel max ms", "gates passed", "result"], rows)
    lines.append(f"  gates: cancel = the reply stops within {CANCEL_WITHIN * 1000:.0f} ms of "
                 "the VAD edge with no stale audio; transient = no cancel on a 60 ms "
                 "transient; realtime = no stall, no failure")
    lines += [f"  {name}: {origin}" for name, origin in ORIGINS.items()]
    problems = sorted({f"{level.sessions} session(s): {p}" for level in levels
                       for c in level.checks for p in c.problems})
    lines += [f"  problem at {p}" for p in problems]
    return lines


def sessions_json(system: str, levels: Sequence[ConcurrencyLevel]) -> dict[str, Any]:
    """The strict-JSON record of the server check."""
    return {"kind": "server", "system": system, "measurement_origin": ORIGINS,
            "cancel_within_s": CANCEL_WITHIN,
            "passed": all(level.passed for level in levels),
            "levels": [{**level.summary(), "session_checks": [c.to_json() for c in level.checks]}
                       for level in levels]}
