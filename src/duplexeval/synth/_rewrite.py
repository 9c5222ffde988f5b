"""The MT-QA text step of the M3 paper (sec. 3.2.1, step 2): written dialogue specs rewritten
into spoken style and, when asked, translated into Japanese, by an LLM behind any
OpenAI-compatible endpoint (``duplexeval data rewrite``).

* **Input**: dialogue spec files (JSON, :mod:`duplexeval.synth._spec`), e.g. the ``specs/`` that
  ``data import topiocqa`` writes.  **Output**: the same specs with new turn texts, one file
  each, for ``duplexeval synth``; and ``rewrite.jsonl``, one record per spec and step.
* **Steps**, in order: ``spoken`` (prompt ``mtqa.spoken``: written to spoken English) and
  ``translate`` (prompt ``mtqa.translate_ja``: spoken English to spoken Japanese).  One request
  per spec and step carries the whole dialogue (numbered ``USER``/``SYSTEM`` lines, so
  references to earlier turns survive); the answer is ``{"turns": [one string per line]}``.
* **Client**: :class:`duplexeval.judge.JudgeClient` with :func:`~duplexeval.judge.judge_batch`:
  the SQLite answer cache (a rerun makes no request), retries, bounded concurrency.  Nothing is
  sent anywhere unless the caller gives an endpoint.
* **Failures are kept, not dropped**: a call that fails, an answer that is not a JSON object
  with exactly one non-empty string per line, or a result the spec format rejects leaves that
  spec's texts as they were for that step; its record says ``kept`` with the reason, and the
  summary counts it.  A spec with in-turn positions (pauses, backchannels, interruptions, all
  counted in words or characters of the text) is kept too: a new text would move them; so is
  a spec not in English (``language`` other than ``en``; after ``translate`` a spec is in
  Japanese, so a spec the spoken step kept is still translated from its written text).
* **Records** (``rewrite.jsonl``): spec id, step, ``status`` (``rewritten`` / ``kept``),
  ``reason``, ``model``, ``prompt_id``, ``prompt_version``, ``cached``, and the texts before.
* **Translation** sets ``language`` to ``ja`` and drops each speaker's ``voice`` (an English
  engine's voice; the synthesizer then picks Japanese ones).  A question's reference
  ``answer`` becomes the translated text of the answer turn that follows it (the original is
  in the record), except TopiOCQA's ``UNANSWERABLE``, which stays.  Rewriting into spoken
  English keeps the written reference answers.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from duplexeval._fileio import atomic_write_json, atomic_write_text, json_line
from duplexeval.errors import DuplexevalError
from duplexeval.judge import (
    AnswerCache,
    JudgeClient,
    JudgeItem,
    JudgeResult,
    judge_batch,
    load_prompt,
)
from duplexeval.judge._meter import UsageMeter

__all__ = ["RECORDS_FILE", "STEPS", "RewriteOutcome", "RewriteRecord", "dialogue_lines",
           "read_specs", "rewrite_specs", "write_rewritten"]

STEPS = {"spoken": "mtqa.spoken", "translate": "mtqa.translate_ja"}
"""Step name -> the prompt it uses (``judge/prompt_texts/{id}.toml``)."""
RECORDS_FILE = "rewrite.jsonl"
UNANSWERABLE = "UNANSWERABLE"
_POSITIONED = ("pause", "pauses", "backchannels", "interrupted_after_word",
               "interrupted_after_char")


@dataclass(frozen=True)
class RewriteRecord:
    """What one step did to one spec (see the module docstring)."""

    spec_id: str
    step: str
    status: str
    reason: str | None
    model: str
    prompt_id: str
    prompt_version: int
    cached: bool
    before: list[str]


@dataclass(frozen=True)
class RewriteOutcome:
    """The specs after every step, the records in spec then step order, and the meters."""

    specs: list[dict[str, Any]]
    records: list[RewriteRecord]
    meters: list[UsageMeter]

    def counts(self) -> dict[str, dict[str, int]]:
        """``{step: {"rewritten": n, "kept": n}}``."""
        out: dict[str, dict[str, int]] = {}
        for r in self.records:
            out.setdefault(r.step, {"rewritten": 0, "kept": 0})[r.status] += 1
        return out


def read_specs(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The ``*.json`` dialogue specs of ``folder`` (sorted by name), each checked by the spec
    format; a bad one, or an id used twice, is an error naming the file."""
    from duplexeval.synth._spec import load_spec

    paths = sorted(p for p in folder.glob("*.json") if p.name != "suite.json") \
        if folder.is_dir() else []
    if not paths:
        raise DuplexevalError(f"{folder}: no dialogue spec files (*.json)")
    out: list[tuple[Path, dict[str, Any]]] = []
    seen: dict[str, Path] = {}
    for path in paths:
        spec_id = load_spec(path).id  # raises DatasetInvalid naming the file and field
        if spec_id in seen:
            raise DuplexevalError(f"{path}: id {spec_id!r} is also the id of {seen[spec_id]}")
        seen[spec_id] = path
        out.append((path, json.loads(path.read_text(encoding="utf-8"))))
    return out


def dialogue_lines(spec: dict[str, Any]) -> str:
    """The turns as numbered lines, ``1. USER: text``, the speaker ids upper-cased."""
    return "\n".join(f"{i}. {str(t['speaker']).upper()}: {' '.join(str(t['text']).split())}"
                     for i, t in enumerate(spec["turns"], start=1))


def _item(spec: dict[str, Any], step: str) -> JudgeItem:
    template = load_prompt(STEPS[step])
    return template.render(f"{spec['id']}:{step}", "en", dialogue=dialogue_lines(spec),
                           count=str(len(spec["turns"])))


def _texts(result: JudgeResult, count: int) -> tuple[list[str] | None, str | None]:
    """The new texts of an answer, or ``None`` and why the answer is unusable."""
    if result.answer is None:
        return None, result.unscored_reason or "no answer"
    turns = result.answer.get("turns")
    if not isinstance(turns, list) or not all(isinstance(t, str) and t.strip() for t in turns):
        return None, 'the answer has no "turns" list of non-empty strings'
    if len(turns) != count:
        return None, f"the answer has {len(turns)} turn(s) for {count} line(s)"
    return [" ".join(t.split()) for t in turns], None


def _applied(spec: dict[str, Any], step: str, texts: list[str]) -> dict[str, Any]:
    new = copy.deepcopy(spec)
    for turn, text in zip(new["turns"], texts, strict=True):
        turn["text"] = text
    if step == "translate":
        new["language"] = "ja"
        for speaker in new["speakers"]:
            speaker.pop("voice", None)
        turns = new["turns"]
        for i, turn in enumerate(turns):
            answer = turn.get("answer")
            if answer is not None and answer != UNANSWERABLE and i + 1 < len(turns):
                turn["answer"] = turns[i + 1]["text"]
    return new


def _valid(spec: dict[str, Any]) -> str | None:
    from pydantic import ValidationError

    from duplexeval.synth._spec import DialogueSpec

    try:
        DialogueSpec.model_validate(spec)
    except ValidationError as exc:
        return f"the result is not a valid spec: {exc.errors()[0]['msg']}"
    return None


def _skip_reason(spec: dict[str, Any]) -> str | None:
    """Why a spec is not sent (both prompts take English without in-turn positions)."""
    if spec.get("language") != "en":
        return f"the spec is in {spec.get('language')!r}; the prompts take English"
    if any(t.get(k) for k in _POSITIONED for t in spec["turns"]):
        return ("the spec has in-turn positions (pauses, backchannels, interruptions) a new "
                "text would move")
    return None


def _step(specs: list[dict[str, Any]], step: str, client: JudgeClient, cache: AnswerCache,
          concurrency: int) -> tuple[list[dict[str, Any]], list[RewriteRecord], UsageMeter]:
    prompt = load_prompt(STEPS[step]).prompt
    skips = [_skip_reason(s) for s in specs]
    items = [_item(s, step) for s, skip in zip(specs, skips, strict=True) if skip is None]
    outcome = judge_batch(client, items, cache, max_concurrency=concurrency)
    results = iter(outcome.results)
    out: list[dict[str, Any]] = []
    records: list[RewriteRecord] = []
    for spec, skip in zip(specs, skips, strict=True):
        before = [t["text"] for t in spec["turns"]]
        result = None if skip else next(results)
        texts, reason = (None, skip) if result is None else _texts(result, len(before))
        new = _applied(spec, step, texts) if texts is not None else spec
        reason = reason or _valid(new)
        ok = reason is None
        out.append(new if ok else spec)
        records.append(RewriteRecord(
            spec["id"], step, "rewritten" if ok else "kept", reason, client.model,
            prompt.prompt_id, prompt.version, bool(result and result.cached), before))
    return out, records, outcome.meter


def rewrite_specs(specs: Sequence[dict[str, Any]], steps: Sequence[str], client: JudgeClient,
                  cache: AnswerCache, concurrency: int = 4) -> RewriteOutcome:
    """Run ``steps`` (names of :data:`STEPS`, in order) over ``specs``; see the module
    docstring.  The input specs are not modified."""
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise ValueError(f"unknown rewrite step(s) {unknown} (known: {', '.join(STEPS)})")
    current = [copy.deepcopy(s) for s in specs]
    records: list[RewriteRecord] = []
    meters: list[UsageMeter] = []
    for step in steps:
        current, step_records, meter = _step(current, step, client, cache, concurrency)
        records += step_records
        meters.append(meter)
    order = {s["id"]: i for i, s in enumerate(specs)}
    records.sort(key=lambda r: (order[r.spec_id], list(steps).index(r.step)))
    return RewriteOutcome(current, records, meters)


def write_rewritten(out_dir: Path, names: Sequence[str], outcome: RewriteOutcome) -> None:
    """``out_dir/{name}`` for each spec (the input file names) and ``out_dir/rewrite.jsonl``."""
    for name, spec in zip(names, outcome.specs, strict=True):
        atomic_write_json(out_dir / name, spec)
    atomic_write_text(out_dir / RECORDS_FILE,
                      "".join(json_line(asdict(r)) for r in outcome.records))
