"""LLM annotation of reference backchannel positions for a user's own narratives, written as
the per-item distribution the model-backchannel JSD reads (FLEXI did this with GPT-4o,
``tools/get_AI_ground_truth/get_gt_gpt.py``).

Input: the narrator's words with times (seconds).  The judge (prompt
``flexi.backchannel_positions``, a JSON answer ``{"positions": [t, ...], "reason": ...}``) names
the moments where a listener would backchannel.  Output, per item, FLEXI's distribution::

    bins     0.0  0.2  0.4  0.6 ...        num_bins = int(duration / 0.2) + 1
    counts    0    0    1    0  ...        each position t adds 1 to bin int(t / 0.2)
    p        (counts + 1e-10) / sum        no position at all: uniform (FLEXI's rule)

written as ``{item: [p0, p1, ...]}`` (the shape of FDB's ``icc_gt_distribution.json`` that
``score --peer ... --reference-distribution`` reads).  Positions outside ``[0, duration]`` are
dropped and counted.  An item whose answer cannot be used (a failed call, no JSON object, no
list of numbers) gets no distribution and is listed with its reason in the provenance file,
never silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._audio import audio_info
from duplexeval._fileio import read_json
from duplexeval.data._validate import load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.judge._batch import judge_batch
from duplexeval.judge._client import JudgeClient
from duplexeval.judge._records import JudgeResult
from duplexeval.judge._store import AnswerCache, default_cache_path
from duplexeval.judge._templates import load_prompt
from duplexeval.metrics.content._score import JudgeSettings

__all__ = ["BIN_SECONDS", "Narrative", "annotate_positions", "distribution", "narratives_from"]

BIN_SECONDS = 0.2
EPSILON = 1e-10
PROMPT_ID = "flexi.backchannel_positions"


@dataclass(frozen=True)
class Narrative:
    """One item: its id, duration (s) and words ``(text, start, end)`` in seconds."""

    item_id: str
    duration: float
    words: tuple[tuple[str, float, float], ...]


def distribution(positions: Sequence[float], duration: float) -> list[float]:
    """FLEXI's per-item distribution (module docstring)."""
    bins = np.zeros(int(duration / BIN_SECONDS) + 1)
    for t in positions:
        index = int(t / BIN_SECONDS)
        if 0 <= index < len(bins):
            bins[index] += 1
    if bins.sum() == 0:
        bins = np.ones(len(bins))
    bins = bins + EPSILON
    return [float(x) for x in bins / bins.sum()]


def _positions(result: JudgeResult, duration: float) -> tuple[list[float] | None, str | None,
                                                              int]:
    if result.answer is None:
        return None, result.unscored_reason or "no answer", 0
    raw = result.answer.get("positions")
    if not isinstance(raw, list) or not all(
            isinstance(t, (int, float)) and not isinstance(t, bool) for t in raw):
        return None, "'positions' is not a list of numbers", 0
    kept = sorted(float(t) for t in raw if 0.0 <= float(t) <= duration)
    return kept, None, len(raw) - len(kept)


def annotate_positions(items: Sequence[Narrative], judge: JudgeSettings,
                       language: str = "en") -> tuple[dict[str, list[float]],
                                                       list[dict[str, Any]]]:
    """The distributions of the items the judge answered, and one provenance record per item
    (positions, dropped count, judge model, prompt id and version, raw answer, or the reason
    it has no distribution)."""
    template = load_prompt(PROMPT_ID)
    rendered = [template.render(
        item.item_id, language,
        words="\n".join(f"{s:.2f}-{e:.2f} {t}" for t, s, e in item.words) or "(no words)")
        for item in items]
    client = JudgeClient(judge.base_url, judge.model, timeout=judge.timeout)
    try:
        with AnswerCache(judge.cache_path or default_cache_path()) as cache:
            outcome = judge_batch(client, rendered, cache, max_concurrency=judge.concurrency)
    finally:
        client.close()
    out: dict[str, list[float]] = {}
    records = []
    for item, result in zip(items, outcome.results, strict=True):
        positions, reason, dropped = _positions(result, item.duration)
        if positions is not None:
            out[item.item_id] = distribution(positions, item.duration)
        records.append({"item": item.item_id, "positions": positions, "dropped": dropped,
                        "unusable_reason": reason, "judge_model": result.judge_model,
                        "prompt_id": result.prompt_id, "prompt_version": result.prompt_version,
                        "raw": result.raw})
    return out, records


def _flexi_narrative(folder: Path, root: Path) -> Narrative:
    path = folder / "input.json"
    data = read_json(path, "FLEXI input transcript")
    chunks = data.get("chunks") if isinstance(data, dict) else None
    if not isinstance(chunks, list):
        raise DuplexevalError(f"{path}: expected {{\"chunks\": [{{\"text\", \"timestamp\"}}]}}")
    words = []
    for i, c in enumerate(chunks):
        stamp = c.get("timestamp") if isinstance(c, dict) else None
        if not isinstance(stamp, list) or len(stamp) < 2 or not all(
                isinstance(x, (int, float)) for x in stamp[:2]):
            raise DuplexevalError(f"{path}: chunks[{i}] needs text and timestamp [start, end]")
        words.append((str(c.get("text", "")), float(stamp[0]), float(stamp[1])))
    wav = folder / "input.wav"
    duration = audio_info(wav).duration if wav.is_file() else max(
        (e for _, _, e in words), default=0.0)
    return Narrative(folder.relative_to(root).as_posix() or ".", duration, tuple(words))


def narratives_from(source: Path, split: str = "test", channel: int = 0) -> list[Narrative]:
    """The narratives of a FLEXI-style root (every folder below it with ``input.json``; the
    item is the folder path, the duration that of ``input.wav``, else the last word's end) or
    of a dataset in the M3 layout (one item per dialogue: ``channel``'s words, the dialogue's
    duration)."""
    if not source.is_dir():
        raise DuplexevalError(f"{source}: not a folder")
    folders = sorted(p.parent for p in source.rglob("input.json"))
    if folders:
        return [_flexi_narrative(f, source) for f in folders]
    dataset, _ = load_dataset(source, split)
    return [Narrative(d.id, d.duration, tuple((w.text, w.start, w.end)
                                              for w in d.words_on(channel)))
            for d in dataset]
