"""Acceptance: the annotator reproduces the official toy annotations (516 of 516 events)."""

from __future__ import annotations

from pathlib import Path

from duplexeval.data import load_dataset
from duplexeval.data._annotate import annotate_alignment_files
from duplexeval.timeline import approx_eq


def _key(e):  # kind and channel exact, times within 1e-6 s (rounded for set matching)
    return (e.kind, e.channel, round(e.start, 6), round(e.end, 6))


def test_annotation_reproduces_both_toy_sets(m3_toy: dict[str, Path]) -> None:
    total = 0
    for root in m3_toy.values():
        official, _ = load_dataset(root)
        derived = {d.id: d for d in annotate_alignment_files(sorted((root / "txt_align").glob(
            "*.txt")))}
        assert set(derived) == {d.id for d in official.dialogues}
        for dialogue in official.dialogues:
            mine = derived[dialogue.id].events
            assert sorted(map(_key, mine)) == sorted(map(_key, dialogue.events)), dialogue.id
            # the official files list events per channel sorted by start, IPU events first
            # at equal starts; ours come out in the same order
            theirs = sorted(dialogue.events, key=lambda e: e.channel)
            assert all(a.kind == b.kind and approx_eq(a.start, b.start) and
                       approx_eq(a.end, b.end) for a, b in zip(mine, theirs, strict=True))
            total += len(dialogue.events)
    assert total == 516
