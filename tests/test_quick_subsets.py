"""The demo's quick subsets: the smallest prefix of a suite's dialogues whose multi-gen plan has
enough smooth-turn-taking samples (found while synthesizing), keyed by that rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duplexeval import suites
from duplexeval.data import Need, load_dataset
from duplexeval.speech._tts import engine_class
from duplexeval.suites import QUICK_MIN_SHIFTS, build_suite, shift_samples, suite_path
from duplexeval.suites import _build as suite_build


def test_quick_subsets_are_keyed_by_their_rule(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    assert QUICK_MIN_SHIFTS == 20
    quick = suite_path("m3-qa-en", limit="quick")
    assert quick.name.startswith("m3-qa-en-quick-")
    assert quick not in (suite_path("m3-qa-en"), suite_path("m3-qa-en", limit=4))
    monkeypatch.setattr(suite_build, "QUICK_MIN_SHIFTS", 10)
    assert suite_path("m3-qa-en", limit="quick") != quick  # another rule, another build
    with pytest.raises(ValueError):
        suite_path("m3-qa-en", limit=0)


@pytest.mark.skipif(engine_class("piper").unavailable_reason() is not None,
                    reason="piper (duplexeval[tts-en]) not installed")
def test_quick_subset_is_the_smallest_prefix_reaching_the_shift_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    monkeypatch.setattr(suite_build, "QUICK_MIN_SHIFTS", 8)  # qa-01 has 6: two dialogues
    root = build_suite("m3-qa-en", limit="quick", progress=False)
    dataset, _ = load_dataset(root, audio=Need.REQUIRE)
    channels = suites.SUITES["m3-qa-en"].channels
    assert channels == (0,)
    assert len(dataset.dialogues) >= 2
    assert shift_samples(dataset.dialogues, channels) >= 8
    assert shift_samples(dataset.dialogues[:-1], channels) < 8
    # the prefix, in spec order
    specs = [p.stem for p in sorted(suites.SUITES["m3-qa-en"].spec_folder().glob("*.json"))]
    assert [d.id for d in dataset.dialogues] == specs[:len(dataset.dialogues)]
    quality = json.loads((root / "quality.json").read_text())
    assert "asr" not in quality and quality["dialogues"] == len(dataset.dialogues)
