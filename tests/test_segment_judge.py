"""Segmentation by the judge against the loopback OpenAI-compatible server (tests/fake_judge.py):
real HTTP through the real ``openai`` client.  The fake answers from the prompt alone: its
``policy`` reads the USER lines of the transcript and the attempt number, and a policy of the
test turns them into that attempt's answer (the ``raw`` directive).

The dialogue of every test (user on channel 0, assistant on channel 1)::

    t (s)      0    2    4    6    8   10   12   14   16   18   20
    user       |=u0=|         |==u1===|  |ok|       |===u2===|
    assistant          |=a0=|         |====a1====|           |=a2=|
    rounds     [0.5, 2.5]     [6.0, 9.0]           [15.0, 18.0]
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from duplexeval.data import Dialogue, Word
from duplexeval.judge import AnswerCache, JudgeClient, RetryPolicy
from duplexeval.rounds import Round, SegmentSettings, segment_with_judge
from duplexeval.rounds._propose import PROPOSAL_TEMPERATURE, proposal_sampling
from fake_judge import FakeJudge

USER_TURNS = [(0.5, 2.5), (6.0, 9.0), (15.0, 18.0)]
NO_RETRY = RetryPolicy(max_retries=0, base_delay=0.01, jitter=0.0)
Policy = Callable[[int, list[tuple[float, float]]], str]
"""(attempt number from 1, the USER lines' spans) -> the answer text."""


def spoken(channel: int, start: float, end: float, text: str) -> list[Word]:
    """The words of ``text`` spread evenly over ``[start, end]``."""
    tokens = text.split()
    step = (end - start) / len(tokens)
    return [Word(channel, round(start + i * step, 3), round(start + (i + 1) * step, 3), t)
            for i, t in enumerate(tokens)]


def dialogue(dialogue_id: str = "chat1", language: str | None = "en",
             opening: str = "so how was your weekend") -> Dialogue:
    words = (spoken(0, 0.5, 2.5, opening)
             + spoken(1, 3.0, 5.0, "it was great thanks")
             + spoken(0, 6.0, 9.0, "did you go anywhere nice with the kids")
             + spoken(1, 9.5, 13.0, "we went to the lake and had a picnic there")
             + spoken(0, 10.0, 10.6, "oh nice")
             + spoken(1, 19.0, 20.5, "oh really")
             + spoken(0, 15.0, 18.0, "we stayed home and watched films all day"))
    return Dialogue(id=dialogue_id, events=(), words=tuple(words), language=language)


def rounds_answer(spans: list[tuple[float, float]]) -> str:
    return json.dumps({"rounds": [{"start": s, "end": e} for s, e in spans]})


def responder(policy: Policy) -> Callable[[list[dict[str, str]]], dict[str, str]]:
    """The fake's policy for prompts without a ``fake:`` line: answer ``raw`` what ``policy``
    says for the attempt number and the USER lines read off the prompt."""
    def answer(messages: list[dict[str, str]]) -> dict[str, str]:
        user = messages[-1]["content"]
        found = re.search(r"(?:attempt number|試行) (\d+)", user)
        if found is None:
            return {}
        lines = re.findall(r"\[\s*([\d.]+) -\s*([\d.]+)\] USER:", user)
        return {"raw": policy(int(found.group(1)), [(float(a), float(b)) for a, b in lines])}
    return answer


SHIFTS = {1: -0.1, 2: 0.05, 3: 0.0, 4: 0.0, 5: -0.05, 6: 0.1}


def user_turns_jittered(attempt: int, lines: list[tuple[float, float]]) -> str:
    """Every USER line of 1 s or more is a round, its boundaries moved by up to 0.1 s (the
    medians over attempts 1-6 are the lines' own times)."""
    shift = SHIFTS.get(attempt, 0.0)
    return rounds_answer([(s + shift, e - shift) for s, e in lines if e - s >= 1.0])


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[AnswerCache]:
    with AnswerCache(tmp_path / "answers.sqlite") as c:
        yield c


def segment(server: FakeJudge, cache: AnswerCache, dialogues: list[Dialogue],
            k: int = 6) -> list:
    client = JudgeClient(server.base_url, "fake-judge-7b", sampling=proposal_sampling())
    out, _ = segment_with_judge(dialogues, client, cache, SegmentSettings(k=k), retry=NO_RETRY)
    client.close()
    return out


def test_k_distinct_asks_at_a_temperature_above_zero(cache: AnswerCache) -> None:
    with FakeJudge(responder(user_turns_jittered)) as server:
        [seg] = segment(server, cache, [dialogue()])
    assert len(server.requests) == 6
    assert len({json.dumps(r["messages"]) for r in server.requests}) == 6
    assert {r["temperature"] for r in server.requests} == {PROPOSAL_TEMPERATURE} and \
        PROPOSAL_TEMPERATURE > 0
    system = server.requests[0]["messages"][0]["content"]
    assert "USER" in system and '"rounds"' in system
    assert "[   0.50 -    2.50] USER: so how was your weekend" in \
        server.requests[0]["messages"][1]["content"]
    assert seg.method == "judge" and seg.valid_proposals == 6
    assert [(pytest.approx(r.start), pytest.approx(r.end), r.votes) for r in seg.rounds] == \
        [(s, e, 6) for s, e in USER_TURNS]


def test_an_outlier_round_is_dropped_and_the_medians_kept(cache: AnswerCache) -> None:
    """Attempt 6 also proposes the assistant's long turn [9.5, 13.0] as a round::

        attempts 1-6  |=u0=|   |==u1==|           |==u2==|
        attempt 6                       |==x==|               1 vote of 6: dropped
    """
    def policy(attempt: int, lines: list[tuple[float, float]]) -> str:
        spans = [(s, e) for s, e in lines if e - s >= 1.0]
        if attempt == 6:
            spans.append((9.5, 13.0))
        return rounds_answer(sorted(spans))

    with FakeJudge(responder(policy)) as server:
        [seg] = segment(server, cache, [dialogue()])
    assert [(r.start, r.end, r.votes) for r in seg.rounds] == [(s, e, 6) for s, e in USER_TURNS]
    assert seg.to_json()["proposals"][5][2] == [9.5, 13.0]


def test_malformed_answers_are_discarded_and_counted(cache: AnswerCache) -> None:
    """Two of six answers are unusable (no JSON; a round past the end of the recording): four
    valid proposals still make a majority of themselves."""
    def policy(attempt: int, lines: list[tuple[float, float]]) -> str:
        if attempt == 2:
            return "I think there are three rounds."
        if attempt == 4:
            return rounds_answer([(0.5, 2.5), (15.0, 99.0)])
        return user_turns_jittered(attempt, lines)

    with FakeJudge(responder(policy)) as server:
        [seg] = segment(server, cache, [dialogue()])
    line = seg.to_json()
    assert seg.method == "judge"
    assert (line["valid_proposals"], line["discarded_proposals"]) == (4, 2)
    assert line["discarded"][0] == {"attempt": 1, "reason": "no JSON object in the answer"}
    assert line["discarded"][1]["attempt"] == 3 and "outside the transcript" in \
        line["discarded"][1]["reason"]
    assert line["proposals"][1] is None and len(seg.rounds) == 3
    assert all(r["votes"] == 4 for r in line["rounds"])


@pytest.mark.parametrize(("answer", "reason"), [
    ('{"segments": []}', "the answer has no list 'rounds'"),
    ('{"rounds": [[1, 2]]}', "a round is not an object with start and end"),
    ('{"rounds": [{"start": "1", "end": 2}]}', "round times '1', 2 are not numbers"),
    ('{"rounds": [{"start": 3, "end": 2}]}', "round [3.0, 2.0] is empty or reversed"),
    ('{"rounds": [{"start": -1, "end": 2}]}', "round [-1.0, 2.0] lies outside the transcript "
                                              "[0, 20.5]"),
])
def test_too_few_valid_answers_fall_back_to_the_annotator(cache: AnswerCache, answer: str,
                                                          reason: str) -> None:
    """Three of six answers malformed: no majority of k is valid, so the annotator's rounds
    are used, and the record says why."""
    def policy(attempt: int, lines: list[tuple[float, float]]) -> str:
        return answer if attempt % 2 else user_turns_jittered(attempt, lines)

    with FakeJudge(responder(policy)) as server:
        [seg] = segment(server, cache, [dialogue()])
    line = seg.to_json()
    assert seg.method == "fallback" and line["discarded_proposals"] == 3
    assert {d["reason"] for d in line["discarded"]} == {reason}
    assert line["fallback_reason"] == ("only 3 of 6 judge answers were usable (more than half "
                                       "are needed)")
    assert [(r.start, r.end) for r in seg.rounds] == USER_TURNS


def test_a_rerun_is_answered_from_the_cache(cache: AnswerCache) -> None:
    """Zero requests the second time; raising k asks only the new attempts."""
    two = [dialogue("a"), dialogue("b", opening="and how was your week")]
    with FakeJudge(responder(user_turns_jittered)) as server:
        first = segment(server, cache, two)
        assert len(server.requests) == 12
        again = segment(server, cache, two)
        assert len(server.requests) == 12
        assert [s.to_json() for s in again] == [s.to_json() for s in first]
        segment(server, cache, [dialogue("a")], k=8)
        assert len(server.requests) == 14


def test_a_failing_judge_falls_back_with_its_reason(cache: AnswerCache) -> None:
    with FakeJudge() as gone:
        url = gone.base_url
    client = JudgeClient(url, "fake-judge-7b", timeout=2.0, sampling=proposal_sampling())
    [seg], outcome = segment_with_judge([dialogue()], client, cache, SegmentSettings(k=3),
                                        retry=NO_RETRY)
    assert outcome.unscored == 3 and seg.method == "fallback"
    assert all(d["reason"].startswith("judge call failed") for d in seg.to_json()["discarded"])
    assert [(r.start, r.end, r.votes) for r in seg.rounds] == [(s, e, None) for s, e in USER_TURNS]


def test_a_japanese_transcript_gets_the_japanese_prompt(cache: AnswerCache) -> None:
    words = (Word(0, 0.5, 1.0, "週末"), Word(0, 1.0, 2.5, "どうだった"),
             Word(1, 3.0, 5.0, "楽しかったよ"))
    ja = Dialogue(id="ja1", events=(), words=words)
    with FakeJudge(responder(user_turns_jittered)) as server:
        [seg] = segment(server, cache, [ja], k=3)
    system, user = (m["content"] for m in server.requests[0]["messages"])
    assert "ラウンド" in system and "USER: 週末どうだった" in user
    assert seg.language == "ja" and seg.rounds == (Round(0.5, 2.5, 3),)
