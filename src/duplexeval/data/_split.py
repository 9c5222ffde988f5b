"""A deterministic, speaker-disjoint test/dev split (M3 sec. 3.2: "select approximately one hour
of the highest-scoring dialogues ... the remaining dialogues are kept speaker-disjoint from the
test set and can be used as a development set").

* **Ranking.**  Dialogues are ranked by a quality score, highest first (the paper uses DNSMOS
  per dialogue; any ``{id: score}`` works), ties and unscored dialogues after the scored ones in
  the order of ``sha256(id)``: without scores the ranking is a fixed pseudo-random order, the
  same on every machine.
* **Test.**  Dialogues are taken in rank order until their total length reaches
  ``test_seconds`` (about one hour; the last one taken may pass it).
* **Dev.**  Every other dialogue that shares no speaker with the test set.  The others are
  *dropped* (listed, never in either split).

A dialogue's speakers are ``{corpus}:{speaker}`` for each entry of its record's
``source.speakers`` (written by the recipes, one per channel); a dialogue without them counts
as its own speakers (``{source id or dialogue id}:{channel}``), so segments of one recorded
conversation always share their speakers.  Lengths are seconds (the audio's, else the end of the
annotations).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from duplexeval.data._dialogue import Dialogue

__all__ = ["SplitResult", "dialogue_speakers", "speaker_disjoint_split"]


@dataclass(frozen=True)
class SplitResult:
    """Ids of each part, in rank order (test) or input order (dev, dropped)."""

    test: tuple[str, ...]
    dev: tuple[str, ...]
    dropped: tuple[str, ...]
    test_seconds: float


def dialogue_speakers(dialogue: Dialogue) -> frozenset[str]:
    """The speakers of a dialogue (see the module docstring)."""
    source = dialogue.extra.get("source")
    source = source if isinstance(source, Mapping) else {}
    corpus = str(source.get("corpus", ""))
    speakers = source.get("speakers")
    if isinstance(speakers, Sequence) and not isinstance(speakers, str) and speakers:
        return frozenset(f"{corpus}:{s}" for s in speakers)
    owner = str(source.get("id", dialogue.id))
    return frozenset(f"{corpus}:{owner}:{ch}" for ch in (0, 1))


def _rank_key(dialogue: Dialogue, scores: Mapping[str, float]) -> tuple[int, float, str]:
    digest = hashlib.sha256(dialogue.id.encode("utf-8")).hexdigest()
    score = scores.get(dialogue.id)
    return (0, -score, digest) if score is not None else (1, 0.0, digest)


def speaker_disjoint_split(dialogues: Sequence[Dialogue], test_seconds: float = 3600.0,
                           scores: Mapping[str, float] | None = None) -> SplitResult:
    """Split ``dialogues`` into test, dev and dropped (see the module docstring)."""
    ranked = sorted(dialogues, key=lambda d: _rank_key(d, scores or {}))
    test: list[Dialogue] = []
    total = 0.0
    for dialogue in ranked:
        if total >= test_seconds:
            break
        test.append(dialogue)
        total += dialogue.duration
    taken = {d.id for d in test}
    test_speakers = frozenset().union(*(dialogue_speakers(d) for d in test))
    rest = [d for d in dialogues if d.id not in taken]
    dev = [d.id for d in rest if not dialogue_speakers(d) & test_speakers]
    dropped = [d.id for d in rest if dialogue_speakers(d) & test_speakers]
    return SplitResult(tuple(d.id for d in test), tuple(dev), tuple(dropped), total)
