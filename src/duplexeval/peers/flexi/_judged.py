"""FLEXI's judged scores on its own output folders, through our judge client
(``score --peer flexi --task T DIR -o OUT --judge-url URL --judge-model M``).

FLEXI asks gpt-4-turbo (``evaluate/eval_*.py``); our prompts are our own, versioned
(:mod:`duplexeval.judge._templates`), 0-5, and every judged sample's row carries a ``judge``
record (score, reason, judge model, prompt id and version, raw answer, or why it is unscored).

* ``user_interrupt`` -> ``LLM Rating`` (``flexi.topic_shift``, the paper's topic shift score):
  rated where the model yielded (TOR 0) and responded, as FLEXI rates them; inputs are
  ``interrupt.json``'s ``context`` and ``interrupt`` texts (the user's words inside the
  interruption span when those are absent) and the model's words starting after the
  interruption ends.
* ``model_interrupt`` -> ``EDS`` (``flexi.emergency``, emergency detection): every scored
  sample; the user's words (``input.json``) and the model's (``output.json``).
* ``user_backchannel`` -> ``Coherence`` (``flexi.coherence``): every scored sample; the model's
  words ending by the backchannel time, the user's words around it (from 0.5 s before to 1 s
  after), and the model's words after it.  ``Coherent cases`` counts the samples scored 4 or 5
  (the model continued its own utterance).  FLEXI's code asks for ``semantic_coherence`` but
  parses ``accuracy_score``, so its count is always 0; ours reads what it asks for.

Aggregates are the mean over scored samples (``None`` when none), with the unscored count in
``judged``.  A sample without model words is not sent: an empty response is scored 0 without
a call (``judge_model`` ``rule``), as in the M3 content judges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duplexeval.judge._batch import judge_batch
from duplexeval.judge._client import JudgeClient
from duplexeval.judge._records import JudgeItem, JudgeResult
from duplexeval.judge._store import AnswerCache, default_cache_path
from duplexeval.judge._templates import load_prompt
from duplexeval.metrics.content._score import JudgeSettings
from duplexeval.metrics.timing._flexi_rules import Word
from duplexeval.peers.flexi._io import INPUT_JSON, OUTPUT_JSON, load_json, parse_words
from duplexeval.peers.flexi._tasks import TaskResult

__all__ = ["JUDGED", "judge_flexi"]

JUDGED = {"user_interrupt": ("LLM Rating", "flexi.topic_shift"),
          "model_interrupt": ("EDS", "flexi.emergency"),
          "user_backchannel": ("Coherence", "flexi.coherence")}
"""Task -> (aggregate name, prompt id)."""
COHERENT_MIN = 4
INTERRUPT_JSON = "interrupt.json"


def _text(words: list[Word]) -> str:
    return " ".join(w.text.strip() for w in words if w.text.strip())


def _words(folder: Path, name: str) -> list[Word]:
    path = folder / name
    if not path.is_file():
        return []
    return parse_words(load_json(path, "transcript"), path, required=False)


def _interrupt_fields(folder: Path) -> dict[str, str]:
    data = load_json(folder / INTERRUPT_JSON, "interrupt annotation")
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    start, end = (first.get("timestamp") or [0.0, 0.0])[:2]
    user = [w for w in _words(folder, INPUT_JSON)
            if w.start is not None and start <= w.start < end]
    response = [w for w in _words(folder, OUTPUT_JSON) if w.start is not None and w.start >= end]
    return {"context": str(first.get("context") or "(not given)"),
            "interruption": str(first.get("interrupt") or _text(user)),
            "response": _text(response)}


def _backchannel_fields(folder: Path, time: float) -> dict[str, str]:
    out = [w for w in _words(folder, OUTPUT_JSON) if w.start is not None]
    user = [w for w in _words(folder, INPUT_JSON)
            if w.start is not None and time - 0.5 <= w.start <= time + 1.0]
    return {"before": _text([w for w in out if (w.end or w.start or 0.0) <= time]),
            "backchannel": _text(user) or "(a short backchannel)",
            "after": _text([w for w in out if (w.start or 0.0) > time])}


def _fields(task: str, folder: Path, row: dict[str, Any]) -> dict[str, str] | None:
    if task == "user_interrupt":
        if row.get("TOR") != 0 or not row.get("responded"):
            return None
        return _interrupt_fields(folder)
    if task == "model_interrupt":
        return {"user": _text(_words(folder, INPUT_JSON)),
                "response": _text(_words(folder, OUTPUT_JSON))}
    return _backchannel_fields(folder, float(row["backchannel_time"]))


def _record(result: JudgeResult | None, prompt_id: str, version: int) -> dict[str, Any]:
    if result is None:
        return {"score": 0, "reason": "empty response: scored without a call",
                "unscored_reason": None, "judge_model": "rule", "prompt_id": prompt_id,
                "prompt_version": version, "raw": None}
    return {"score": result.score, "reason": result.reason,
            "unscored_reason": result.unscored_reason, "judge_model": result.judge_model,
            "prompt_id": result.prompt_id, "prompt_version": result.prompt_version,
            "raw": result.raw}


def judge_flexi(task: str, root: Path, result: TaskResult, judge: JudgeSettings) -> None:
    """Judge the task's samples and put the records and aggregates into ``result``."""
    name, prompt_id = JUDGED[task]
    template = load_prompt(prompt_id)
    asked: list[tuple[dict[str, Any], JudgeItem | None]] = []
    for row in result.scored:
        fields = _fields(task, root / row["sample"], row)
        if fields is None:
            continue
        item = template.render(f"{task}::{row['sample']}", "en", **fields)
        empty = not (fields.get("response") or fields.get("after") or fields.get("before"))
        asked.append((row, None if empty else item))
    client = JudgeClient(judge.base_url, judge.model, timeout=judge.timeout)
    try:
        with AnswerCache(judge.cache_path or default_cache_path()) as cache:
            outcome = judge_batch(client, [i for _, i in asked if i is not None], cache,
                                  max_concurrency=judge.concurrency)
    finally:
        client.close()
    by_id = {r.item_id: r for r in outcome.results}
    scores = []
    for row, asked_item in asked:
        row["judge"] = _record(by_id[asked_item.item_id] if asked_item else None, prompt_id,
                               template.prompt.version)
        if row["judge"]["score"] is not None:
            scores.append(row["judge"]["score"])
    result.metrics[name] = sum(scores) / len(scores) if scores else None
    if task == "user_backchannel":
        result.metrics["Coherent cases"] = sum(s >= COHERENT_MIN for s in scores)
    result.notes["judged"] = {"metric": name, "n": len(scores),
                              "unscored": len(asked) - len(scores), "judge_model": judge.model,
                              "usage": outcome.meter.summary()}
