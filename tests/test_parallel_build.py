"""Suite builds in worker processes: the same bytes whatever the number of workers or the
grouping of dialogues that share text, and a build that stopped part-way resumes from the
dialogues it had finished (cached one by one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from duplexeval.suites import SUITES
from duplexeval.suites import _build as suite_build
from duplexeval.synth._build import SynthSettings
from duplexeval.synth._mtr_synthesizer import MtrSynthesizer
from duplexeval.synth._parallel import build_dialogues, share_groups
from duplexeval.synth._spec import DialogueSpec, load_specs


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # synthesizes two flexi-en dialogues three times (29 s; m3-qa-en's: 49 s)
def test_one_and_two_workers_and_a_resumed_build_write_the_same_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jobs=1 vs jobs=2 (separate caches): every file byte-identical.  Then, in a third cache,
    a build that got only the first dialogue done (``limit=1``, as a killed build leaves its
    finished dialogues) is resumed as the two-dialogue build: the first dialogue's file is
    not rewritten, one more appears, and the build's bytes are the same."""
    builds = {}
    for jobs in (1, 2):
        monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / f"cache{jobs}"))
        builds[jobs] = _files(suite_build.build_suite("flexi-en", limit=2, progress=False,
                                                      quality=False, jobs=jobs,
                                                      synthesize=True))
    assert builds[1] == builds[2]
    assert sum(name.endswith(".wav") for name in builds[1]) == 2

    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / "cache3"))
    suite_build.build_suite("flexi-en", limit=1, progress=False, quality=False, jobs=1,
                            synthesize=True)
    cache = tmp_path / "cache3" / "dialogues"
    (first,) = cache.glob("*.pkl")
    stamp = first.stat().st_ino, first.stat().st_mtime_ns
    resumed = _files(suite_build.build_suite("flexi-en", limit=2, progress=False,
                                             quality=False, jobs=2, synthesize=True))
    assert resumed == builds[1]
    assert len(list(cache.glob("*.pkl"))) == 2  # one more dialogue built
    assert (first.stat().st_ino, first.stat().st_mtime_ns) == stamp  # the first not redone


def _spec(spec_id: str, texts: list[str], language: str = "en") -> DialogueSpec:
    speakers = [{"id": "user", "channel": 0}, {"id": "system", "channel": 1}]
    turns = [{"speaker": ("user", "system")[k % 2], "text": t} for k, t in enumerate(texts)]
    return DialogueSpec.model_validate({"id": spec_id, "language": language,
                                        "speakers": speakers, "turns": turns})


def test_dialogues_that_share_most_of_their_text_are_grouped() -> None:
    """a and b share 3 of 4 turns, b and d 2 of 4 (half: joined, so a, b, d are one group);
    c shares only the opener (1 of 4); e has a's text in Japanese (another language)."""
    opener = "Hello, how can I help?"
    a = _spec("a", [opener, "one", "two", "three"])
    b = _spec("b", [opener, "one", "two", "four"])
    c = _spec("c", [opener, "five", "six", "seven"])
    d = _spec("d", ["eight", "nine", "two", "four"])
    e = _spec("e", [opener, "one", "two", "three"], language="ja")
    assert share_groups([a, b, c, d, e]) == [[0, 1, 3], [2], [4]]
    assert share_groups([c, e]) == [[0], [1]]
    assert share_groups([]) == []


def test_the_mtr_suite_groups_each_topic_and_keeps_the_items_apart() -> None:
    """mtr-en: each topic's five feature dialogues with its combination dialogue (they share
    the conversation), every instruction-following and safety dialogue alone (they share only
    the opener)."""
    specs = load_specs(SUITES["mtr-en"].spec_folder())
    groups = [[specs[i].id for i in g] for g in share_groups(specs)]
    topics = [g for g in groups if len(g) > 1]
    assert all(len(g) == 6 and g[0].startswith("c") for g in topics)
    assert all({s[1:3] for s in g} == {g[0][1:3]} for g in topics)  # one topic number
    items = [s.id for s in specs if s.mtr is not None and s.mtr.group != "feature"
             and s.mtr.group != "combination"]
    assert [[i] for i in items] == [g for g in groups if g[0] in items]


@pytest.mark.slow  # four one-worker builds of three short dialogues
def test_a_grouped_build_writes_what_each_dialogue_alone_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two dialogues sharing their text built by one worker that reuses the utterances (and a
    third beside it, on two lanes) give the same audio and words as each built alone by a
    fresh worker with an empty cache (no utterance read back): reuse and grouping change the
    time, not the bytes."""
    settings = SynthSettings()
    specs = [_spec("a", ["I would like to plan a short trip this spring.",
                         "Spring is a lovely time to travel, where would you like to go?",
                         "Somewhere by the sea, I think."]),
             _spec("b", ["I would like to plan a short trip this spring.",
                         "Spring is a lovely time to travel, where would you like to go?",
                         "Maybe the mountains instead."]),
             _spec("c", ["Can you tell me a fact about owls?",
                         "Owls can turn their heads very far around."])]
    assert share_groups(specs) == [[0, 1], [2]]
    together = build_dialogues(specs, MtrSynthesizer(settings), "base", tmp_path / "together",
                               jobs=2)
    for k, spec in enumerate(specs):
        monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path / f"cache{k}"))
        (alone,) = build_dialogues([spec], MtrSynthesizer(settings), "base",
                                   tmp_path / f"alone{k}", jobs=1)
        assert together[k].audio.tobytes() == alone.audio.tobytes()
        assert together[k].dialogue() == alone.dialogue()
    assert len(list((tmp_path / "together").glob("*.pkl"))) == 3
