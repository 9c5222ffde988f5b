"""FLEXI's user-interrupt and user-backchannel evaluators over its output folders
(``evaluate/eval_user_interrupt.py`` and ``eval_user_backchannel.py`` of
``ChristineCHEN274/FLEXI`` @2247b0d); see :mod:`.flexi_tasks` for the conventions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing import _flexi_rules as rules
from duplexeval.peers._registry import PeerOptions
from duplexeval.peers.flexi._io import (
    INPUT_JSON,
    OUTPUT_JSON,
    load_json,
    number,
    parse_words,
    recursive_dirs,
    sample_name,
    timestamp_pair,
    try_load_json,
)
from duplexeval.peers.flexi._tasks import INTERRUPT_JSON, METADATA_JSON, TaskResult, _mean

__all__ = ["score_user_backchannel", "score_user_interrupt"]


def _candidates(root: Path, needed: tuple[str, ...], result: TaskResult) -> list[Path]:
    """Folders from the root down holding every ``needed`` file (``os.walk`` order, root
    included); a folder directly under the root without them is reported as skipped."""
    found = []
    for folder in recursive_dirs(root, include_root=True):
        if all((folder / f).is_file() for f in needed):
            found.append(folder)
        elif folder.parent == root:
            missing = [f for f in needed if not (folder / f).is_file()]
            result.skip(sample_name(root, folder), f"missing file {missing[0]}")
    return found


# -- user interrupt ------------------------------------------------------------------------------

def _interruption(data: Any, path: Path) -> tuple[float, float]:
    """``interrupt.json[0].timestamp`` (l. 80: unpacked into exactly two values)."""
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise DuplexevalError(f"{path}: expected [{{\"timestamp\": [start, end], ...}}]")
    stamp = data[0].get("timestamp")
    if not isinstance(stamp, list) or len(stamp) != 2:
        raise DuplexevalError(f"{path}: [0].timestamp must be [start, end], got {stamp!r}")
    return timestamp_pair(stamp, path, "[0].timestamp")


def _interrupt_row(name: str, words: list[rules.Word], ui: tuple[float, float],
                   paper: bool) -> dict[str, Any]:
    outcome = rules.interrupt_outcome(words, ui[0], ui[1], paper=paper)
    responded, latency = rules.new_response(words, ui[1])
    row: dict[str, Any] = {"sample": name, "TOR": outcome.tor,
                           "latency": latency if outcome.tor == 0 and responded else None,
                           "responded": int(responded), "overlap": None}
    if outcome.cluster is not None:
        start, end = outcome.cluster
        row["overlap"] = end - start
        row["termination"] = max(end - ui[0], 0.0)
    return row


def score_user_interrupt(root: Path, options: PeerOptions, paper: bool) -> TaskResult:
    """TTR = 1 - mean TOR (TOR 1: the model did not yield); code "Latency" = the mean length
    of the overlap clusters that a later word closed (``None`` when none: the code divides by
    zero); paper "Latency" = mean time from the interruption's start to the end of the
    model's overlapping speech, over the samples where it yielded."""
    result = TaskResult()
    for folder in _candidates(root, (INTERRUPT_JSON, OUTPUT_JSON), result):
        name = sample_name(root, folder)
        out, reason = try_load_json(folder / OUTPUT_JSON)
        meta, reason2 = try_load_json(folder / INTERRUPT_JSON)
        if reason or reason2:
            result.skip(name, reason or reason2 or "")
            continue
        ui = _interruption(meta, folder / INTERRUPT_JSON)
        words = parse_words(out, folder / OUTPUT_JSON, required=False)
        result.rows.append(_interrupt_row(name, words, ui, paper))
    rows = result.scored
    ttr = 1 - sum(r["TOR"] for r in rows) / len(rows) if rows else 0.0
    if paper:
        latency = _mean([r["termination"] for r in rows if r["TOR"] == 0 and "termination" in r])
    else:
        latency = _mean([r["overlap"] for r in rows if r["overlap"] is not None])
    result.metrics = {"TTR": ttr, "Latency": latency, "LLM Rating": None}
    for r in rows:
        r.pop("termination", None)
    return result


# -- user backchannel ----------------------------------------------------------------------------

def _metadata_time(folder: Path) -> float | str:
    data, reason = try_load_json(folder / METADATA_JSON)
    if reason is not None:
        return reason
    times = data.get("user_backchannel_times", []) if isinstance(data, dict) else None
    if not isinstance(times, list) or not times:
        return f"{METADATA_JSON} has no user_backchannel_times"
    return number(times[0], folder / METADATA_JSON, "user_backchannel_times[0]")


def _backchannel_time(folder: Path) -> tuple[float, str] | str:
    """The backchannel's time and its source, or why the code skips the sample
    (``for_backchannel_time``, l. 13-45: every error there is caught)."""
    data, reason = try_load_json(folder / INPUT_JSON)
    if reason is not None:
        return reason
    try:
        words = parse_words(data, folder / INPUT_JSON, required=False)
    except DuplexevalError as exc:
        return f"unreadable {INPUT_JSON} ({exc})"
    if len(words) < 2:
        return f"{INPUT_JSON} has fewer than two words"
    found = rules.backchannel_time_from_input(words)
    if found is not None:
        return found, "input gap"
    meta = _metadata_time(folder)
    return meta if isinstance(meta, str) else (meta, METADATA_JSON)


def score_user_backchannel(root: Path, options: PeerOptions, paper: bool) -> TaskResult:
    """"Interrupt Rate": the share of samples where the model's words have a gap longer than
    1.5 s (paper: 1 s) at the backchannel (:func:`~duplexeval.metrics.timing._flexi_rules.
    backchannel_split`); a silent model counts as not interrupted.  The coherence rating of
    the two halves is a judged score (not computed)."""
    result = TaskResult()
    gap = rules.BACKCHANNEL_GAP_PAPER if paper else rules.BACKCHANNEL_GAP_CODE
    for folder in _candidates(root, (INPUT_JSON, OUTPUT_JSON), result):
        name = sample_name(root, folder)
        found = _backchannel_time(folder)
        if isinstance(found, str):
            result.skip(name, found)
            continue
        time, source = found
        out = load_json(folder / OUTPUT_JSON, "model transcript")
        if not isinstance(out, dict):
            raise DuplexevalError(f"{folder / OUTPUT_JSON}: expected a JSON object")
        words = parse_words(out, folder / OUTPUT_JSON, required=False)
        split = rules.backchannel_split(words, time, gap=gap, paper=paper)
        result.rows.append({"sample": name, "interrupted": int(split is not None),
                            "backchannel_time": time, "backchannel_source": source})
    rows = result.scored
    rate = sum(r["interrupted"] for r in rows) / len(rows) if rows else 0.0
    result.metrics = {"Interrupt Rate": rate}
    if paper:
        result.metrics["TTR"] = rate
    result.metrics["Coherence"] = None
    result.metrics["Coherent cases"] = None
    return result
