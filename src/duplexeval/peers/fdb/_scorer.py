"""``--peer fdb-v1``: re-scoring Full-Duplex-Bench v1/v1.5 output folders at parity with its
released evaluators (``DanielLin94144/Full-Duplex-Bench`` at d7336bd, ``v1_v1.5/evaluation``).

Tasks and the FDB code each one reproduces:

==================== ============================== =========================================
task                 FDB file                       per-sample fields / aggregate names
==================== ============================== =========================================
smooth_turn_taking   ``eval_smooth_turn_taking.py`` ``TOR``, ``latency`` / ``Average take
                                                    turn``, ``Average latency``
pause_handling       ``eval_pause_handling.py``     ``TOR`` / ``Average take turn``
user_interruption    ``eval_user_interruption.py``  ``TOR``, ``latency`` / ``Average take
                                                    turn``, ``Average latency`` (``Average
                                                    rating``: not computed, LLM judge)
backchannel          ``eval_backchannel.py``        ``TOR``, ``freq``, ``JSD`` / ``JSD - Mean``
                                                    ... ``Number of samples``
v1_5_timing          ``get_timing.py``              ``latency_stop_list``,
                                                    ``latency_resp_list`` (FDB writes no
                                                    aggregate; the means are ours)
==================== ============================== =========================================

The rules themselves are :mod:`duplexeval.metrics.timing._fdb_rules`; which folders and files are
read is :mod:`.fdb_samples`; reading and VAD is :mod:`.fdb_io`.

Compat (the default under ``--peer``) reproduces the code value for value, bugs included; each
quirk that fires is noted on the sample's line (``notes``) and in the aggregate.  ``--paper``
applies the paper's definitions; the aggregate then lists the rules that differ
(``differences``), the samples whose values changed (``changed``) and the compat aggregate
(``compat``).  LLM-judged scores (interruption relevance, v1.5 behaviour tags) and v1.5
prosody are not computed and are listed under ``not_computed``.

Known departures from FDB's code, in both modes:

* Order: folders and files in sorted name order, not ``os.listdir`` order (only the
  mis-pairing of smooth turn-taking and the carried-over backchannel TOR depend on it).
* User interruption: FDB's code appends a takeover's latency only after the judge's reply
  parses, and on an unparsable reply re-runs the sample (appending its TOR again); without the
  judge every reply counts as parsed on the first try.  ``output.json``'s ``text`` (read only
  for the judge) is not required.
* No takeover at all: ``Average latency`` is null where FDB's code divides by zero; no sample
  at all is an error.  Values are written at full precision (FDB prints the backchannel
  aggregate with 4 decimals).
* VAD: ``vad_segments.json`` or our Silero settings (:mod:`.fdb_io`), not the ``silero_vad``
  package; the arithmetic after it (16 kHz sample grid, 0.1 s rounding) is FDB's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing._fdb_rules import Takeover, mean_or_none, takeover
from duplexeval.peers._registry import PeerOptions, PeerScorer
from duplexeval.peers.fdb._io import read_chunks, read_event_time, write_outputs
from duplexeval.peers.fdb._samples import (
    OUTPUT_JSON,
    Listed,
    interruption_folders,
    listed_outputs,
    paired_outputs,
    sample_name,
)
from duplexeval.peers.fdb._vad_tasks import score_backchannel, score_timing

__all__ = ["FDB_V1", "TASKS", "score_fdb"]

TASKS = ("smooth_turn_taking", "pause_handling", "backchannel", "user_interruption",
         "v1_5_timing")
INTERRUPT_JSON = "interrupt.json"

Rows = list[dict[str, Any]]
TaskResult = tuple[Rows, dict[str, Any]]

PAPER_RULES: dict[str, list[dict[str, str]]] = {
    "smooth_turn_taking": [
        {"rule": "mis_paired_files", "code": "output and turn_taking files are collected in "
         "two lists and zipped: a folder without (or with two) turn_taking.json shifts the "
         "pairing of every later folder and zip drops the tail",
         "paper": "each output.json is scored against its own folder's turn_taking.json"},
        {"rule": "suffix_match", "code": "every file ending with output.json is a sample "
         "(clean_output.json too)", "paper": "only output.json"}],
    "pause_handling": [
        {"rule": "suffix_match", "code": "every file ending with output.json is a sample "
         "(clean_output.json too)", "paper": "only output.json"}],
    "user_interruption": [
        {"rule": "nested_folders", "code": "every folder at any depth under the root is a "
         "sample (os.walk)", "paper": "the root's own folders"},
        {"rule": "null_word_end", "code": "a null end time of the last word fails",
         "paper": "the last word's start stands for its end"}],
    "backchannel": [
        {"rule": "last_segment_wins", "code": "TOR is the class of the last short segment "
         "examined (unless a segment over 3 s came first)",
         "paper": "TOR 1 when any segment is a turn"},
        {"rule": "turns_listed_as_backchannels", "code": "every segment up to 3 s is listed "
         "as a backchannel, turns included, and the loop stops at the first segment over 3 s",
         "paper": "only segments under 1 s with at most 2 words, all of the output"},
        {"rule": "distance_named_divergence", "code": "JSD is scipy's Jensen-Shannon distance "
         "(natural log)", "paper": "the Jensen-Shannon divergence in bits"},
        {"rule": "silero_rate_16k", "code": "Silero is called without the file's rate, so "
         "times of a file not at 16 kHz are scaled by rate / 16000",
         "paper": "times of the audio as it is"},
        {"rule": "missing_output_json", "code": "a sample without output.json keeps the "
         "previous sample's TOR (the first one fails)", "paper": "an error"}],
    "v1_5_timing": [],
}
"""Where ``--paper`` departs from the code, per task."""


def _takeover(path: Path, reference: float | None, null_last_end: bool) -> Takeover:
    try:
        return takeover(read_chunks(path), reference, null_last_end=null_last_end)
    except ValueError as exc:
        raise DuplexevalError(f"{path}: {exc} (FDB's evaluator fails here)") from None


def _row(root: Path, item: Listed) -> dict[str, Any]:
    row: dict[str, Any] = {"sample": sample_name(root, item.folder)}
    if item.output is not None and item.output.name != OUTPUT_JSON:
        row["file"] = item.output.name
    return row


def _latency_fields(row: dict[str, Any], result: Takeover) -> None:
    row["TOR"] = result.tor
    row["latency"] = result.latency
    row["latency_raw"] = result.latency_raw


def _smooth(root: Path, out_dir: Path, compat: bool, options: PeerOptions) -> TaskResult:
    rows: Rows = []
    for item in paired_outputs(root, out_dir, compat):
        row = _row(root, item)
        if item.output is None:
            rows.append({**row, "skipped": "no output.json"})
            continue
        if item.annotation is None:
            rows.append({**row, "skipped": "no turn_taking.json left to pair with (FDB's "
                         "zip of two lists drops it)"})
            continue
        _latency_fields(row, _takeover(item.output, read_event_time(item.annotation, 0),
                                       null_last_end=False))
        if item.annotation != item.folder / "turn_taking.json":
            row["turn_taking"] = sample_name(root, item.annotation.parent) + "/" \
                + item.annotation.name
            row["notes"] = ["mis-paired: scored against another folder's turn_taking.json"]
        rows.append(row)
    scored = _scored(rows, root)
    return rows, {"Average take turn": mean_or_none([r["TOR"] for r in scored]),
                  "Average latency": mean_or_none([r["latency"] for r in scored
                                                   if r["TOR"] == 1])}


def _pause(root: Path, out_dir: Path, compat: bool, options: PeerOptions) -> TaskResult:
    rows: Rows = []
    for item in listed_outputs(root, out_dir, compat, "eval_pause_handling.py"):
        row = _row(root, item)
        if item.output is None:
            rows.append({**row, "skipped": "no output.json"})
            continue
        row["TOR"] = _takeover(item.output, None, null_last_end=True).tor
        rows.append(row)
    scored = _scored(rows, root)
    return rows, {"Average take turn": mean_or_none([r["TOR"] for r in scored])}


def _interruption(root: Path, out_dir: Path, compat: bool, options: PeerOptions) -> TaskResult:
    rows: Rows = []
    for folder in interruption_folders(root, out_dir, compat):
        row: dict[str, Any] = {"sample": sample_name(root, folder)}
        output = folder / OUTPUT_JSON
        if not output.is_file():
            if compat:
                raise DuplexevalError(f"{output}: not found (FDB's eval_user_interruption.py "
                                      "takes every folder under the root, at any depth, as a "
                                      "sample)")
            rows.append({**row, "skipped": "no output.json"})
            continue
        annotation = folder / INTERRUPT_JSON
        if not annotation.is_file():
            raise DuplexevalError(f"{annotation}: not found")
        end = read_event_time(annotation, 1)
        _latency_fields(row, _takeover(output, end, null_last_end=not compat))
        rows.append(row)
    scored = _scored(rows, root)
    return rows, {"Average rating": None,
                  "Average take turn": mean_or_none([r["TOR"] for r in scored]),
                  "Average latency": mean_or_none([r["latency"] for r in scored
                                                   if r["TOR"] == 1])}


def _scored(rows: Rows, root: Path) -> Rows:
    scored = [r for r in rows if "skipped" not in r]
    if not scored:
        raise DuplexevalError(f"{root}: no sample to score (FDB's evaluator divides by zero "
                              "here)")
    return scored


_SCORERS: dict[str, Callable[[Path, Path, bool, PeerOptions], TaskResult]] = {
    "smooth_turn_taking": _smooth,
    "pause_handling": _pause,
    "user_interruption": _interruption,
    "backchannel": score_backchannel,
    "v1_5_timing": score_timing,
}

NOT_COMPUTED: dict[str, list[str]] = {
    "user_interruption": ["Average rating: gpt-4-turbo relevance judge (LLM-judged)"],
    "v1_5_timing": ["behaviour tags (C_RESPOND, C_RESUME, ...): gpt-4o judge (LLM-judged)",
                    "prosody and quality before/after (UTMOSv2, WPM, pitch, intensity)"],
}
_FIELDS = ("TOR", "latency", "freq", "JSD", "latency_stop_list", "latency_resp_list")


def _key(row: dict[str, Any]) -> tuple[str, str]:
    return row["sample"], row.get("file", "")


def _changes(compat_rows: Rows, paper_rows: Rows) -> dict[str, Any]:
    """Per-sample values that differ between the compat and the paper scoring."""
    code = {_key(r): r for r in compat_rows if "skipped" not in r}
    paper = {_key(r): r for r in paper_rows if "skipped" not in r}
    values = [{"sample": k[0], **({"file": k[1]} if k[1] else {}), "field": f,
               "compat": code[k].get(f), "paper": paper[k].get(f)}
              for k in sorted(code.keys() & paper.keys()) for f in _FIELDS
              if code[k].get(f) != paper[k].get(f)]
    return {"values": values,
            "only_in_compat": ["/".join(filter(None, k)) for k in sorted(code.keys() - paper)],
            "only_in_paper": ["/".join(filter(None, k)) for k in sorted(paper.keys() - code)]}


def _paper_extras(task: str, root: Path, out_dir: Path, options: PeerOptions,
                  paper_rows: Rows) -> dict[str, Any]:
    extras: dict[str, Any] = {"differences": PAPER_RULES[task]}
    try:
        compat_rows, compat_agg = _SCORERS[task](root, out_dir, True, options)
    except DuplexevalError as exc:
        extras["compat"] = {"error": str(exc)}
        return extras
    extras["changed"] = _changes(compat_rows, paper_rows)
    extras["compat"] = compat_agg
    return extras


def score_fdb(task: str, root: Path, out_dir: Path, options: PeerOptions) -> dict[str, Any]:
    """Score FDB folder ``root`` for ``task``; write ``per_sample.jsonl`` and
    ``aggregate.json`` into ``out_dir`` and return the aggregate."""
    if task not in _SCORERS:
        raise DuplexevalError(f"--peer fdb-v1: unknown task {task!r} (one of: "
                              f"{', '.join(TASKS)})")
    if not root.is_dir():
        raise DuplexevalError(f"{root}: not a folder (expected FDB's sample folders)")
    rows, metrics = _SCORERS[task](root, out_dir, options.compat, options)
    aggregate: dict[str, Any] = {"peer": "fdb-v1", "task": task,
                                 "mode": "compat" if options.compat else "paper", **metrics,
                                 "n_samples": sum("skipped" not in r for r in rows),
                                 "n_skipped": sum("skipped" in r for r in rows),
                                 "not_computed": NOT_COMPUTED.get(task, [])}
    notes = [f"{r['sample']}: {n}" for r in rows for n in r.get("notes", [])]
    if notes:
        aggregate["notes"] = notes
    if not options.compat:
        aggregate.update(_paper_extras(task, root, out_dir, options, rows))
    write_outputs(out_dir, rows, aggregate)
    return aggregate


FDB_V1 = PeerScorer(
    name="fdb-v1", tasks=TASKS, score=score_fdb,
    description="Full-Duplex-Bench v1/v1.5 output folders (evaluation/eval_*.py, get_timing.py)")
