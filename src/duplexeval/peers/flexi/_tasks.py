"""FLEXI's six evaluators, one function per task, over its output folders.

Each ``score_<task>(root, options, paper)`` returns a :class:`TaskResult`: one row per sample
(FLEXI's per-sample names: ``TOR``, ``latency``, ``jump_in``, ``delay``, ``interrupted``,
``freq``, ``JSD``; a skipped sample is ``{"sample", "skipped": reason}``) and the metrics under
the names FLEXI prints.  ``paper`` false reproduces ``evaluate/eval_<task>.py`` of
``ChristineCHEN274/FLEXI`` @2247b0d value for value; true applies the paper's definitions
(:data:`PAPER_DIFFERENCES` lists what changes).  The rules themselves are in
:mod:`duplexeval.metrics.timing._flexi_rules`; sample discovery and reading in :mod:`.flexi_io`;
the model's speech segments in :mod:`.flexi_vad`.  Judged scores (LLM ratings) are not
computed here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing import _flexi_rules as rules
from duplexeval.peers._registry import PeerOptions
from duplexeval.peers.flexi._io import (
    INPUT_JSON,
    OUTPUT_JSON,
    chunk_time,
    find_file,
    load_json,
    number,
    parse_words,
    recursive_dirs,
    sample_name,
    timestamp_pair,
    top_level_dirs,
    try_load_json,
)

__all__ = ["LATENCY_LEVEL", "PAPER_DIFFERENCES", "TASKS", "TaskResult"]

PAUSE_JSON = "pause.json"
INTERRUPT_JSON = "interrupt.json"
METADATA_JSON = "metadata.json"
TURN_TAKING_SUFFIX = "turn_taking.json"


@dataclass
class TaskResult:
    """Per-sample rows, the metrics FLEXI prints, and notes on how they were computed."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)

    def skip(self, name: str, reason: str) -> None:
        self.rows.append({"sample": name, "skipped": reason})

    @property
    def scored(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if "skipped" not in r]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _no_samples(root: Path, what: str) -> DuplexevalError:
    return DuplexevalError(f"{root}: no FLEXI sample folder found ({what})")


# -- turn taking ---------------------------------------------------------------------------------

def _turn_taking_user_end(path: Path) -> float:
    data = load_json(path, "turn-taking annotation")
    stamp = data[0].get("timestamp") if isinstance(data, list) and data \
        and isinstance(data[0], dict) else None
    if not isinstance(stamp, list) or not stamp:
        raise DuplexevalError(f"{path}: expected [{{\"timestamp\": [t, ...]}}, ...]")
    return number(stamp[0], path, "[0].timestamp[0]")


def score_turn_taking(root: Path, options: PeerOptions, paper: bool) -> TaskResult:
    """``eval_turn_taking.py``: TOR, Latency (non-negative ones), JIR (paper = code)."""
    result = TaskResult()
    for folder in top_level_dirs(root):
        name = sample_name(root, folder)
        out = find_file(folder, OUTPUT_JSON)
        if out is None:
            result.skip(name, f"no {OUTPUT_JSON} (not a sample for the evaluator)")
            continue
        annotation = find_file(folder, TURN_TAKING_SUFFIX)
        if annotation is None:
            raise DuplexevalError(f"{folder / TURN_TAKING_SUFFIX}: required file not found "
                                  f"(FLEXI pairs each {OUTPUT_JSON} with a *{TURN_TAKING_SUFFIX})")
        user_end = _turn_taking_user_end(annotation)
        words = parse_words(load_json(out, "model transcript"), out)
        tt = rules.turn_taking(words, user_end)
        result.rows.append({"sample": name, "TOR": tt.tor, "latency": tt.latency,
                            "jump_in": int(tt.jump_in)})
    rows = result.scored
    if not rows:
        raise _no_samples(root, f"no folder holds {OUTPUT_JSON}")
    latencies = [r["latency"] for r in rows if r["TOR"] == 1 and r["latency"] >= 0]
    mean_latency = _mean(latencies) or 0.0
    result.metrics = {"TOR": sum(r["TOR"] for r in rows) / len(rows), "Latency": mean_latency,
                      "JIR": sum(r["jump_in"] for r in rows) / len(rows)}
    return result


# -- pause handling ------------------------------------------------------------------------------

def _pause_window(data: Any, path: Path) -> tuple[float, float] | str:
    if not isinstance(data, dict):
        raise DuplexevalError(f"{path}: expected a JSON object with 'timestamp'")
    stamp = data.get("timestamp")
    if not (isinstance(stamp, list) and len(stamp) >= 2 and stamp[0] is not None
            and stamp[1] is not None):
        return f"invalid {PAUSE_JSON} (missing timestamp)"
    start, end = timestamp_pair(stamp, path, "timestamp")
    if end - start < 0:
        return f"invalid {PAUSE_JSON} (end before start)"
    return start, end


@dataclass(frozen=True)
class _PauseSample:
    name: str
    pause: tuple[float, float]
    first_start: float | None
    user_last_end: float
    words: list[rules.Word]


def _read_pause_sample(root: Path, folder: Path) -> _PauseSample | str:
    loaded = {}
    for file in (PAUSE_JSON, INPUT_JSON, OUTPUT_JSON):
        data, reason = try_load_json(folder / file)
        if reason is not None:
            return reason
        loaded[file] = data
    window = _pause_window(loaded[PAUSE_JSON], folder / PAUSE_JSON)
    if isinstance(window, str):
        return window
    first = chunk_time(loaded[OUTPUT_JSON], folder / OUTPUT_JSON, 0, 0, 1)
    last = chunk_time(loaded[INPUT_JSON], folder / INPUT_JSON, -1, 1, 2)
    if last is None:
        return f"{INPUT_JSON} missing last chunk end timestamp"
    try:  # only the paper's latency reads them; the code reads the first word alone
        words = parse_words(loaded[OUTPUT_JSON], folder / OUTPUT_JSON, required=False)
    except DuplexevalError:
        words = []
    return _PauseSample(sample_name(root, folder), window, first, last, words)


def _response_latency(samples: list[_PauseSample]) -> float:
    """The mean time from the user's last word end to the model's first word at or after it
    (the model's response latency, measured on the pause samples themselves)."""
    values = []
    for s in samples:
        later = [w.start for w in s.words if w.start is not None and w.start >= s.user_last_end]
        if later:
            values.append(later[0] - s.user_last_end)
    return _mean(values) or 0.0


def _pause_allowance(options: PeerOptions, paper: bool,
                     samples: list[_PauseSample]) -> tuple[float, str]:
    if options.latency is not None:
        return options.latency, "--latency"
    if not paper:
        return 0.0, "the code's default (--latency 0)"
    return _response_latency(samples), "computed: mean response latency after the user's last word"


def score_pause_handling(root: Path, options: PeerOptions, paper: bool) -> TaskResult:
    """``eval_pause_handing.py``: TOR of a takeover inside the pause (+ latency allowance)."""
    result, samples = TaskResult(), []
    for folder in recursive_dirs(root, include_root=False):
        sample = _read_pause_sample(root, folder)
        if isinstance(sample, str):
            result.skip(sample_name(root, folder), sample)
        else:
            samples.append(sample)
    latency, source = _pause_allowance(options, paper, samples)
    for s in samples:
        if s.first_start is None and not paper:
            result.skip(s.name, f"{OUTPUT_JSON} missing first chunk timestamp (silent model)")
            continue
        window_end = rules.pause_window_end(*s.pause, latency)
        tor = 0 if s.first_start is None else rules.pause_takeover(
            s.first_start, s.pause[0], window_end, s.user_last_end)
        result.rows.append({"sample": s.name, "TOR": tor, "window": [s.pause[0], window_end]})
    rows = result.scored
    result.metrics = {"TOR": sum(r["TOR"] for r in rows) / len(rows) if rows else 0.0}
    result.notes = {"latency_allowance": latency, "latency_source": source}
    return result


# -- model interrupt -----------------------------------------------------------------------------

def _model_interrupt_times(folder: Path) -> tuple[float, float] | str:
    times = []
    for file, index, pos in ((INPUT_JSON, -1, -1), (OUTPUT_JSON, 0, 0)):
        path = folder / file
        if not path.is_file():
            return f"missing file {file}"
        t = chunk_time(load_json(path, "transcript"), path, index, pos, 1)
        if t is None:
            return f"{file} has no timed words" + (" (silent model)" if pos == 0 else "")
        times.append(t)
    return times[0], times[1]


def score_model_interrupt(root: Path, options: PeerOptions, paper: bool) -> TaskResult:
    """``eval_model_interrupt.py``: TOR = the *count* of samples where the model started more
    than 0.5 s before the user's last word ended (paper: the rate)."""
    result = TaskResult()
    silent = 0
    for folder in top_level_dirs(root):
        name = sample_name(root, folder)
        times = _model_interrupt_times(folder)
        if isinstance(times, str):
            silent += "silent model" in times
            result.skip(name, times)
            continue
        delay, interrupted = rules.model_interrupt_delay(*times)
        result.rows.append({"sample": name, "delay": delay, "interrupted": int(interrupted)})
    rows = result.scored
    count = sum(r["interrupted"] for r in rows)
    if paper:
        n = len(rows) + silent
        result.metrics = {"TOR": count / n if n else 0.0}
        result.notes = {"TOR_denominator": n}
    else:
        result.metrics = {"TOR": count}
    result.metrics["EDS"] = None
    return result


TASKS: dict[str, Callable[[Path, PeerOptions, bool], TaskResult]] = {
    "turn_taking": score_turn_taking,
    "pause_handling": score_pause_handling,
    "model_interrupt": score_model_interrupt,
}
"""The task functions defined here (:mod:`.flexi` adds those of :mod:`.flexi_overlap` and
:mod:`.flexi_backchannel`)."""

LATENCY_LEVEL = ("Latency level: the paper's interaction level of the mean latency (1 below "
                 "150 ms, 2 below 400 ms, else 3), not printed by the code")
PAPER_DIFFERENCES: dict[str, list[str]] = {
    "turn_taking": [LATENCY_LEVEL],
    "pause_handling": [
        "a silent model (no output words) counts as no takeover (TOR 0) instead of leaving the "
        "denominator (eval_pause_handing.py l. 78-81)",
        "without --latency the allowance is the model's measured mean response latency instead "
        "of the code's default 0 (l. 119)"],
    "model_interrupt": [
        "TOR is the rate of interrupting samples (silent models counted as not interrupting) "
        "instead of their count (eval_model_interrupt.py l. 169)"],
}
"""What ``--paper`` changes, per task (reported in ``aggregate.json``)."""
