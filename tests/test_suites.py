"""The bundled suites: specs load and are consistent across languages; listing and errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.suites import QUICK_MIN_SHIFTS, SUITES, suite_path
from duplexeval.synth._spec import Turn, _Position, load_specs


def test_bundled_specs_are_valid_and_translations_match() -> None:
    specs = {name: load_specs(SUITES[name].spec_folder())
             for name in ("m3-qa-en", "m3-qa-ja", "m3-chat-en", "m3-chat-ja")}
    assert len(specs["m3-qa-en"]) >= 12 and len(specs["m3-chat-en"]) >= 6
    assert len(specs["m3-chat-ja"]) >= 6
    en = {s.id: s for s in specs["m3-qa-en"]}
    ja = {s.id: s for s in specs["m3-qa-ja"]}
    assert set(en) == set(ja)  # the Japanese set translates the same dialogues
    for dialogue_id, spec in en.items():
        assert 8 <= len(spec.turns) <= 14
        assert [t.speaker for t in spec.turns] == [t.speaker for t in ja[dialogue_id].turns]
        questions = [t for t in spec.turns if t.speaker == "user"]
        assert all(t.answer for t in questions)
        assert spec.language == "en" and ja[dialogue_id].language == "ja"
    for spec in specs["m3-chat-en"]:
        kinds = [bool(t.all_pauses()) for t in spec.turns]
        assert sum(kinds) >= 3 and any(t.interruption() for t in spec.turns)
        assert sum(len(t.backchannels) for t in spec.turns) >= 4


def test_suite_builds_are_keyed_by_content(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    full, first = suite_path("m3-qa-en"), suite_path("m3-qa-en", limit=2)
    assert full != first and full.parent == tmp_path / "suites"
    assert suite_path("m3-qa-en") == full  # stable
    # the synthesizer's code is part of the key: a changed synthesizer never reads an old build
    from duplexeval.suites import _build as build

    monkeypatch.setattr(build, "synthesizer_digest", lambda: "another synthesizer")
    assert suite_path("m3-qa-en") != full


def test_the_synthesizer_digest_follows_its_files_and_nothing_else(tmp_path: Path) -> None:
    from duplexeval.suites._build import SYNTHESIZER_SOURCES, sources_digest, synthesizer_digest

    (tmp_path / "synth" / "__pycache__").mkdir(parents=True)
    (tmp_path / "synth" / "place.py").write_text("GAP = 0.2\n")
    (tmp_path / "events.py").write_text("KINDS = ()\n")
    (tmp_path / "other.py").write_text("x = 1\n")
    sources = ("synth", "events.py")
    before = sources_digest(tmp_path, sources)
    (tmp_path / "synth" / "__pycache__" / "place.pyc").write_bytes(b"\0")
    (tmp_path / "other.py").write_text("x = 2\n")
    assert sources_digest(tmp_path, sources) == before  # caches and other modules: no change
    (tmp_path / "synth" / "place.py").write_text("GAP = 0.3\n")
    changed = sources_digest(tmp_path, sources)
    assert changed != before
    (tmp_path / "synth" / "place.py").rename(tmp_path / "synth" / "placement.py")
    assert sources_digest(tmp_path, sources) != changed  # a renamed file too
    (tmp_path / "suites" / "specs").mkdir(parents=True)  # a pattern: its files, no others
    (tmp_path / "suites" / "_build.py").write_text("JOBS = 2\n")
    (tmp_path / "suites" / "specs" / "a.json").write_text("{}\n")
    patterned = sources_digest(tmp_path, ("suites/*.py",))
    (tmp_path / "suites" / "specs" / "b.json").write_text("{}\n")
    assert sources_digest(tmp_path, ("suites/*.py",)) == patterned
    (tmp_path / "suites" / "_build.py").write_text("JOBS = 3\n")
    assert sources_digest(tmp_path, ("suites/*.py",)) != patterned
    from duplexeval.suites import _build as build

    package = Path(build.__file__).resolve().parents[1]
    assert all(list(package.glob(s)) for s in SYNTHESIZER_SOURCES)
    assert synthesizer_digest() == sources_digest(package, SYNTHESIZER_SOURCES)


def test_data_list_and_unknown_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    monkeypatch.setenv("DUPLEXEVAL_M3_TOY", str(tmp_path / "absent"))
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("m3-qa-en", "m3-qa-ja", "m3-chat-en", "m3-chat-ja"):
        assert name in out and f"duplexeval data build {name}" in out
    assert "m3-toy-ja-voiced" in out and "unavailable" in out
    assert main(["data", "build", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown suite 'nope'" in err and "m3-chat-ja" in err


def test_concurrent_builds_of_one_key_build_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builders of the same suite at once (parallel test workers, two terminals): the
    second waits for the first's lock and takes its build."""
    import threading
    import time

    from duplexeval.suites import _build as suite_build

    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    calls: list[str] = []

    def slow_build(suite: object, target: Path, *args: object) -> None:
        calls.append(target.name)
        time.sleep(0.3)
        target.mkdir(parents=True)
        (target / "quality.json").write_text("{}")

    monkeypatch.setattr(suite_build, "_build_into", slow_build)
    found: list[Path] = []
    workers = [threading.Thread(target=lambda: found.append(
        suite_build.build_suite("m3-qa-en", limit=2, progress=False, synthesize=True)))
        for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(calls) == 1 and found == [suite_path("m3-qa-en", limit=2, synthesize=True)] * 2


@pytest.mark.slow  # builds the quick subset and a first-dialogue subset of m3-qa-en
def test_data_build_makes_a_quick_subset_or_the_first_dialogues(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``data build NAME --quick`` (what the demo and ``eval --quick`` run) and ``--limit N``
    build into the cache under their own keys, and print where."""
    assert main(["data", "build", "m3-qa-en", "--limit", "1"]) == 0
    first = capsys.readouterr().out.strip()
    assert first == f"m3-qa-en: {suite_path('m3-qa-en', limit=1)}"
    assert main(["data", "build", "m3-qa-en", "--quick"]) == 0
    quick = capsys.readouterr().out.strip()
    assert quick == f"m3-qa-en: {suite_path('m3-qa-en', limit='quick')}"
    assert "-quick-" in quick and "-first1-" in first
    with pytest.raises(SystemExit) as refused:  # one or the other (argparse's usage error)
        main(["data", "build", "m3-qa-en", "--quick", "--limit", "2"])
    assert refused.value.code == 2


M3_SPEC_SUITES = ("m3-qa-en", "m3-qa-ja", "m3-chat-en", "m3-chat-ja")


def _events(turn: Turn, ja: bool) -> tuple[list[int], list[int], int | None, str]:
    """Held pause positions, backchannel positions, the interruption point (words, or
    characters in Japanese) and the text as a list of its words or characters."""
    def at(p: _Position) -> int:
        return (p.after_char if ja else p.after_word) or 0
    cut = turn.interruption()
    return ([at(p) for p in turn.all_pauses() if p.seconds >= 0.6],
            [at(b) for b in turn.backchannels], None if cut is None else at(cut), turn.text)


def test_m3_spec_events_follow_the_specs_readme() -> None:
    """The rules of specs/README.md that the loader does not check: Japanese positions right
    after 、。？！ and no lone うん; an English barge-in leaves 1-4 words; a QA barge-in comes
    after the reference answer is said; a turn's pause and backchannels come before its
    interruption point, the backchannels far enough before it that the interrupter does not wait
    for its own backchannel; the Japanese suites carry the English ones' events turn by turn."""
    specs = {name: {s.id: s for s in load_specs(SUITES[name].spec_folder())}
             for name in M3_SPEC_SUITES}
    for name, by_id in specs.items():
        ja = name.endswith("-ja")
        for spec in by_id.values():
            for i, turn in enumerate(spec.turns):
                pauses, bcs, cut, text = _events(turn, ja)
                where = f"{name}/{spec.id} turn {i}"
                if ja:
                    assert all(text[k - 1] in "、。？！" for k in [*pauses, *bcs]
                               + ([cut] if cut else [])), where
                    assert not {b.text for b in turn.backchannels} & {"うん", "うんうん"}, where
                if cut is None:
                    continue
                if not ja:
                    assert 1 <= len(text.split()) - cut <= 4, where
                assert all(k < cut for k in pauses), where
                assert all(cut - k >= (13 if ja else 4) for k in bcs), where
                if spec.domain == "task":  # one IPU that outlasts the interrupted words
                    assert not spec.turns[i + 1].all_pauses(), where
                    said = text[:cut] if ja else " ".join(text.split()[:cut])
                    answer = spec.turns[i - 1].answer or ""
                    assert answer.rstrip(".。").lower() in said.lower(), where
    for kind in ("qa", "chat"):
        en, jp = specs[f"m3-{kind}-en"], specs[f"m3-{kind}-ja"]
        assert set(en) == set(jp)
        for spec_id, spec in en.items():
            for a, b in zip(spec.turns, jp[spec_id].turns, strict=True):
                ea, eb = _events(a, False), _events(b, True)
                assert (len(a.all_pauses()), len(ea[0]), len(ea[1]), ea[2] is None) == \
                    (len(b.all_pauses()), len(eb[0]), len(eb[1]), eb[2] is None), \
                    f"{kind} {spec_id}: {a.text}"


def test_m3_suites_give_every_cell_30_events_and_the_quick_subset_5() -> None:
    """Issue 32: SHIFT, PAUSE, BC and BARGE_IN on each M3 suite's user channels (M3's rules
    for whose events count: see perf/suite_cells.py, which prints them) at least 30 in the full
    suite and 5 in the first dialogues that reach the quick subset's 20 shifts."""
    for name in M3_SPEC_SUITES:
        suite = SUITES[name]
        total: Counter[str] = Counter()
        quick: Counter[str] | None = None
        for spec in load_specs(suite.spec_folder()):
            for i, turn in enumerate(spec.turns):
                ch = spec.speaker(turn.speaker).channel
                user, listener = ch in suite.channels, 1 - ch in suite.channels
                total["PAUSE"] += user * sum(p.seconds >= 0.6 for p in turn.all_pauses())
                total["BC"] += listener * len(turn.backchannels)
                if i + 1 < len(spec.turns) and spec.turns[i + 1].speaker != turn.speaker:
                    if turn.interruption() is not None:
                        total["BARGE_IN"] += listener
                    else:
                        total["SHIFT"] += user
            if quick is None and total["SHIFT"] >= QUICK_MIN_SHIFTS:
                quick = total.copy()
        assert quick is not None, name
        cells = ("SHIFT", "PAUSE", "BC", "BARGE_IN")
        assert min(total[c] for c in cells) >= 30, (name, total)
        assert min(quick[c] for c in cells) >= 5, (name, quick)
