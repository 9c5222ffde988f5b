"""``data import topiocqa``: TopiOCQA's written conversations into dialogue specs (en, task).

Source (``/work/shared/references/datasets.md`` section 3; the user brings the file): the
Zenodo ``topiocqa_{train,dev}.json`` (a JSON array) or the HF ``topiocqa_{train,valid}.jsonl``
(one object a line), one object per turn with at least ``Conversation_no`` (int, 1-based),
``Turn_no`` (int, 1-based), ``Question`` and ``Answer`` (strings; ``UNANSWERABLE`` when there is
no answer); ``Topic`` and ``Additional_answers`` (``[{"Answer": ...}]``) are used when present.

TopiOCQA has no audio: each conversation becomes a dialogue spec for the synthesizer
(``duplexeval synth``, or ``data import topiocqa --synth``), written to
``DATASET_DIR/specs/topiocqa_{split}_{NNNN}.json`` (the M3 id style ``topiocqa_dev_0001``)::

    user   (channel 1)  the Question, as written (TopiOCQA lower-cases it)
    system (channel 0)  the Answer, starting ``--answer-gap`` (0.2 s) after the question ends;
                        an UNANSWERABLE answer is spoken as ``--unanswerable-text``

**Channel roles follow M3's task data: channel 1 is the user (questions), channel 0 the system
(answers)** - evaluate with ``--channels 1``.  Each user turn's ``answer`` is the gold Answer.
``DATASET_DIR/references.jsonl`` keeps, per question, the gold list of TopiOCQA's F1
(``[Answer] + Additional_answers[].Answer``) keyed by ``(Conversation_no, Turn_no)``.  The
spoken-style rewriting and the Japanese translation of the paper (sec. 3.2.1) are a separate
step on these specs, ``duplexeval data rewrite`` (:mod:`duplexeval.synth._rewrite`, it needs an LLM
endpoint); without it the written text is spoken as it is.  So a short answer (``Rembrandt``)
is spoken in under 0.8 s and the annotator makes it a BC of the system, not a TURN with a
TURN_SHIFT before it; the command counts such answers (fewer than :data:`SHORT_ANSWER_WORDS`
words) in its summary.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duplexeval._fileio import atomic_write_text, json_line, loads_json
from duplexeval.data.recipes._common import source_error
from duplexeval.data.recipes._registry import Recipe
from duplexeval.errors import number_type

__all__ = ["RECIPE", "QaTurn", "conversation_specs", "read_topiocqa", "write_specs"]

SPEC_DIR = "specs"
REFERENCES_FILE = "references.jsonl"
SHORT_ANSWER_WORDS = 3
"""Answers of fewer words are likely spoken in under 0.8 s (annotated BC, not TURN)."""
USER_CHANNEL = 1
SYSTEM_CHANNEL = 0


@dataclass(frozen=True)
class QaTurn:
    """One TopiOCQA turn, with the source line it came from."""

    line: int
    conversation: int
    turn: int
    question: str
    answer: str
    topic: str
    answers: tuple[str, ...]
    """The gold list: ``Answer`` then every ``Additional_answers[].Answer``."""


def _array_items(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """``(line, element)`` of a JSON array, each with the line it starts on."""
    decoder = json.JSONDecoder()
    i = len(text) - len(text.lstrip())
    if not text[i:].startswith("["):
        source_error(path, text.count("\n", 0, i) + 1, "expected a JSON array of turns")
    i += 1
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if text.startswith("]", i):
            return
        line = text.count("\n", 0, i) + 1
        try:
            obj, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            source_error(path, exc.lineno, f"malformed JSON: {exc.msg}")
        yield line, obj
        while i < len(text) and text[i].isspace():
            i += 1
        if text.startswith(",", i):
            i += 1
        elif not text.startswith("]", i):
            source_error(path, text.count("\n", 0, i) + 1, "expected ',' or ']' in the array")


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        source_error(path, None, "file not found")
    except UnicodeDecodeError as exc:
        source_error(path, None, f"not UTF-8: {exc}")
    if path.suffix.lower() != ".jsonl":
        yield from _array_items(path, text)
        return
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.strip():
            try:
                yield number, loads_json(raw)
            except json.JSONDecodeError as exc:
                source_error(path, number, f"malformed JSON: {exc.msg}")


def _turn(path: Path, line: int, obj: Any) -> QaTurn:
    if not isinstance(obj, dict):
        source_error(path, line, "expected a turn object")
    for key in ("Conversation_no", "Turn_no"):
        value = obj.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            source_error(path, line, f"{key} must be an integer >= 1, got {value!r}")
    for key in ("Question", "Answer"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            source_error(path, line, f"{key} must be a non-empty string")
    extra = obj.get("Additional_answers") or []
    if not isinstance(extra, list) or not all(isinstance(a, dict) and isinstance(
            a.get("Answer"), str) for a in extra):
        source_error(path, line, 'Additional_answers must be a list of {"Answer": str, ...}')
    answer = obj["Answer"].strip()
    return QaTurn(line, obj["Conversation_no"], obj["Turn_no"], obj["Question"].strip(), answer,
                  str(obj.get("Topic") or ""), (answer, *(a["Answer"] for a in extra)))


def read_topiocqa(path: Path) -> dict[int, list[QaTurn]]:
    """Turns grouped by conversation, each conversation's turns in ``Turn_no`` order; a turn
    number used twice, or one missing, is an error on its line."""
    conversations: dict[int, list[QaTurn]] = {}
    for line, obj in _records(path):
        turn = _turn(path, line, obj)
        conversations.setdefault(turn.conversation, []).append(turn)
    for turns in conversations.values():
        turns.sort(key=lambda t: t.turn)
        for expected, turn in enumerate(turns, start=1):
            if turn.turn != expected:
                what = "repeated" if turn.turn < expected else f"follows turn {expected - 1}"
                source_error(path, turn.line, f"conversation {turn.conversation}: Turn_no "
                             f"{turn.turn} {what} (turns are numbered 1, 2, ...)")
    if not conversations:
        source_error(path, None, "no turns")
    return dict(sorted(conversations.items()))


def spec_id(split: str, conversation: int) -> str:
    """``topiocqa_{split}_{NNNN}``, e.g. ``topiocqa_dev_0001``."""
    return f"topiocqa_{split}_{conversation:04d}"


def conversation_specs(turns: list[QaTurn], split: str, answer_gap: float = 0.2,
                       unanswerable: str = "Sorry, I don't know.") -> dict[str, Any]:
    """The dialogue spec (JSON object) of one conversation; see the module docstring."""
    spoken: list[dict[str, Any]] = []
    for t in turns:
        spoken.append({"speaker": "user", "text": t.question, "answer": t.answer})
        text = unanswerable if t.answer == "UNANSWERABLE" else t.answer
        spoken.append({"speaker": "system", "text": text, "gap": answer_gap})
    return {"id": spec_id(split, turns[0].conversation), "language": "en", "domain": "task",
            "title": turns[0].topic,
            "speakers": [{"id": "user", "channel": USER_CHANNEL},
                         {"id": "system", "channel": SYSTEM_CHANNEL}],
            "turns": spoken}


def write_specs(conversations: dict[int, list[QaTurn]], root: Path, split: str,
                answer_gap: float = 0.2, unanswerable: str = "Sorry, I don't know.") -> int:
    """Write ``root/specs/*.json`` and ``root/references.jsonl``; the number of specs."""
    refs = []
    for turns in conversations.values():
        spec = conversation_specs(turns, split, answer_gap, unanswerable)
        atomic_write_text(root / SPEC_DIR / f"{spec['id']}.json",
                          json.dumps(spec, ensure_ascii=False, indent=2) + "\n")
        refs += [{"id": spec["id"], "turn": 2 * i, "Conversation_no": t.conversation,
                  "Turn_no": t.turn, "question": t.question, "answers": list(t.answers)}
                 for i, t in enumerate(turns)]
    atomic_write_text(root / REFERENCES_FILE, "".join(json_line(r) for r in refs))
    return len(conversations)


def default_split(path: Path) -> str:
    """``train`` for a file named like ``*train*``, else ``dev`` (``valid`` is the dev set)."""
    return "train" if "train" in path.stem.lower() else "dev"


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source-split", default=None, help="the TopiOCQA split named in the ids "
                   "(default: train for *train* files, else dev)")
    p.add_argument("--answer-gap", type=number_type(float, 0, unit="seconds"), default=0.2,
                   help="silence from a question's end to its answer (s; M3: 0.2)")
    p.add_argument("--unanswerable-text", default="Sorry, I don't know.",
                   help="what the system says for an UNANSWERABLE answer")
    p.add_argument("--limit", type=number_type(int, 1), default=None,
                   help="only the first N conversations")
    p.add_argument("--synth", action="store_true", help="also synthesize the specs into the "
                   "dataset (duplexeval synth with its defaults)")


def _run(args: argparse.Namespace, staging: Path) -> str:
    source = Path(args.source)
    conversations = read_topiocqa(source)
    if args.limit is not None:
        conversations = dict(list(conversations.items())[: args.limit])
    n = write_specs(conversations, staging, args.source_split or default_split(source),
                    args.answer_gap, args.unanswerable_text)
    short = sum(len(t.answer.split()) < SHORT_ANSWER_WORDS for turns in conversations.values()
                for t in turns if t.answer != "UNANSWERABLE")
    return (f"{n} dialogue spec(s) from TopiOCQA in {SPEC_DIR}/, references in "
            f"{REFERENCES_FILE}; {short} answer(s) of under {SHORT_ANSWER_WORDS} words (spoken "
            "as is, likely annotated BC rather than TURN)")


RECIPE = Recipe("topiocqa", "TopiOCQA conversations as dialogue specs (English QA; --synth "
                "voices them)", "topiocqa_dev.json (JSON array) or topiocqa_valid.jsonl",
                _add_arguments, _run, writes_specs=True)
