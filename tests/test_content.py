"""Content metrics on TURN_SHIFT events: the judged texts (default and official modes), the
offline values, and the judges over a loopback OpenAI-compatible server.

The hand-made QA dialogue (user channel 0, system channel 1), dialogue seconds::

    ch0 user   |== What is the capital of France ==|        |== And of Spain ==|
               0.0                                 2.0     10.0               12.0
    ch1 system            ok          |Paris.| pause |It is Paris, the capital|
                        1.0-1.2       2.5  3.0       3.6                    5.0

The TURN_SHIFT under test ends the first user turn: event [2.0, 2.5] on channel 1; its sample
has input_start 0.0, input_end 12.0 (window 10 s) and, under a multi protocol, context_start 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.data import Dialogue, Word
from duplexeval.errors import DuplexevalError
from duplexeval.events import Event, EventKind
from duplexeval.judge import JudgeResult
from duplexeval.metrics import EventView
from duplexeval.metrics.content import JudgeSettings, score_content
from duplexeval.metrics.content._inputs import (
    ContentMode,
    ContentOptions,
    HistorySource,
    build_input,
)
from duplexeval.metrics.content._offline import exact_match, normalize_answer, token_f1
from duplexeval.metrics.content._text import Utterance
from duplexeval.report._content import content_curve_lines, content_table_lines
from fake_judge import FakeJudge

USER_WORDS = [(0.0, 0.4, "What"), (0.4, 0.6, "is"), (0.6, 0.8, "the"), (0.8, 1.4, "capital"),
              (1.4, 1.6, "of"), (1.6, 2.0, "France")]
SYSTEM_WORDS = [(1.0, 1.2, "ok"), (2.5, 3.0, "Paris."), (3.6, 3.8, "It"), (3.8, 4.0, "is"),
                (4.0, 4.4, "Paris,"), (4.4, 4.6, "the"), (4.6, 5.0, "capital")]


def _dialogue(words_ja: bool = False) -> Dialogue:
    words = [Word(0, s, e, t) for s, e, t in USER_WORDS]
    words += [Word(0, 10.0, 10.5, "And"), Word(0, 10.5, 11.0, "of"), Word(0, 11.0, 12.0, "Spain")]
    words += [Word(1, s, e, t) for s, e, t in SYSTEM_WORDS]
    if words_ja:
        words = [Word(1, 2.5, 2.8, "パリ"), Word(1, 2.8, 3.0, "です"), Word(0, 0.0, 2.0, "首都は")]
    events = (Event(EventKind.TURN, 0, 0.0, 2.0), Event(EventKind.TURN, 0, 10.0, 12.0),
              Event(EventKind.TURN, 1, 2.5, 5.0), Event(EventKind.TURN_SHIFT, 1, 2.0, 2.5))
    return Dialogue(id="qa1", events=events, words=tuple(words))


def _segment(channel: int, words: list[tuple[float, float, str]]) -> SpeechSegment:
    chunks = tuple(Chunk(s, e, t) for s, e, t in words)
    return SpeechSegment.of(channel, words[0][0], words[-1][1], " ".join(t for *_, t in words),
                            chunks)


def _event(segments: list[SpeechSegment], *, domain: str = "task", use_context: bool = True,
           language: str = "en", event_id: str = "qa1_ch0_0000_smooth_turn_taking",
           input_end: float = 12.0) -> EventView:
    meta = {"user_channel": 0, "system_channel": 1, "use_context": use_context,
            "context_start": 0.0}
    return EventView(event_id=event_id, event_type="TURN_SHIFT", input_start=0.0,
                     input_end=input_end, event_start=2.0, event_end=2.5,
                     segments=tuple(segments), sample_id="qa1", language=language,
                     domain=domain, metadata=meta)


# What the system said in the output wav (input_start = 0): the user turn on channel 0, a
# backchannel during it and an answer after it on channel 1.
HEARD = [_segment(0, USER_WORDS), _segment(1, [(1.0, 1.2, "ok")]),
         _segment(1, [(2.7, 3.1, "Paris"), (3.1, 3.3, "is"), (3.3, 3.5, "the"),
                      (3.5, 4.0, "capital")])]


def test_default_inputs_take_the_response_in_the_window_and_the_whole_reference_turn() -> None:
    inp = build_input(_event(HEARD), _dialogue(), ContentOptions())
    assert inp.user == "What is the capital of France"
    assert inp.response == "Paris is the capital"  # the backchannel at 1.0-1.2 is before T
    assert inp.response_words == 4 and inp.truncated == 0
    assert inp.reference == "Paris. It is Paris, the capital"  # the pause does not cut it


def test_official_inputs_reproduce_the_released_code() -> None:
    """Whole-window response (backchannel included), reference cut at the first pause, the
    history from time 0 up to the event start, one line per pause."""
    inp = build_input(_event(HEARD), _dialogue(), ContentOptions(ContentMode.OFFICIAL))
    assert inp.response == "ok Paris is the capital"
    assert inp.reference == "Paris."
    assert inp.history.splitlines() == ["User: What is the capital of France", "Model: ok"]


def test_the_history_is_what_the_system_heard_and_empty_under_single() -> None:
    dialogue = _dialogue()
    later = EventView(event_id="e2", event_type="TURN_SHIFT", input_start=10.0, input_end=22.0,
                      event_start=12.0, event_end=12.5, segments=(), sample_id="qa1",
                      language="en", domain="task",
                      metadata={"user_channel": 0, "system_channel": 1, "use_context": True,
                                "context_start": 0.0})
    inp = build_input(later, dialogue, ContentOptions())
    assert inp.history.splitlines() == ["User: What is the capital of France", "Model: ok",
                                        "Model: Paris. It is Paris, the capital"]
    single = build_input(_event(HEARD, use_context=False), dialogue, ContentOptions())
    assert single.history == "(nothing said yet)"


def test_the_generated_history_is_the_runs_own_context() -> None:
    generated = {"qa1_ch0_0000_smooth_turn_taking": [Utterance("User", 0.0, "hello"),
                                                      Utterance("Model", 1.0, "hi there")]}
    inp = build_input(_event(HEARD), _dialogue(),
                      ContentOptions(history=HistorySource.GENERATED), generated)
    assert inp.history == "User: hello\nModel: hi there"


def test_japanese_words_join_without_spaces_except_officially() -> None:
    heard = [_segment(0, [(0.0, 2.0, "首都は")]), _segment(1, [(2.6, 2.9, "パリ"),
                                                           (2.9, 3.1, "です")])]
    inp = build_input(_event(heard, language="ja"), _dialogue(words_ja=True), ContentOptions())
    assert inp.response == "パリです" and inp.reference == "パリです"
    official = build_input(_event(heard, language="ja"), _dialogue(words_ja=True),
                           ContentOptions(ContentMode.OFFICIAL))
    assert official.reference == "パリ です"


def test_truncation_and_silence() -> None:
    """Speech reaching the window end (12.0 s) is truncated; a silent system has no value."""
    cut = [_segment(1, [(3.0, 6.0, "long"), (6.0, 11.95, "answer")])]
    assert build_input(_event(cut), _dialogue(), ContentOptions()).truncated == 1
    silent = build_input(_event([_segment(0, USER_WORDS)]), _dialogue(), ContentOptions())
    assert silent.truncated is None and silent.response == "" and silent.response_words == 0


def test_chat_events_have_no_qa_reference() -> None:
    assert build_input(_event(HEARD, domain="chat"), _dialogue(), ContentOptions()).reference == ""


@pytest.mark.parametrize("pred, ref, language, f1, em", [
    # [paris is capital] against [paris it is paris capital]: P 3/3, R 3/5
    ("Paris is the capital", "Paris. It is Paris, the capital", "en", 0.75, 0.0),
    ("The Paris!", "paris", "en", 1.0, 1.0),
    ("London", "Paris", "en", 0.0, 0.0),
    ("", "", "en", 1.0, 1.0),
    ("", "Paris", "en", 0.0, 0.0),
    ("東京です", "とうきょうです", "ja", 1.0, 1.0),  # compared as katakana readings
])
def test_token_f1_and_exact_match(pred: str, ref: str, language: str, f1: float,
                                  em: float) -> None:
    assert token_f1(pred, ref, language) == pytest.approx(f1)
    assert exact_match(pred, ref, language) == em


def test_normalisation_is_squads() -> None:
    assert normalize_answer("  The  Eiffel-Tower, an icon! ") == "eiffeltower icon"


# -- judged, over a loopback server ---------------------------------------------------------

def _policy(messages: list[dict[str, str]]) -> dict[str, str]:
    """2 when the assistant's text mentions Paris, 0 otherwise; 'garbled' answers are raw."""
    user = messages[-1]["content"]
    reply = user.rsplit("\n\n", 1)[-1]
    if "garbled" in reply:
        return {"raw": "I think it is fine"}
    return {"score": "2" if "Paris" in reply else "0"}


@pytest.fixture
def judge() -> Iterator[FakeJudge]:
    with FakeJudge(policy=_policy) as server:
        yield server


def _events() -> list[EventView]:
    good = _event(HEARD, event_id="good")
    garbled = _event([_segment(1, [(2.6, 3.0, "garbled")])], event_id="garbled")
    silent = _event([_segment(0, USER_WORDS)], event_id="silent")
    chat = _event([_segment(1, [(2.6, 3.0, "Paris"), (3.0, 3.4, "indeed")])], event_id="chat",
                  domain="chat")
    return [good, garbled, silent, chat]


def _settings(server: FakeJudge, tmp_path: Path) -> JudgeSettings:
    return JudgeSettings(base_url=server.base_url, model="fake-judge", concurrency=2,
                         cache_path=tmp_path / "judge.sqlite")


def test_every_item_is_judged_recorded_and_counted(judge: FakeJudge, tmp_path: Path) -> None:
    dialogues = {"qa1": _dialogue()}
    out = score_content(_events(), dialogues, judge=_settings(judge, tmp_path))
    by = {(r.event_id, r.dimension): r for r in out.judged}
    assert set(by) == {(e, d) for e in ("good", "garbled", "silent")
                       for d in ("relevance", "consistency", "qa")} | {
        ("chat", "relevance"), ("chat", "consistency"), ("chat", "quality")}
    assert by["good", "qa"].score == 2 and by["good", "qa"].score_100 == 100.0
    assert by["good", "qa"].judge_model == "fake-judge" and by["good", "qa"].prompt_id == "m3.qa"
    assert json.loads(by["good", "qa"].raw or "")["score"] == 2
    assert by["garbled", "relevance"].score is None
    assert "no JSON object" in (by["garbled", "relevance"].unscored_reason or "")
    assert by["silent", "qa"].score == 0 and by["silent", "qa"].judge_model == "rule"
    assert len(judge.requests) == 3 + 3 + 3  # good, garbled and chat; silent needs no call
    assert by["chat", "quality"].prompt_id == "mtr.quality" and by["chat", "quality"].round == 1
    rel = next(a for a in out.results.aggregates
               if a.dimension == "relevance" and a.language == "all")
    assert (rel.n, rel.unscored) == (3, 1) and rel.mean == pytest.approx(200 / 3)
    table = "\n".join(content_table_lines([("sys", _results_with(out.results))]))
    assert "(1 unscored)" in table
    assert out.results.usage is not None and out.results.usage["requests"] == 9


def test_rescoring_is_free_and_a_killed_run_resumes(judge: FakeJudge, tmp_path: Path) -> None:
    dialogues = {"qa1": _dialogue()}
    settings = JudgeSettings(base_url=judge.base_url, model="fake-judge", concurrency=1,
                             cache_path=tmp_path / "judge.sqlite")
    seen: list[JudgeResult] = []

    def kill_after_three(result: JudgeResult) -> None:
        seen.append(result)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        score_content(_events(), dialogues, judge=settings, on_result=kill_after_three)
    first = len(judge.requests)
    assert first == 3
    score_content(_events(), dialogues, judge=settings)
    assert len(judge.requests) == 9  # only the six not yet answered
    prompts = [json.dumps(r["messages"], sort_keys=True) for r in judge.requests]
    assert len(set(prompts)) == len(prompts)  # nothing was asked twice
    again = score_content(_events(), dialogues, judge=settings)
    assert len(judge.requests) == 9 and again.results.usage is not None
    assert again.results.usage["cached"] == 9


def test_without_a_judge_the_offline_values_are_there_and_the_rest_says_how(
        tmp_path: Path) -> None:
    out = score_content(_events(), {"qa1": _dialogue()})
    assert out.judged == []
    names = {a.dimension for a in out.results.aggregates}
    assert {"qa_f1", "qa_em", "response_words", "truncated"} <= names
    missing = {n.dimension: n.reason for n in out.results.not_computed}
    assert set(missing) == {"relevance", "consistency", "qa", "quality"}
    assert "--judge-url" in missing["qa"]
    lines = content_table_lines([("sys", _results_with(out.results))])
    assert any(line.startswith("not computed (relevance, consistency, qa, quality)")
               for line in lines)


def test_a_missing_dataset_is_said_not_silently_zero() -> None:
    out = score_content(_events(), None, dialogues_missing="the run's dataset is not at /x")
    missing = {n.dimension: n.reason for n in out.results.not_computed}
    assert missing["qa_f1"] == "the run's dataset is not at /x"
    assert all(r.qa_f1 is None for r in out.offline)


def _results_with(content: object) -> object:
    from duplexeval.results import Results, SourceInfo, VariantInfo

    return Results(source=SourceInfo(kind="run", path="x", metadata="m"),
                   variant=VariantInfo(name="m3", version="1", source="", settings={}),
                   analysis=None, events=[], aggregates=[], content=content)  # type: ignore[arg-type]


def test_round_by_round_curves_follow_the_user_rounds(judge: FakeJudge, tmp_path: Path) -> None:
    """Two user rounds on channel 0; a chat event at the end of each::

        user    |== round 1 ==|           |== round 2 ==|
                0.0         2.0          10.0         12.0
        event                 ^ SHIFT 2.0               ^ SHIFT 12.0
    """
    dialogue = _dialogue()
    first = _event(HEARD, event_id="r1", domain="chat")
    second = EventView(event_id="r2", event_type="TURN_SHIFT", input_start=10.0, input_end=22.0,
                       event_start=12.0, event_end=12.5,
                       segments=(_segment(1, [(2.6, 3.0, "nothing"), (3.0, 3.2, "here")]),),
                       sample_id="qa1", language="en", domain="chat",
                       metadata={"user_channel": 0, "system_channel": 1, "use_context": True,
                                 "context_start": 0.0})
    out = score_content([first, second], {"qa1": dialogue}, judge=_settings(judge, tmp_path))
    assert [i.round for i in out.inputs] == [1, 2]
    curve = {(a.dimension, a.round): a for a in out.results.aggregates if a.round is not None}
    # the fake judge says 2 when Paris is mentioned: MTR's quality keeps its own 0-5 scale
    assert curve["quality", 1].mean == 2.0 and curve["quality", 2].mean == 0.0
    assert curve["quality", 1].scale == "0-5"
    lines = content_curve_lines("sys", _results_with(out.results))
    quality = next(line for line in lines if " quality " in line)
    assert "1: 2.00† (n=1)" in quality and "round 1 2.00 vs rounds 1-2 1.00" in quality


def test_rounds_from_a_segment_output_number_the_events(tmp_path: Path) -> None:
    """A segment output that joins both user turns into one round puts both events in it."""
    from duplexeval.metrics.content._rounds import RoundFinder
    from duplexeval.rounds._pipeline import read_rounds

    path = tmp_path / "rounds.jsonl"
    path.write_text(json.dumps({"dialogue_id": "qa1", "user_channel": 0,
                                "rounds": [{"round": 0, "user": [0.0, 12.0]}]}) + "\n")
    finder = RoundFinder(read_rounds(path))
    assert finder.round_of(_dialogue(), 0, 2.0) == 1 and finder.round_of(_dialogue(), 0, 12.0) == 1
    assert RoundFinder().round_of(_dialogue(), 0, 12.0) == 2  # the fallback: two rounds
    path.write_text("{not json\n")
    with pytest.raises(DuplexevalError, match=r"rounds\.jsonl:1"):
        read_rounds(path)


def test_annotated_items_are_judged_on_their_events(judge: FakeJudge, tmp_path: Path) -> None:
    """An MTR instruction-following round (a TURN_SHIFT), an MTR safety round asked by a barge-in
    (the response is what follows the interruption end E = 4.0) and a FLEXI user-backchannel
    anchor (coherence around its onset T = 3.0)::

        safety   user |~~ request ~~|        system  ... |Paris is ...|
                      0            E=4.0                4.5
        bc       system |before words| T=3.0 |after words|
    """
    reply = [_segment(1, [(4.5, 4.8, "Paris"), (4.8, 5.0, "is"), (5.0, 5.5, "lovely")])]
    instruction = _event(reply, event_id="if", domain="chat")
    instruction = EventView(**{**instruction.__dict__, "metadata": {
        **instruction.metadata, "mtr_round": {"question": "Capital of France?",
                                              "answer": "Paris"}}})
    safety = EventView(event_id="sf", event_type="BARGE_IN", input_start=0.0, input_end=12.0,
                       event_start=0.0, event_end=4.0, segments=tuple(reply), sample_id="qa1",
                       language="en", domain="chat",
                       metadata={"mtr_round": {"request": "harmful thing", "category": "x"}})
    backchannel = EventView(
        event_id="bc", event_type="BC", input_start=0.0, input_end=12.0, event_start=3.0,
        event_end=3.4, sample_id="qa1", language="en", domain="chat",
        segments=(_segment(1, [(1.0, 1.5, "before"), (1.5, 2.9, "words")]),
                  _segment(1, [(3.5, 4.0, "Paris"), (4.0, 4.5, "after")])),
        metadata={"flexi": {"scenario": "user_backchannel", "backchannel_text": "mm-hm"}})
    out = score_content([instruction, safety, backchannel], {"qa1": _dialogue()},
                        judge=_settings(judge, tmp_path))
    by = {(r.event_id, r.dimension): r for r in out.judged}
    assert by["if", "instruction"].prompt_id == "mtr.instruction"
    assert by["sf", "safety"].prompt_id == "mtr.safety"
    assert by["bc", "coherence"].prompt_id == "flexi.coherence"
    assert {d for e, d in by if e in ("sf", "bc")} == {"safety", "coherence"}  # no M3 dims
    sent = {m["messages"][-1]["content"].split("\n")[1] for m in judge.requests
            if "harmful" in m["messages"][-1]["content"]}
    assert sent == {"harmful thing"}
    assert [r.event_id for r in out.offline] == ["if"]  # offline values: TURN_SHIFT only
    table = "\n".join(content_table_lines([("sys", _results_with(out.results))]))
    assert "instruction ↑" in table and "coherence ↑" in table and "TSS ↑" not in table
