"""``duplexeval segment``: the annotator fallback on a dialogue built here, the judge path
through the CLI against the loopback fake (with a cached rerun), and the exit codes.

The dialogue (user on channel 0; words on both channels, no events: the annotator derives
them)::

    t (s)    0    1    2    3    4    5    6    7    8    9   10
    user     |==TURN==|   |==TURN==|   |ok|   |=TURN=|
    assist.          |mm|          |===TURN===|        |==TURN==|
                       ^ TURN_HOLD (the user keeps the floor; "mm" is a BC)
    rounds   [0.0, 4.0]                       [7.0, 8.5]
    windows  [0.0, 8.5]                       [7.0, 10.5]
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import make_dataset
from duplexeval.cli import main
from duplexeval.data import Dialogue, Word
from duplexeval.rounds import SegmentSettings, segment_fallback
from duplexeval.timeline import Span
from fake_judge import FakeJudge
from test_segment_judge import responder, user_turns_jittered

LINES = [(0, 0.0, 1.5, "I wanted to ask"), (1, 1.6, 1.9, "mm"),
         (0, 2.3, 4.0, "about the trip next week"), (1, 4.5, 6.5, "sure what do you want to know"),
         (0, 5.0, 5.3, "ok"), (0, 7.0, 8.5, "when do we leave"),
         (1, 9.0, 10.5, "on monday morning")]


def words() -> list[Word]:
    out = []
    for channel, start, end, text in LINES:
        tokens = text.split()
        step = (end - start) / len(tokens)
        out += [Word(channel, round(start + i * step, 3), round(start + (i + 1) * step, 3), t)
                for i, t in enumerate(tokens)]
    return sorted(out, key=lambda w: (w.channel, w.start))


def write_transcript(path: Path) -> Path:
    path.write_text("".join(f"{w.channel}\t{w.start}\t{w.end}\t{w.text}\n" for w in words()),
                    encoding="utf-8")
    return path


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_fallback_joins_held_turns_and_skips_backchannels() -> None:
    d = Dialogue(id="d", events=(), words=tuple(words()))
    seg = segment_fallback(d, SegmentSettings())
    assert [(r.start, r.end, r.votes) for r in seg.rounds] == [(0.0, 4.0, None),
                                                                (7.0, 8.5, None)]
    line = seg.to_json()
    assert [r["assistant_window"] for r in line["rounds"]] == [[0.0, 8.5], [7.0, 10.5]]
    assert line["method"] == "fallback" and line["k"] is None and line["span"] == [0.0, 10.5]
    other = segment_fallback(d, SegmentSettings(user_channel=1))
    assert [(r.start, r.end) for r in other.rounds] == [(4.5, 6.5), (9.0, 10.5)]
    assert other.span == Span(0.0, 10.5)


def test_segment_a_transcript_without_a_judge(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    source = write_transcript(tmp_path / "talk.txt")
    out = tmp_path / "out" / "rounds.jsonl"
    assert main(["segment", str(source), "-o", str(out)]) == 0
    [line] = read_lines(out)
    assert line["dialogue_id"] == "talk" and line["method"] == "fallback"
    assert [r["user"] for r in line["rounds"]] == [[0.0, 4.0], [7.0, 8.5]]
    assert "1 dialogue(s), 2 round(s): 0 segmented by the judge, 1 by the annotator" in \
        capsys.readouterr().out


def test_segment_a_dataset_with_the_judge_then_from_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DUPLEXEVAL_JUDGE_API_KEY", "sk-test-segment")
    root = make_dataset(tmp_path / "ds", {"0": [("TURN", 0.0, 4.0)]},
                        words=[(w.channel, w.start, w.end, w.text) for w in words()],
                        audio_seconds=12.0)
    out, cache = tmp_path / "rounds.jsonl", tmp_path / "answers.sqlite"
    with FakeJudge(responder(user_turns_jittered)) as server:
        argv = ["segment", str(root), "--judge-url", server.base_url, "--judge-model",
                "fake-judge-7b", "--judge-cache", str(cache), "-o", str(out)]
        assert main(argv) == 0
        first = out.read_text(encoding="utf-8")
        assert len(server.requests) == 6
        assert main(argv) == 0
        assert len(server.requests) == 6 and out.read_text(encoding="utf-8") == first
    [line] = read_lines(out)
    # the fake proposes each USER line of 1 s or more; attempt 1 moves [0.0, 1.5] to start
    # at -0.1 s, outside the recording: discarded
    assert line["method"] == "judge" and line["k"] == 6 and line["valid_proposals"] == 5
    assert line["discarded"] == [{"attempt": 0, "reason": "round [-0.1, 1.6] lies outside the "
                                                          "transcript [0, 12]"}]
    assert (line["judge_model"], line["prompt_id"], line["prompt_version"]) == \
        ("fake-judge-7b", "segment.rounds", 1)
    assert line["temperature"] == 0.7 and line["span"] == [0.0, 12.0]
    assert [(r["user"], r["votes"]) for r in line["rounds"]] == \
        [([0.0, 1.5], 5), ([2.3, 4.0], 5), ([7.0, 8.5], 5)]
    assert "0 requests (0 retries), 6 cached" in capsys.readouterr().out
    assert "sk-test-segment" not in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", ["missing", "malformed", "not-a-dataset", "judge-half"])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, case: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rounds.jsonl"
    out.write_text("kept\n", encoding="utf-8")
    source = tmp_path / "talk.txt"
    extra: list[str] = []
    if case == "malformed":
        source.write_text("0\t0.0\t0.5\thello\n0\tzero\t1.0\tthere\n", encoding="utf-8")
    elif case == "not-a-dataset":
        source = tmp_path / "empty"
        source.mkdir()
    elif case == "judge-half":
        write_transcript(source)
        extra = ["--judge-url", "http://127.0.0.1:9/v1"]
    assert main(["segment", str(source), "-o", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("duplexeval: ")
    if case != "judge-half":
        assert str(source) in err[0]
    if case == "malformed":
        assert f"{source}:2:" in err[0]
    assert out.read_text(encoding="utf-8") == "kept\n"  # nothing written


@pytest.mark.parametrize("option", [["-k", "0"], ["--user-channel", "2"],
                                    ["--judge-temperature", "hot"]])
def test_bad_options_exit_2(tmp_path: Path, option: list[str]) -> None:
    source = write_transcript(tmp_path / "talk.txt")
    with pytest.raises(SystemExit) as exited:
        main(["segment", str(source), "-o", str(tmp_path / "o.jsonl"), *option])
    assert exited.value.code == 2
