"""Dataset statistics in the form of the M3 paper's Table 3 (``duplexeval data stats``).

Per split and domain: dialogues, total hours, mean dialogue length (seconds), and per event kind
the count, total and mean duration.  A dialogue's length is its audio's when the audio is there,
else the end of its annotations.  An event's duration is ``end - start`` seconds, so a
TURN_SHIFT with an overlap (``start > end``) counts negative and its mean is the mean signed gap;
events of both channels are counted (the channel roles are decided per event at evaluation).
The Table 3 rows group kinds as the task table does (:data:`duplexeval.events.TASK_TABLE`):
SHIFT = TURN_SHIFT, PAUSE = TURN_HOLD + SHORTPAUSE, BC, BARGE_IN.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.events import TASK_TABLE, EventKind

__all__ = ["KindStats", "StatsGroup", "dataset_groups", "stats_rows"]


@dataclass
class KindStats:
    """Events of one kind: how many and their summed duration (seconds)."""

    n: int = 0
    total_s: float = 0.0

    @property
    def mean_s(self) -> float | None:
        """Mean duration in seconds, ``None`` without events."""
        return self.total_s / self.n if self.n else None


@dataclass
class StatsGroup:
    """The statistics of some dialogues (one split, one domain or all of them)."""

    dialogues: int = 0
    seconds: float = 0.0
    kinds: dict[str, KindStats] = field(
        default_factory=lambda: {k.value: KindStats() for k in EventKind})

    def add(self, dialogue: Dialogue) -> None:
        """Count one dialogue and its events."""
        self.dialogues += 1
        self.seconds += dialogue.duration
        for event in dialogue.events:
            stats = self.kinds[event.kind.value]
            stats.n += 1
            stats.total_s += event.end - event.start

    def table3(self) -> dict[str, int]:
        """Counts by Table 3 row (SHIFT, PAUSE, BC, BARGE_IN)."""
        out: dict[str, int] = {}
        for task in TASK_TABLE:
            out[task.short] = out.get(task.short, 0) + self.kinds[task.kind.value].n
        return out

    def to_json(self) -> dict[str, Any]:
        """The group as JSON: hours, seconds, counts and durations rounded to 1 ms."""
        return {
            "dialogues": self.dialogues,
            "hours": round(self.seconds / 3600, 4),
            "mean_dialogue_s": round(self.seconds / self.dialogues, 3) if self.dialogues
            else None,
            "table3": self.table3(),
            "events": {k: {"n": s.n, "total_s": round(s.total_s, 3),
                           "mean_s": None if s.mean_s is None else round(s.mean_s, 3)}
                       for k, s in self.kinds.items()},
        }


def dataset_groups(datasets: Iterable[Dataset]) -> dict[str, StatsGroup]:
    """One group per split, and per split and domain when a split holds several domains:
    ``test``, ``test/chat``, ...  A dialogue's domain is its own, else its dataset's, else
    ``-``."""
    groups: dict[str, StatsGroup] = {}
    for dataset in datasets:
        whole = groups.setdefault(dataset.split, StatsGroup())
        by_domain: dict[str, StatsGroup] = {}
        for dialogue in dataset:
            whole.add(dialogue)
            domain = dialogue.domain or dataset.domain or "-"
            by_domain.setdefault(domain, StatsGroup()).add(dialogue)
        if len(by_domain) > 1:
            for domain, group in sorted(by_domain.items()):
                groups[f"{dataset.split}/{domain}"] = group
    return groups


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def stats_rows(groups: dict[str, StatsGroup]) -> list[list[str]]:
    """Table rows (one column per group): the Table 3 rows, then every kind's count and mean
    duration."""
    cols = list(groups.values())
    rows = [["# Dialogues", *(str(g.dialogues) for g in cols)],
            ["Total dur. (h)", *(f"{g.seconds / 3600:.2f}" for g in cols)],
            ["Mean dur. (s)", *(_num(g.seconds / g.dialogues if g.dialogues else None, 1)
                                for g in cols)]]
    for short in dict.fromkeys(t.short for t in TASK_TABLE):
        rows.append([f"# {short}", *(str(g.table3()[short]) for g in cols)])
    for kind in EventKind:
        rows.append([f"{kind.value} n", *(str(g.kinds[kind.value].n) for g in cols)])
        rows.append([f"{kind.value} mean (s)", *(_num(g.kinds[kind.value].mean_s, 3)
                                                 for g in cols)])
    return rows
