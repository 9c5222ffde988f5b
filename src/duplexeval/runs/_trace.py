"""A session's trace as a sample's record keeps it (:class:`Trace`): what the system
reported, in dialogue time where it has times."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["Trace"]


class Trace(BaseModel):
    """What a session reported (``trace``), in dialogue time where it has times; systems add
    their own keys (kept as they are)."""

    model_config = ConfigDict(extra="allow")
    frames: int | None = None
    sample_rate: int | None = None
    speech_samples: list[list[int]] | None = None
    """The system's audible ``[start, end)`` session samples at ``sample_rate``."""
    system_speech: list[list[float]] | None = None
    """The same intervals in dialogue seconds (added by the runner)."""

    @staticmethod
    def in_dialogue_time(trace: dict[str, Any], start_time: float) -> dict[str, Any]:
        """A session's trace as recorded: ``speech_samples`` (session samples at
        ``sample_rate``) also as ``system_speech`` in dialogue seconds, and every logged entry
        that has a session ``sample`` with its dialogue ``time`` (s, rounded to 1 µs) right
        after it; ``start_time`` is the dialogue time of the session's first sample."""
        out = dict(trace)
        speech = trace.get("speech_samples")
        rate = trace.get("sample_rate")
        if speech is not None and rate:
            out["system_speech"] = [[start_time + a / rate, start_time + b / rate]
                                    for a, b in speech]
        if rate:
            for key, value in trace.items():
                if isinstance(value, list) and value and all(
                        isinstance(e, dict) and "sample" in e for e in value):
                    out[key] = [{"sample": e["sample"],
                                 "time": round(start_time + e["sample"] / rate, 6),
                                 **{k: v for k, v in e.items() if k not in ("sample", "time")}}
                                for e in value]
        return out

    @staticmethod
    def split_realtime(trace: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """A recorded trace (dialogue time) as (what the sample's record keeps, the trace file):
        a real-time driver's trace (key ``realtime``, :mod:`duplexeval.systems.realtime._driver`)
        goes whole to the trace file, and the record keeps it without its per-frame and per-chunk
        series; any other trace stays in the record alone (``None``)."""
        realtime = trace.get("realtime")
        if not isinstance(realtime, dict):
            return trace, None
        kept = {k: v for k, v in trace.items() if k != "audio_arrivals"}
        drift = realtime.get("send_drift_ms")
        if isinstance(drift, dict):
            kept["realtime"] = {**realtime, "send_drift_ms": {
                k: v for k, v in drift.items() if k != "series"}}
        return kept, trace
