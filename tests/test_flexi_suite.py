"""The ``flexi-en`` suite: its specs, the ``flexi`` annotations the synthesizer writes, their
validation, and deterministic builds (voiced with the clip bank, no TTS engine needed)."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from conftest import ModuleTemp
from duplexeval.benchmarks._flexi import FLEXI, FLEXI_COLUMNS_BY_PROTOCOL
from duplexeval.cli import main
from duplexeval.data import Need, check_dataset, load_dataset
from duplexeval.data._flexi_record import ANCHOR_KINDS, FLEXI_FIELD, SCENARIOS, flexi_problems
from duplexeval.errors import DatasetInvalid
from duplexeval.events import EventKind
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import dataset_hash
from duplexeval.speech._clipbank import ClipBank, fill_span
from duplexeval.speech._tts import TimedWord, Utterance
from duplexeval.suites import QUICK_MIN_SHIFTS, SUITES, shift_samples, suite_path
from duplexeval.suites._build import quick_by_label
from duplexeval.synth._build import Synthesizer, SynthSettings, reference_gaps
from duplexeval.synth._flexi_record import BIN_S, SIGMA_S, spread
from duplexeval.synth._spec import FLEXI_SCENARIOS, DialogueSpec, load_spec, load_specs

SUITE = SUITES["flexi-en"]


class ClipWords:
    """A TTS stand-in with word timing: each word is clip-bank speech lasting 0.1 s plus
    0.055 s per character (divided by ``speed``), words 20 ms apart, 0.25 s of silence after
    ``,.?!``; deterministic in the text."""

    name = "clipwords"
    language = "en"

    def voices(self) -> list[str]:
        return ["clip"]

    def resolve_voice(self, voice: str | None) -> str:
        return "clip"

    def settings(self) -> dict[str, str]:
        return {"engine": self.name}

    def synthesize(self, text: str, voice: str | None = None, speed: float = 1.0) -> Utterance:
        rate, bank = 16_000, ClipBank.load()
        pieces: list[np.ndarray] = []
        words, t = [], 0.0
        for i, token in enumerate(text.split()):
            n = round((0.1 + 0.055 * len(token)) / speed * rate)
            index = int.from_bytes(hashlib.sha256(f"{text}:{i}".encode()).digest()[:4], "little")
            pieces.append(fill_span(bank.pick("en", index).resampled(rate), n, rate))
            words.append(TimedWord(t, t + n / rate, token))
            pause = 0.25 if token[-1] in ",.?!" else 0.02
            pieces.append(np.zeros(round(pause * rate), np.float32))
            t += n / rate + round(pause * rate) / rate
        return Utterance(np.concatenate(pieces).astype(np.float32), rate, tuple(words))


def _first_round() -> list[DialogueSpec]:
    """Item 01 of every scenario (the first six files, by name)."""
    return load_specs(SUITE.spec_folder())[:6]


def _build(out: Path) -> Path:
    synth = Synthesizer(SynthSettings(gaps=reference_gaps(SUITE.gaps)),
                        cache_utterances=False)  # the stand-in engine has no settings to key
    synth._engines["en"] = ClipWords()  # type: ignore[assignment]
    synth.write([synth.build(s) for s in _first_round()], out,
                metadata={"name": SUITE.name, "description": SUITE.description})
    return out


@pytest.fixture(scope="module")
def built(module_tmp: ModuleTemp) -> Path:
    return _build(module_tmp.mktemp("flexi") / "first-round")


def test_specs_parse_and_every_scenario_has_30_items() -> None:
    assert FLEXI_SCENARIOS == SCENARIOS and len(SCENARIOS) == 6
    folder = SUITE.spec_folder()
    specs = load_specs(folder)
    counts = Counter(s.flexi.scenario for s in specs if s.flexi is not None)
    assert set(counts) == set(SCENARIOS) and min(counts.values()) >= 30
    assert len(specs) == sum(counts.values())  # every item is a FLEXI item
    assert sorted(p.stem for p in folder.glob("*.json")) == [s.id for s in specs]
    # files sorted by name take the scenarios in turn: any prefix of 6k covers all six
    assert {s.flexi.scenario for s in specs[:6] if s.flexi} == set(SCENARIOS)
    assert all(s.language == "en" and s.domain == "flexi" for s in specs)


def test_spec_positions_fit_each_scenario() -> None:
    for spec in load_specs(SUITE.spec_folder()):
        assert spec.flexi is not None
        name, turns = spec.flexi.scenario, spec.turns
        words = len(turns[0].text.split())
        if name == "pause_handling":
            (pause,) = turns[0].all_pauses()
            assert 1.0 <= pause.seconds <= 3.0
            assert 5 <= (pause.after_word or 0) <= words - 3  # mid-thought, then more words
        if name == "model_interrupt":
            cue = spec.flexi.recognisable
            assert cue is not None and cue.turn == 0
            assert words - (cue.after_word or 0) >= 8, spec.id  # the user goes on talking
        if name == "user_interrupt":
            cut = turns[1].interrupted_after_word or 0
            assert cut >= 20 and turns[1].interruption() is not None
        if name == "model_backchannel":
            assert len(turns[0].backchannels) >= 3
        assert all(t.gap is not None and t.gap > 0 for t in turns if t.speaker == "system"
                   and (turns.index(t) == 1 or name == "user_interrupt"))


@pytest.mark.parametrize(("scenario", "change", "message"), [
    ("pause_handling", {"pause": None}, "flexi pause_handling: the turns lack"),
    ("turn_taking", {"speaker": "system"}, "flexi turn_taking: turns by"),
])
def test_a_spec_that_does_not_fit_its_scenario_is_refused(
        tmp_path: Path, scenario: str, change: dict, message: str) -> None:
    source = next(SUITE.spec_folder().glob(f"01-{scenario}.json"))
    obj = json.loads(source.read_text(encoding="utf-8"))
    obj["turns"][0].update(change)
    (tmp_path / source.name).write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(DatasetInvalid, match=message):
        load_spec(tmp_path / source.name)


def test_annotations_are_consistent_and_validate(built: Path) -> None:
    report = check_dataset(built, audio=Need.REQUIRE, alignment=Need.REQUIRE)
    assert report.ok, report.problems
    assert report.dataset is not None
    seen = set()
    for d in report.dataset.dialogues:
        f = d.extra[FLEXI_FIELD]
        seen.add(f["scenario"])
        user, response = f["user_turn"], f["response"]
        assert f["user_channel"] == 0 and f["system_channel"] == 1
        assert user[0] < user[1] <= response[0] + 0.4 and response[1] <= d.duration
        assert f["anchor"]["event"] == ANCHOR_KINDS[f["scenario"]].value
        if f["scenario"] == "pause_handling":
            assert user[0] < f["pause"][0] < f["pause"][1] < user[1]
            assert f["pause"][1] - f["pause"][0] == pytest.approx(1.5, abs=2e-3)  # the spec's
        if f["scenario"] in ("user_interrupt", "user_backchannel"):
            system, act = f["system_turn"], f["interruption" if f["scenario"] ==
                                                "user_interrupt" else "backchannel"]
            assert system[0] < act[0] < system[1] and f["protocol"] == "multi-ref"
        if f["scenario"] == "model_interrupt":
            assert f["emergency"] is True and user[0] < f["recognisable_at"] < user[1] - 1.0
            key = next(w for w in d.words_on(0) if w.end == f["recognisable_at"])
            assert key.text.strip(",.") == "gas"  # "... a strong smell of gas| in the kitchen"
        if f["scenario"] == "model_backchannel":
            ref = f["reference_backchannels"]
            assert ref["bin_s"] == BIN_S == 0.2 and ref["comparable_with_flexi"] is False
            assert len(ref["distribution"]) == math.ceil(d.duration / BIN_S - 1e-9)
            assert sum(ref["distribution"]) == pytest.approx(1.0, abs=1e-6)
            assert all(user[0] < p < user[1] for p in ref["positions"])
            bcs = [e.start for e in d.events_of(EventKind.BC, 1)]
            assert bcs == ref["positions"]  # the reference system's backchannels
    assert seen == set(SCENARIOS)


def test_every_anchor_is_a_sample_of_its_protocol(built: Path) -> None:
    dataset, _ = load_dataset(built)
    for protocol in (EvalProtocol.MULTI_GEN, EvalProtocol.MULTI_REF):
        plan = build_plan(dataset.dialogues, PlanOptions(protocol=protocol,
                                                         channels=SUITE.channels))
        for d in dataset.dialogues:
            anchor = d.extra[FLEXI_FIELD]["anchor"]
            assert any(s.sample_id == d.id and s.event_type.value == anchor["event"]
                       and s.event_start == pytest.approx(anchor["time"][0], abs=1e-6)
                       for s in plan.samples), (protocol, d.id)


def test_each_flexi_cell_plans_the_anchors_its_columns_read(built: Path) -> None:
    """The static FLEXI cells plan only the event kinds their table columns read (Multi (gen):
    turn shifts and holds; Multi (ref): the user's interrupts and backchannels), and between
    them every scenario's anchor is a sample of one of them."""
    dataset, _ = load_dataset(built)
    covered = set()
    for cell in (c for c in FLEXI.cells if c.protocol is not EvalProtocol.INTERACTIVE):
        read = {c.event_type for c in FLEXI_COLUMNS_BY_PROTOCOL[cell.protocol]}
        plan = build_plan(dataset.dialogues, PlanOptions(
            protocol=cell.protocol, channels=SUITE.channels, ignored_events=cell.ignored_events))
        assert plan.samples and {s.event_type.value for s in plan.samples} <= read
        for d in dataset.dialogues:
            anchor = d.extra[FLEXI_FIELD]["anchor"]
            if any(s.sample_id == d.id and s.event_type.value == anchor["event"]
                   and s.event_start == pytest.approx(anchor["time"][0], abs=1e-6)
                   for s in plan.samples):
                covered.add(d.id)
    assert covered == {d.id for d in dataset.dialogues}


def test_validate_reports_broken_annotations(built: Path, tmp_path: Path) -> None:
    dataset, _ = load_dataset(built, audio=Need.REQUIRE)
    by_scenario = {d.extra[FLEXI_FIELD]["scenario"]: d for d in dataset.dialogues}

    def problems(scenario: str, **changes: object) -> list[str]:
        d = by_scenario[scenario]
        record = {**json.loads(json.dumps(dict(d.extra[FLEXI_FIELD]))), **changes}
        return flexi_problems(type(d)(d.id, d.events, d.channel_order, d.words, d.audio,
                                      d.language, d.domain, {FLEXI_FIELD: record}))

    assert all(problems(s) == [] for s in SCENARIOS)
    user = by_scenario["pause_handling"].extra[FLEXI_FIELD]["user_turn"]
    assert "pause lies outside user_turn" in " ".join(
        problems("pause_handling", pause=[user[1] + 0.1, user[1] + 0.5]))
    assert "not among the dialogue's events" in " ".join(
        problems("turn_taking", anchor={"event": "TURN_SHIFT", "channel": 1, "time": [1, 2]}))
    assert "recognisable_at must lie inside user_turn" in " ".join(
        problems("model_interrupt", recognisable_at=0.1))
    ref = dict(by_scenario["model_backchannel"].extra[FLEXI_FIELD]["reference_backchannels"])
    assert "sums to" in " ".join(problems("model_backchannel", reference_backchannels={
        **ref, "distribution": [0.5] * len(ref["distribution"])}))
    assert "does not start while the system speaks" in " ".join(
        problems("user_interrupt", interruption=[0.2, 0.4]))
    assert "version 2 is not 1" in " ".join(problems("turn_taking", version=2))
    imported = {"scenario": "pause_handling", "source": "dialog_3", "pause": [1.0, 2.5]}
    d = by_scenario["pause_handling"]  # FLEXI's own values (data import flexi): scenario only
    assert flexi_problems(type(d)(d.id, d.events, extra={FLEXI_FIELD: imported})) == []
    assert flexi_problems(type(d)(d.id, d.events, extra={FLEXI_FIELD: {
        **imported, "scenario": "karaoke"}})) != []
    # through the validator, with file and line
    jsonl = (built / "test.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(jsonl[0])
    first[FLEXI_FIELD]["scenario"] = "karaoke"
    (tmp_path / "broken").mkdir()
    for sub in ("audio", "txt_align"):
        (tmp_path / "broken" / sub).symlink_to(built / sub)
    (tmp_path / "broken" / "test.jsonl").write_text(
        "\n".join([json.dumps(first), *jsonl[1:]]) + "\n", encoding="utf-8")
    report = check_dataset(tmp_path / "broken")
    assert [(p.line, "karaoke" in p.message) for p in report.problems] == [(1, True)]


def test_builds_are_deterministic(built: Path, tmp_path: Path) -> None:
    again = _build(tmp_path / "again")
    first, _ = load_dataset(built)
    second, _ = load_dataset(again)
    assert dataset_hash(first) == dataset_hash(second)
    assert (built / "test.jsonl").read_bytes() == (again / "test.jsonl").read_bytes()


def test_spread_sums_to_one_around_each_position() -> None:
    dist = spread([1.0, 5.05], n_bins=40)
    assert sum(dist) == pytest.approx(1.0, abs=1e-12) and len(dist) == 40
    assert max(dist[:10]) == dist[5] and max(dist[20:]) == dist[25]  # bins [1.0,1.2), [5.0,5.2)
    assert sum(dist[:10]) == pytest.approx(0.5) and sum(dist[20:]) == pytest.approx(0.5)
    assert all(x == 0 for i, x in enumerate(dist) if not (1 <= i <= 8 or 22 <= i <= 28))
    edge = spread([0.05], n_bins=5)  # truncated at 0 s and renormalised
    assert sum(edge) == pytest.approx(1.0) and edge[0] > edge[1] > edge[2] > 0 == edge[4]
    assert SIGMA_S == 0.2
    with pytest.raises(ValueError):
        spread([], n_bins=3)


def test_the_quick_subset_is_the_first_five_items_of_each_scenario(built: Path) -> None:
    """Every scenario's cell needs at least 5 events in the quick subset (marked † under 20):
    it is the first five items of each scenario, i.e. the first five rounds of the six
    scenarios in file order (30 dialogues).  One round has 7 turn-shift samples on the user
    channel (two in user_interrupt), so it keeps 35 >= 20 smooth-turn-taking samples."""
    dataset, _ = load_dataset(built)
    assert shift_samples(dataset.dialogues, SUITE.channels) == 7
    assert QUICK_MIN_SHIFTS <= 5 * 7
    assert SUITE.quick_per_label == 5 and SUITE.channels == (0,)
    specs = load_specs(SUITE.spec_folder())
    quick = quick_by_label(specs, 5)
    assert Counter(s.flexi.scenario for s in quick if s.flexi) == {s: 5 for s in SCENARIOS}
    assert [s.id for s in quick] == [s.id for s in specs[:30]]
    assert not SUITE.in_demo  # run_demo(suites=["flexi-en"]) runs it; not in the default demo yet


def test_data_list_shows_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    monkeypatch.setenv("DUPLEXEVAL_M3_TOY", str(tmp_path / "absent"))
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "flexi-en" in out and "duplexeval data build flexi-en" in out
    assert suite_path("flexi-en", limit="quick").name.startswith("flexi-en-quick-")
