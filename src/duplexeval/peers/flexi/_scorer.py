"""``duplexeval score --peer flexi --task TASK DIR -o OUT_DIR``: FLEXI's own output folders
re-scored at parity with its released evaluators (``ChristineCHEN274/FLEXI`` @2247b0d,
``evaluate/eval_*.py``; paper: Ge et al. 2025, arXiv 2509.22243).

Tasks: ``turn_taking``, ``pause_handling``, ``user_interrupt``, ``model_interrupt``,
``user_backchannel``, ``model_backchannel``.  Input: FLEXI's ``dialog_N`` folders as its
evaluators read them (:mod:`.flexi_io`).  Output (written atomically):

* ``OUT_DIR/per_sample.jsonl``: ``{"sample": "dialog_N", ...}`` per sample with FLEXI's
  per-sample names (``TOR``, ``latency``, ``jump_in``, ``delay``, ``interrupted``, ``freq``,
  ``JSD``); a sample the code skips is ``{"sample", "skipped": reason}``;
* ``OUT_DIR/aggregate.json``: the metrics under the names FLEXI prints (``TOR``, ``Latency``,
  ``JIR``, ``TTR``, ``Interrupt Rate``, ``BCR``/``freq``, ``JSD``; model-interrupt ``TOR`` is a
  count), with ``samples``, ``skipped``, ``definitions`` and ``not_computed``.

By default the code's conventions apply (numbers equal to FLEXI's, value for value); with
``--paper`` the paper's do, and ``aggregate.json`` lists each difference with both values.
Judged scores (FLEXI's gpt-4-turbo ratings: LLM Rating, EDS, coherence) come from our judge
client with ``--judge-url`` (:mod:`.flexi_judged`); without it their keys are ``null`` and named
in ``not_computed``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duplexeval._fileio import atomic_write_json, atomic_write_text, json_line
from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing._flexi_rules import latency_level
from duplexeval.peers._registry import PeerOptions, PeerScorer
from duplexeval.peers.flexi._backchannel import score_model_backchannel
from duplexeval.peers.flexi._judged import JUDGED, judge_flexi
from duplexeval.peers.flexi._overlap import score_user_backchannel, score_user_interrupt
from duplexeval.peers.flexi._tasks import LATENCY_LEVEL, PAPER_DIFFERENCES, TASKS, TaskResult
from duplexeval.runs._directory import ScoreFiles

__all__ = ["FLEXI", "PER_SAMPLE_FILE", "score_flexi"]

PER_SAMPLE_FILE = "per_sample.jsonl"

ALL_TASKS = {**TASKS, "user_interrupt": score_user_interrupt,
             "user_backchannel": score_user_backchannel}
TASK_ORDER = ("turn_taking", "pause_handling", "user_interrupt", "model_interrupt",
              "user_backchannel", "model_backchannel")
DIFFERENCES = {
    **PAPER_DIFFERENCES,
    "user_interrupt": [
        LATENCY_LEVEL,
        "Latency is the mean time from the interruption's start to the end of the model's "
        "overlapping speech over the samples where it yielded, instead of the mean overlap "
        "cluster length (eval_user_interrupt.py l. 196)",
        "a model that says nothing after a short overlap has yielded (TOR 0) instead of "
        "TOR 1 (the code decides only when a later word closes the cluster, l. 95-106)"],
    "user_backchannel": [
        "a gap longer than 1 s (the paper's 'resumes within 1 second') instead of 1.5 s "
        "(eval_user_backchannel.py l. 112), and the gap must surround or follow the "
        "backchannel (the code's index test reads the previous word, and the last word for "
        "the first gap)",
        "TTR: the paper's name for the interrupt rate"],
    "model_backchannel": [
        "JSD is the Jensen-Shannon divergence in base 2 (paper eq. 8, 0 to 1) instead of "
        "scipy's natural-log distance (eval_model_backchannel.py l. 154, at most 0.833)",
        "VAD boundaries are kept as computed instead of rounded to 0.1 s "
        "(get_speech_timestamps(return_seconds=True), l. 41-45)"],
}
"""What ``--paper`` changes, per task."""
NOT_COMPUTED = {"user_interrupt": ["LLM Rating"], "model_interrupt": ["EDS"],
                "user_backchannel": ["Coherence", "Coherent cases"]}
"""Judged scores, listed as not computed without ``--judge-url`` (:mod:`.flexi_judged`)."""


def _run(task: str, root: Path, options: PeerOptions, paper: bool,
         cache: dict[Path, Any]) -> TaskResult:
    if task == "model_backchannel":
        return score_model_backchannel(root, options, paper, cache)
    return ALL_TASKS[task](root, options, paper)


def _differences(task: str, paper: TaskResult, code: TaskResult) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"rule": text} for text in DIFFERENCES.get(task, [])]
    for name, value in paper.metrics.items():
        if name in code.metrics and code.metrics[name] != value:
            out.append({"metric": name, "paper": value, "code": code.metrics[name]})
    return out


def _aggregate(task: str, result: TaskResult, paper: bool, judged: bool) -> dict[str, Any]:
    skipped = len(result.rows) - len(result.scored)
    metrics = dict(result.metrics)
    if paper and isinstance(metrics.get("Latency"), float):
        metrics["Latency level"] = latency_level(metrics["Latency"])
    return {"task": task, **metrics, "samples": len(result.scored), "skipped": skipped,
            "definitions": "paper" if paper else "code", **result.notes,
            "not_computed": [] if judged else NOT_COMPUTED.get(task, [])}


def score_flexi(task: str, root: Path, out_dir: Path, options: PeerOptions) -> dict[str, Any]:
    """Score FLEXI's output folder ``root`` for ``task``; write ``per_sample.jsonl`` and
    ``aggregate.json`` under ``out_dir`` and return the aggregate."""
    paper = not options.compat
    cache: dict[Path, Any] = {}
    result = _run(task, root, options, paper, cache)
    if not result.rows:
        raise DuplexevalError(f"{root}: no FLEXI sample folder found (expected dialog_N "
                              f"folders for {task})")
    judged = options.judge is not None and task in JUDGED
    if judged:
        judge_flexi(task, root, result, options.judge)
    aggregate = _aggregate(task, result, paper, judged)
    if paper:
        code = _run(task, root, options, False, cache)
        aggregate["differences"] = _differences(task, result, code)
    atomic_write_text(Path(out_dir) / PER_SAMPLE_FILE, "".join(json_line(r) for r in result.rows))
    atomic_write_json(ScoreFiles(Path(out_dir)).aggregate, aggregate)
    return aggregate


FLEXI = PeerScorer(
    name="flexi", tasks=TASK_ORDER, score=score_flexi,
    description="FLEXI (Ge et al. 2025): six full-duplex scenarios, evaluate/eval_*.py")
