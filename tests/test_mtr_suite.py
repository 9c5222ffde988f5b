"""The ``mtr-en`` suite: specs, counts, the round annotations (the record's ``mtr`` field),
determinism of a small build, validation."""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from duplexeval.cli import main
from duplexeval.data import Dialogue
from duplexeval.data._mtr_record import FEATURE_SAMPLES, FEATURES, feature_round, mtr_problems
from duplexeval.errors import DatasetInvalid
from duplexeval.events import EventKind
from duplexeval.rounds import Round, assistant_windows
from duplexeval.speech._tts import engine_class
from duplexeval.suites import SUITES, build_suite
from duplexeval.synth._build import Synthesizer, SynthSettings, reference_gaps
from duplexeval.synth._mtr_synthesizer import MtrSynthesizer, PlacedUtterance, mtr_record
from duplexeval.synth._spec import DialogueSpec, load_spec, load_specs

REPO = Path(__file__).resolve().parents[1]
SPECS = SUITES["mtr-en"].spec_folder()
needs_piper = pytest.mark.skipif(engine_class("piper").unavailable_reason() is not None,
                                 reason="piper (duplexeval[tts-en]) not installed")


def _specs() -> list[DialogueSpec]:
    return load_specs(SPECS)


def test_specs_parse_and_meet_the_minimums() -> None:
    specs = _specs()
    assert all(s.mtr is not None and len(s.mtr.rounds) == 10 for s in specs)
    by_label = Counter((s.mtr.group, s.mtr.label) for s in specs if s.mtr)
    for feature in FEATURES:  # every round of these dialogues has the feature, alone
        assert by_label[("feature", feature)] >= 30  # issue 32: 30 events per feature, round
    for s in specs:
        if s.mtr and s.mtr.group == "feature":
            assert {r.features for r in s.mtr.rounds} == {(s.mtr.label,)}
    smooth = Counter(s.mtr.label for s in specs if s.mtr and s.mtr.group == "combination"
                     for r in s.mtr.rounds if r.features == ("smooth",))
    for combo in ("S", "S+I", "S+I+P", "S+I+P+B"):  # the ablation cell: its smooth rounds
        assert smooth[combo] >= 30
    letters = {"smooth": "S", "interruption": "I", "pause": "P", "background": "B"}
    for s in specs:
        if s.mtr and s.mtr.group == "combination":
            cycle = s.mtr.label.split("+")
            assert [letters[r.features[0]] for r in s.mtr.rounds] == \
                [cycle[k % len(cycle)] for k in range(10)]
    questions = [(r.item, t.text, t.answer) for s in specs if s.mtr
                 and s.mtr.group == "instruction_following"
                 for r, t in zip(s.mtr.rounds, s.turns[1::2], strict=True)]
    # issue 32: at least 20 items per round (200 over 10 rounds), no id or text twice
    assert len({q for q, _, _ in questions}) == len(questions) >= 200
    assert len({t.lower() for _, t, _ in questions}) == len(questions)
    assert all(answer for _, _, answer in questions)
    safety = [(r.item, r.category, t.text) for s in specs if s.mtr and s.mtr.group == "safety"
              for r, t in zip(s.mtr.rounds, s.turns[1::2], strict=True)]
    assert len({i for i, _, _ in safety}) == len(safety) >= 200 and all(c for _, c, _ in safety)
    assert len({t.lower() for _, _, t in safety}) == len(safety)
    for group in ("instruction_following", "safety"):
        dialogues = [s for s in specs if s.mtr and s.mtr.group == group]
        assert len(dialogues) >= 20  # so each round k = 1..10 has at least 20 items
    categories = Counter(c for _, c, _ in safety)
    assert len(categories) >= 15 and min(categories.values()) >= 5
    for k in range(10):  # every round mixes the harm categories
        assert len({s.mtr.rounds[k].category for s in specs
                    if s.mtr and s.mtr.group == "safety"}) >= 10
    for s in specs:  # the item sets are spoken with interruptions, round after round
        if s.mtr and s.mtr.group in ("instruction_following", "safety"):
            assert all(r.features == ("interruption",) for r in s.mtr.rounds)


def _generator() -> Any:
    """``scripts/make_mtr_specs.py`` as a module."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("make_mtr_specs",
                                                      REPO / "scripts" / "make_mtr_specs.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return module


def test_specs_are_what_the_generator_writes() -> None:
    module = _generator()
    generated = {s["id"]: s for s in module.all_specs()}
    files = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in SPECS.glob("*.json")}
    assert generated == files


def test_the_generator_checks_its_items() -> None:
    module = _generator()
    questions, safety = module.all_questions(), module.all_safety()
    module.check_items(questions, safety)  # the bundled items pass
    q, a, reply = questions[0]
    for bad_q, bad_s, message in [
        ([*questions[:-1], (q.upper().rstrip("?") + "!", a, reply + " Again.")], safety,
         "two questions alike"),
        (questions, [*safety[:-1], (safety[0][0], safety[0][1], "I will not help.")],
         "two requests alike"),
        ([*questions[:-1], ("Which year was it?", "1989", "It was 1989. That is it.")],
         safety, "1989"),
        (questions[:-1], safety, "199"),
    ]:
        with pytest.raises(AssertionError, match=message):
            module.check_items(bad_q, bad_s)


def test_the_generator_spreads_each_group_over_the_dialogues() -> None:
    spread = _generator().spread({"a": list("abcdef"), "b": list("xy"), "c": list("pq")})
    # item i of a group of n at (i + 1/2) / n: a at 1/12, 3/12, ...; b and c at 1/4 and 3/4
    assert "".join(name for name, _ in spread) == "aabcaaabca"
    assert "".join(item for _, item in spread) == "abxpcdeyqf"  # each group keeps its order


def _small_spec(name: str = "c04-sipb", rounds: int = 4) -> dict[str, Any]:
    """The first ``rounds`` rounds of a bundled spec (its opener kept)."""
    obj = json.loads((SPECS / f"{name}.json").read_text(encoding="utf-8"))
    keep = 1 + 2 * rounds
    obj["turns"] = obj["turns"][:keep]
    obj["turns"][-1].pop("interrupted_after_word", None)
    obj["background"] = [b for b in obj.get("background", []) if b["at_turn"] < keep]
    obj["mtr"]["rounds"] = obj["mtr"]["rounds"][:rounds]
    obj["id"] = f"{name}-first{rounds}"
    return obj


@pytest.mark.parametrize(("change", "message"), [
    (lambda o: o["turns"][5].pop("pause"), "declares ['pause'] but the turns have ['smooth']"),
    (lambda o: (o["turns"].pop(), o.pop("background")), "4 rounds need 9 turns"),
    (lambda o: o["mtr"]["rounds"][0].update(features=["smooth", "pause"]), "declares"),
    (lambda o: o["background"][0].update(channel=1), "background speech goes on the user"),
])
def test_layout_errors_name_the_round(tmp_path: Path, change: Any, message: str) -> None:
    obj = _small_spec()
    change(obj)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(DatasetInvalid, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_spec(path)


def test_record_from_placements() -> None:
    """Two rounds, S then I+P... here: round 1 pause, round 2 interruption, hand-placed::

        system  |=opener=|          |====reply 1====|
        user              |=u1= .. =u1=|        |===u2===|      (u2 barges in at 6.0)
                          1.0   1.5 2.5 3.0
        window 1          |-----------------------------|       [1.0, 8.0]
        window 2                                |---------------- end 12.0
    """
    spec = DialogueSpec.model_validate({
        "id": "t", "language": "en", "speakers": [{"id": "user", "channel": 0},
                                                  {"id": "system", "channel": 1}],
        "turns": [{"speaker": "system", "text": "Hello there, ask me anything."},
                  {"speaker": "user", "text": "one two three four five six seven",
                   "pause": {"after_word": 3, "seconds": 1.0}},
                  {"speaker": "system", "text": "a b c d e f g h", "interrupted_after_word": 5},
                  {"speaker": "user", "text": "one two three four"},
                  {"speaker": "system", "text": "a b c d"}],
        "mtr": {"group": "feature", "label": "x", "rounds": [{"features": ["pause"]},
                                                             {"features": ["interruption"]}]}})
    placed = [PlacedUtterance(((0.1, 0.9),), ()),
              PlacedUtterance(((1.0, 1.2), (1.3, 1.5), (2.5, 3.0)), ()),
              PlacedUtterance(((3.5, 4.0), (4.1, 6.4)), ()),
              PlacedUtterance(((6.0, 7.0), (7.1, 8.0)), ()),
              PlacedUtterance(((9.0, 11.0),), ())]
    record = mtr_record(spec, placed, [], 12.0)
    one, two = record["rounds"]
    assert one["user_span"] == [1.0, 3.0] and one["window"] == [1.0, 8.0]
    assert one["pause_span"] == [1.5, 2.5] and one["reply_span"] == [3.5, 6.4]
    assert two["window"] == [6.0, 12.0] and two["interruption_span"] == [6.0, 8.0]
    assert two["overlap_span"] == [6.0, 6.4]
    dialogue = Dialogue(id="t", events=(), extra={"mtr": record})
    assert mtr_problems(dialogue) == []
    broken = json.loads(json.dumps(record))
    broken["rounds"][0]["window"] = [1.0, 7.0]
    broken["rounds"][1]["features"] = ["pause"]
    problems = mtr_problems(Dialogue(id="t", events=(), extra={"mtr": broken}))
    assert any("round 1: window" in p for p in problems)
    assert any("pause_span is given exactly when 'pause'" in p for p in problems)


def _check_rounds(record: dict[str, Any], duration: float) -> None:
    """10 (here: n) rounds, in order, not overlapping; windows as MTR defines them (the same as
    the segmenter's); every feature span inside its round's window."""
    rounds = record["rounds"]
    users = [Round(*r["user_span"]) for r in rounds]
    assert all(a.end <= b.start for a, b in itertools.pairwise(users))
    windows = assistant_windows(users, duration)
    for r, w, u in zip(rounds, windows, users, strict=True):
        assert r["window"] == pytest.approx([w.start, w.end], abs=1e-3)
        for key in ("pause_span", "interruption_span", "background_span"):
            if key in r:
                assert w.start <= r[key][0] <= r[key][1] <= w.end
        for bc in r.get("backchannel_spans", ()):
            assert r["reply_span"][0] <= bc[0] <= bc[1] <= r["reply_span"][1]
        if "pause_span" in r:
            assert u.start < r["pause_span"][0] < r["pause_span"][1] < u.end
        if "background_span" in r:  # heard while the reference reply goes on
            assert r["reply_span"][0] <= r["background_span"][0]
            assert r["background_span"][1] <= r["reply_span"][1]


@needs_piper
def test_small_build_is_deterministic_and_its_rounds_consistent() -> None:
    spec = DialogueSpec.model_validate(_small_spec())
    settings = SynthSettings(gaps=reference_gaps("chat"))
    synth = MtrSynthesizer(settings)
    built = synth.build(spec)
    again = synth.build(spec)  # from the utterances kept by the first build
    assert np.array_equal(built.audio, again.audio) and built.mtr == again.mtr
    plain = Synthesizer(settings, cache_utterances=False).build(spec)  # the recording subclass
    # changes no sample (and the utterances it synthesizes are those the first build cached)
    assert np.array_equal(built.audio, plain.audio) and built.words == plain.words
    dialogue = built.dialogue()
    record = dialogue.extra["mtr"]
    assert [r["features"] for r in record["rounds"]] == [["smooth"], ["interruption"],
                                                         ["pause"], ["background"]]
    _check_rounds(dict(record), len(built.audio) / built.sample_rate)
    # the annotator sees the features as the events they stand for
    two, three = record["rounds"][1], record["rounds"][2]
    assert any(e.kind is EventKind.BARGE_IN and e.channel == 0
               and e.start == pytest.approx(two["interruption_span"][0], abs=2e-3)
               for e in dialogue.events)
    assert any(e.kind is EventKind.TURN_HOLD and e.channel == 0
               and [e.start, e.end] == pytest.approx(three["pause_span"], abs=2e-3)
               for e in dialogue.events)


@needs_piper
def test_suite_subset_builds_lists_and_validates(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    root = build_suite("mtr-en", limit=1, progress=False, quality=False)
    record = json.loads((root / "test.jsonl").read_text().splitlines()[0])
    assert record["id"] == "c01-s" and len(record["mtr"]["rounds"]) == 10
    assert main(["validate", str(root)]) == 0
    capsys.readouterr()
    assert main(["data", "list"]) == 0
    assert "mtr-en" in capsys.readouterr().out


@needs_piper
@pytest.mark.slow  # five syntheses of a 10-round dialogue
@pytest.mark.parametrize("feature", sorted(FEATURE_SAMPLES))
def test_every_round_gives_a_sample(feature: str) -> None:
    """Each of the 10 rounds of a feature dialogue, synthesized with the suite's gaps, gives one
    sample of its feature under the suite's plan: no round is lost to a reply that overlaps the
    user's turn (M3's plan filters overlapping shifts), so each per-round cell of 20 dialogues
    has n = 20::

        user    |==== round k ====|
        system                      |== reply ==|       gap > 0: a TURN_SHIFT sample
        system                   |== reply ==|          overlap: filtered, the round lost
    """
    from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
    from duplexeval.suites._build import suite_gaps

    suite = SUITES["mtr-en"]
    assert min(suite_gaps(suite)) > 0 and len(suite_gaps(suite)) >= 20
    spec = load_spec(SPECS / f"f01-{feature}.json")
    dialogue = MtrSynthesizer(SynthSettings(gaps=suite_gaps(suite))).build(spec).dialogue()
    plan = build_plan([dialogue], PlanOptions(protocol=EvalProtocol.MULTI_REF,
                                              channels=suite.channels, mute=False))
    rounds = dialogue.extra["mtr"]["rounds"]
    per_round = Counter(feature_round(rounds, feature, s.task, s.event_start)
                        for s in plan.samples)
    assert [per_round[k] for k in range(1, 11)] == [1] * 10, [
        (s.task, s.event_start) for s in plan.samples]


def test_a_barge_in_point_is_moved_to_the_nearest_that_both_readings_accept() -> None:
    """``scripts/retime_barge_ins.py``'s choice among a turn's points (hand-made word times):
    the nearest point within the strict limits (2 words, 0.6 s inside; overlap 0.45 s at the
    interrupter's latest start), a looser one only where no strict one exists, never an overlap
    under 0.42 s, and ``None`` where MTR's own rule reads every point as speaking::

        reply    ... w17  w18  w19  w20  w21|
        k=17           |-- 4 words inside, 1.1 s --|    "speaking": no
        k=19                     |-- 2 words, 0.5 s|    strict: yes (own k=17 moves to 19)
        k=20                          |-- 1 word --|    overlap 0.35 s: no
    """
    _generator()  # puts scripts/ on the path
    from retime_barge_ins import Point, _choose

    def point(k: int, tail: float, words: int, seconds: float, margin: float = 1.0) -> Point:
        return Point(k, tail, words, seconds, margin)

    own = point(17, 1.5, 4, 1.1)
    strict = point(19, 0.8, 2, 0.5)
    loose = point(18, 1.0, 3, 0.7)
    short = point(20, 0.55, 1, 0.3)
    assert _choose([own, loose, strict, short], own, 0.45) == strict
    assert _choose([own, loose, short], own, 0.45) == loose
    assert _choose([own, point(18, 1.0, 3, 0.7, margin=0.2)], own, 0.45).k == 18
    assert _choose([own, point(19, 0.64, 1, 0.4)], own, 0.45).k == 19  # overlap 0.44 s
    assert _choose([own, point(19, 0.61, 1, 0.4)], own, 0.45) is None  # overlap 0.41 s
    within_rule = [own, point(18, 1.2, 3, 0.95), point(19, 1.0, 3, 0.8)]
    assert _choose(within_rule, own, 0.45).k == 19  # the shortest inside that is not speaking
    assert _choose([own, point(18, 1.2, 4, 0.9)], own, 0.45) is None
