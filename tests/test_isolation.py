"""What a system hears and sees: exactly its own context, and no answer key.

Dialogue "h" (seconds), both channels carry a time code (sample value = 0.001 + t / 1000, so a
probe can read the dialogue time of every sample it is fed)::

    time   0    2    4    6    8    10   12   14   16   18
    ch0      |==A=====|         |=====C=======|        |==E==|
             1        4         7             12       15.5  18
    ch1              |==B==|         |bc|        |==D===|
                     4.5   6         9 9.5       12.3   15

With ``context_max_len = 5`` the samples' contexts start at different times (1.0, 4.5, 7.0,
7.3, ...): each must hear exactly ``[context_start, input_end)``, not the group's earliest start.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from duplexeval.data import Dialogue, Word
from duplexeval.events import Event, EventKind
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs._driver import DialogueAudio, run_group
from duplexeval.runs._session_view import reference_transcript
from duplexeval.systems import (
    Capabilities,
    Forced,
    Oracle,
    Session,
    SessionSpec,
    StepOutput,
    System,
)
from duplexeval.systems.builtin.cascade._responder import best_match, transcript_pairs
from frame_oracle import frames_needed

K = EventKind
SR = 16_000
FRAME = 320  # 20 ms

WORDS = [
    (0, 1.0, 2.0, "alpha"), (0, 2.5, 4.0, "bravo"), (1, 4.5, 6.0, "charlie"),
    (0, 7.0, 9.0, "delta"), (1, 9.0, 9.5, "echo"), (0, 9.5, 12.0, "foxtrot"),
    (1, 12.3, 15.0, "golf"), (0, 15.5, 18.0, "hotel"),
]
H = Dialogue(
    id="h",
    events=tuple(
        [Event(k, 0, s, e) for k, s, e in [
            (K.TURN, 1.0, 4.0), (K.TURN, 7.0, 12.0), (K.TURN_SHIFT, 6.0, 7.0),
            (K.TURN, 15.5, 18.0), (K.TURN_SHIFT, 15.0, 15.5)]]
        + [Event(k, 1, s, e) for k, s, e in [
            (K.TURN_SHIFT, 4.0, 4.5), (K.TURN, 4.5, 6.0), (K.BC, 9.0, 9.5),
            (K.TURN_SHIFT, 12.0, 12.3), (K.TURN, 12.3, 15.0)]]),
    words=tuple(Word(*w) for w in WORDS),
    language="en", domain="chat",
    extra={"qa_references": [{"turn": 0, "question": "alpha bravo", "answer": "charlie"}]},
)
SECRET_TIMES = {e.start for e in H.events} | {e.end for e in H.events}
SECRET_WORDS = {w[3] for w in WORDS}


def timecode(seconds: float) -> np.ndarray:
    t = np.arange(round(seconds * SR)) / SR
    x = (0.001 + t / 1000).astype(np.float32)
    return np.stack([x, x], axis=1)


def decode(v: float) -> float:
    return (float(v) - 0.001) * 1000


class _CountingSession(Session):
    """Counts frames; remembers the dialogue time of the first sample it heard and of the
    first forced sample; outputs ``frames / 10000`` (the count so far) as its audio."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"frames": 0, "first": None, "forced": None}

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        s = self.state
        assert len(user) == FRAME
        if s["first"] is None:
            s["first"] = decode(user[0])
        if force is not None and s["forced"] is None:
            s["forced"] = decode(force.audio[0])
        s["frames"] += 1
        return StepOutput(np.full(FRAME, s["frames"] / 10_000, np.float32))

    def snapshot(self) -> Any:
        return dict(self.state)

    def restore(self, state: Any) -> None:
        self.state = dict(state)

    def trace(self) -> dict[str, Any]:
        return dict(self.state)


class Counting(System):
    name = "counting"
    capabilities = Capabilities(sample_rate=SR, frame_size=FRAME, teacher_forcing_audio=True,
                                snapshot=True)

    def open(self, spec: SessionSpec) -> Session:
        return _CountingSession()


PROTOCOLS = [EvalProtocol.SINGLE, EvalProtocol.MULTI_GEN, EvalProtocol.MULTI_REF]


@pytest.mark.parametrize("use_snapshot", [True, False], ids=["snapshot", "replay"])
@pytest.mark.parametrize("protocol", PROTOCOLS, ids=[p.value for p in PROTOCOLS])
@pytest.mark.parametrize("cap", [5.0, None], ids=["cap5", "nocap"])
def test_every_sample_hears_exactly_its_own_context(protocol: EvalProtocol, use_snapshot: bool,
                                                    cap: float | None) -> None:
    plan = build_plan([H], PlanOptions(protocol=protocol, context_max_len=cap))
    audio = DialogueAudio(timecode(30.0), SR)
    system = Counting()
    if cap is not None and protocol is not EvalProtocol.SINGLE:
        starts = {s.context_start for s in plan.samples}
        assert len(starts) >= 3  # the case the old executor got wrong
    stepped = 0
    for members in plan.groups().values():
        outputs, n = run_group(system, H, audio, members, protocol, 0, use_snapshot)
        caps = system.capabilities
        assert n == frames_needed(members, protocol, caps.sample_rate, caps.frame_size,
                                  use_snapshot)
        stepped += n
        assert [o.sample.event_id for o in outputs] == [s.event_id for s in members]
        for out in outputs:
            s = out.sample
            start = s.input_start if protocol is EvalProtocol.SINGLE else s.context_start
            frames = math.ceil((s.input_end - start) * SR / FRAME - 1e-9)
            assert out.trace["first"] == pytest.approx(start, abs=1.5 / SR), s.event_id
            assert out.trace["frames"] == frames, s.event_id
            if protocol is EvalProtocol.MULTI_REF:
                assert out.trace["forced"] == pytest.approx(start, abs=1.5 / SR)
            if s.has_context:
                # the saved context is what it heard: same start, same length
                assert out.context_user is not None
                assert decode(out.context_user[0]) == pytest.approx(s.context_start,
                                                                    abs=1.5 / SR)
                assert len(out.context_user) == round(s.context_end * SR) - round(
                    s.context_start * SR)
            if protocol is EvalProtocol.MULTI_GEN and s.has_context:
                # its output encodes the frame count: 1 at the context start
                assert out.context_system is not None
                assert out.context_system[0] == pytest.approx(1 / 10_000, abs=1e-6)
    if protocol is not EvalProtocol.SINGLE and use_snapshot:
        seconds = plan.model_seconds_shared_prefix()
        n_passes = sum(len({s.context_start for s in m}) for m in plan.groups().values())
        slack = (n_passes + len(plan.samples)) * FRAME / SR
        assert abs(stepped * FRAME / SR - seconds) <= slack


def test_capped_context_costs_less_only_where_starts_are_shared() -> None:
    capped = build_plan([H], PlanOptions(protocol=EvalProtocol.MULTI_GEN, context_max_len=5.0))
    # no two samples of one (dialogue, user) share a context start here: nothing to share
    for members in capped.groups().values():
        assert len({s.context_start for s in members}) == len(members)
    assert capped.model_seconds_shared_prefix() == pytest.approx(
        capped.model_seconds_per_event())
    wide = build_plan([H], PlanOptions(protocol=EvalProtocol.MULTI_GEN, context_max_len=100.0))
    # a cap longer than the dialogue: contexts start at A (1.0), or at 0 before A's start
    assert {s.context_start for s in wide.samples} == {0.0, 1.0}
    assert wide.model_seconds_shared_prefix() < wide.model_seconds_per_event()


# -- what a system is shown ---------------------------------------------------------------------

def _walk(value: Any, seen: set[int] | None = None) -> Iterator[Any]:
    """Every leaf reachable from ``value``: containers, dataclasses, objects' attributes."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        yield value
    elif isinstance(value, np.ndarray):
        yield from value.reshape(-1)[:0]  # audio is what it hears; checked elsewhere
    elif isinstance(value, dict) or hasattr(value, "items"):
        for k, v in value.items():
            yield from _walk(k, seen)
            yield from _walk(v, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _walk(v, seen)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from _walk(getattr(value, f.name), seen)
    elif hasattr(value, "__dict__"):
        yield from _walk(vars(value), seen)
    else:
        yield value


def _leaks(leaves: list[Any]) -> set[Any]:
    found: set[Any] = set()
    for leaf in leaves:
        if isinstance(leaf, float) and any(abs(leaf - t) < 1e-9 for t in SECRET_TIMES):
            found.add(leaf)
        if isinstance(leaf, str) and any(w in leaf for w in SECRET_WORDS):
            found.add(leaf)
    return found


SPECS: list[SessionSpec] = []


class Probe(System):
    """Records every spec it is opened with; ``oracle=`` names the kinds it declares."""

    name = "probe"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        kinds = frozenset(Oracle(k) for k in args.get("oracle", "").split(",") if k)
        self.capabilities = Capabilities(sample_rate=SR, frame_size=FRAME, snapshot=True,
                                         teacher_forcing_audio=True, oracle=kinds)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ("oracle",)

    def open(self, spec: SessionSpec) -> Session:
        SPECS.append(spec)
        return _CountingSession()


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=[p.value for p in PROTOCOLS])
def test_a_system_that_declares_nothing_sees_no_event_time_and_no_word(
        protocol: EvalProtocol) -> None:
    SPECS.clear()
    plan = build_plan([H], PlanOptions(protocol=protocol, context_max_len=5.0))
    audio = DialogueAudio(timecode(30.0), SR)
    for members in plan.groups().values():
        run_group(Probe(), H, audio, members, protocol, 0)
    assert SPECS
    for spec in SPECS:
        leaves = list(_walk(spec))
        assert _leaks(leaves) == set()
        assert spec.dialogue.id == "h" and spec.dialogue.language == "en"
        assert spec.dialogue.domain == "chat" and spec.oracle == {}


def test_declared_oracle_data_is_given_and_nothing_more() -> None:
    SPECS.clear()
    plan = build_plan([H], PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    audio = DialogueAudio(timecode(30.0), SR)
    system = Probe(oracle="reference_transcript")
    assert system.capabilities.to_json()["oracle"] == ["reference_transcript"]
    for members in plan.groups().values():
        run_group(system, H, audio, members, EvalProtocol.MULTI_GEN, 0)
    for spec in SPECS:
        assert set(spec.oracle) == {Oracle.REFERENCE_TRANSCRIPT}
        leaves = list(_walk(spec))
        assert "alpha bravo" in leaves  # the words it asked for; still no event time
        assert not any(isinstance(x, float) and x in SECRET_TIMES for x in leaves)
    SPECS.clear()
    for members in plan.groups().values():
        run_group(Probe(oracle="reference_audio,qa_references"), H, audio, members,
                  EvalProtocol.MULTI_GEN, 0)
    spec = SPECS[0]
    assert set(spec.oracle) == {Oracle.REFERENCE_AUDIO, Oracle.QA_REFERENCES}
    assert spec.oracle[Oracle.QA_REFERENCES][0]["answer"] == "charlie"
    # the reference audio is the system channel from the session's first frame (t = 0)
    assert decode(spec.oracle[Oracle.REFERENCE_AUDIO][0]) == pytest.approx(0.0, abs=1e-3)


def test_reference_transcript_roles_and_kinds() -> None:
    # system = ch1: A, B, C, bc, D, E in order of start; the bc starts inside C
    got = reference_transcript(H, system_channel=1)
    assert [(e["role"], e["kind"], e["text"]) for e in got] == [
        ("user", "turn", "alpha bravo"), ("system", "turn", "charlie"),
        ("user", "turn", "delta foxtrot"), ("system", "bc", "echo"),
        ("system", "turn", "golf"), ("user", "turn", "hotel")]


def test_transcript_pairs_answer_with_the_next_system_turn() -> None:
    transcript = [
        {"role": "user", "kind": "turn", "text": "my dog is called rex"},
        {"role": "user", "kind": "turn", "text": "he is nine"},      # a held pause
        {"role": "system", "kind": "bc", "text": "mm-hm"},           # skipped
        {"role": "system", "kind": "turn", "text": "nine is old"},
        {"role": "system", "kind": "turn", "text": "for a dog"},
        {"role": "user", "kind": "turn", "text": "not really"},
    ]
    pairs = transcript_pairs(transcript)
    assert [(p["question"], p["answer"]) for p in pairs] == [
        ("my dog is called rex", "nine is old for a dog"),
        ("my dog is called rex he is nine", "nine is old for a dog"),
        ("he is nine", "nine is old for a dog"),
    ]  # "not really" has no system turn after it
    match = best_match("my dog is called rex he's nine", pairs)
    assert match is not None and match.answer == "nine is old for a dog"


def test_run_config_records_the_oracle_kinds(tmp_path: Path) -> None:
    from conftest import make_dataset
    from duplexeval.data import Need, load_dataset
    from duplexeval.runs import execute_run

    root = make_dataset(tmp_path / "ds", {
        "0": [("TURN", 1.0, 4.0), ("TURN", 7.0, 12.0), ("TURN_SHIFT", 6.0, 7.0)],
        "1": [("TURN_SHIFT", 4.0, 4.5), ("TURN", 4.5, 6.0)]},
        words=[w for w in WORDS if w[1] < 12.0], audio_seconds=20.0)
    sf.write(str(root / "audio" / "d1.wav"), timecode(20.0), SR)
    dataset, _ = load_dataset(root, audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    out = tmp_path / "run"
    execute_run(Probe(oracle="reference_transcript"), dataset, plan, out, progress=False)
    config = json.loads((out / "config.json").read_text())
    assert config["system"]["capabilities"]["oracle"] == ["reference_transcript"]
