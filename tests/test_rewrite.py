"""``data rewrite``: TopiOCQA specs into spoken style and Japanese through a loopback
OpenAI-compatible server (real HTTP), cached and recorded; a failed or malformed answer keeps
the text before and is counted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.data.recipes._topiocqa import QaTurn, write_specs
from duplexeval.judge import load_prompt
from duplexeval.synth._spec import load_specs
from fake_judge import FakeJudge

LINE = re.compile(r"^\d+\. (USER|SYSTEM): (.*)$", re.M)


def _turn(conv: int, n: int, q: str, a: str) -> QaTurn:
    return QaTurn(n, conv, n, q, a, "Topic", (a,))


def _specs(root: Path) -> Path:
    conversations = {
        1: [_turn(1, 1, "who painted the night watch?", "Rembrandt"),
            _turn(1, 2, "when was it finished?", "1642")],
        2: [_turn(2, 1, "what is BROKEN about?", "UNANSWERABLE")],
        3: [_turn(3, 1, "how many SHORT answers?", "two")],
        4: [_turn(4, 1, "is the FAILING server up?", "no")],
    }
    write_specs(conversations, root, "dev")
    return root / "specs"


def policy(messages: list[dict[str, str]]) -> dict[str, str]:
    """Spoken: ``Well, <text>``; Japanese: ``訳:<text>``; a dialogue that mentions BROKEN gets
    prose, SHORT one turn too few, FAILING an HTTP 400."""
    user = messages[-1]["content"]
    lines = [text for _, text in LINE.findall(user)]
    if "BROKEN" in user:
        return {"raw": "Sure! Here is the spoken version of your dialogue."}
    if "FAILING" in user:
        return {"fail": "400xinf"}
    if "SHORT" in user:
        lines = lines[:-1]
    japanese = "Japanese" in user
    turns = [("訳:" if japanese else "Well, ") + t for t in lines]
    return {"raw": json.dumps({"turns": turns}, ensure_ascii=False)}


def _run(specs: Path, out: Path, server: FakeJudge, cache: Path, *extra: str) -> int:
    return main(["data", "rewrite", str(specs), "-o", str(out), "--judge-url", server.base_url,
                 "--judge-model", "fake-llm", "--judge-cache", str(cache), *extra])


def test_rewrite_and_translate_through_a_loopback_endpoint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs, out, cache = _specs(tmp_path / "ds"), tmp_path / "ja", tmp_path / "cache.sqlite"
    with FakeJudge(policy) as server:
        assert _run(specs, out, server, cache, "--translate", "ja") == 0
        requests = len(server.requests)
        first = {p.name: p.read_text() for p in out.glob("*.json")}
        assert _run(specs, out, server, cache, "--translate", "ja", "--force") == 0
        # every answer from the cache but the failed calls, which are asked again
        assert len(server.requests) == requests + 2
    assert {p.name: p.read_text() for p in out.glob("*.json")} == first  # the same specs
    text = capsys.readouterr().out
    assert "spoken: 1 rewritten, 3 kept" in text and "translate: 1 rewritten, 3 kept" in text

    one = json.loads((out / "topiocqa_dev_0001.json").read_text())
    assert one["language"] == "ja"
    assert [t["text"] for t in one["turns"]] == [
        "訳:Well, who painted the night watch?", "訳:Well, Rembrandt",
        "訳:Well, when was it finished?", "訳:Well, 1642"]
    assert one["turns"][0]["answer"] == "訳:Well, Rembrandt"
    broken = json.loads((out / "topiocqa_dev_0002.json").read_text())
    assert broken == json.loads((specs / "topiocqa_dev_0002.json").read_text())
    assert {s.id for s in load_specs(out)} == {f"topiocqa_dev_000{i}" for i in range(1, 5)}

    records = [json.loads(x) for x in (out / "rewrite.jsonl").read_text().splitlines()]
    assert [(r["spec_id"][-1], r["step"], r["status"]) for r in records] == [
        ("1", "spoken", "rewritten"), ("1", "translate", "rewritten"),
        ("2", "spoken", "kept"), ("2", "translate", "kept"),
        ("3", "spoken", "kept"), ("3", "translate", "kept"),
        ("4", "spoken", "kept"), ("4", "translate", "kept")]
    assert all(r["model"] == "fake-llm" and r["cached"] for r in records if r["status"] ==
               "rewritten")
    versions = {r["prompt_id"]: r["prompt_version"] for r in records}
    assert versions == {"mtqa.spoken": load_prompt("mtqa.spoken").prompt.version,
                        "mtqa.translate_ja": load_prompt("mtqa.translate_ja").prompt.version}
    reasons = {r["spec_id"][-1]: r["reason"] for r in records if r["step"] == "spoken"}
    assert "JSON" in reasons["2"] and "1 turn(s) for 2 line(s)" in reasons["3"]
    assert "judge call failed" in reasons["4"]
    assert records[0]["before"] == ["who painted the night watch?", "Rembrandt",
                                    "when was it finished?", "1642"]


def test_spoken_only_keeps_english_and_the_written_answers(tmp_path: Path) -> None:
    specs, out = _specs(tmp_path / "ds"), tmp_path / "spoken"
    with FakeJudge(policy) as server:
        assert _run(specs, out, server, tmp_path / "c.sqlite") == 0
        sent = next(r for r in server.requests if "night" in r["messages"][-1]["content"])
    one = json.loads((out / "topiocqa_dev_0001.json").read_text())
    assert one["language"] == "en" and one["turns"][0]["answer"] == "Rembrandt"
    assert one["turns"][1]["text"] == "Well, Rembrandt"
    assert sent["model"] == "fake-llm" and sent["temperature"] == 0.0
    assert "1. USER: who painted the night watch?\n2. SYSTEM: Rembrandt" in \
        sent["messages"][-1]["content"]


def test_no_endpoint_no_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = _specs(tmp_path / "ds")
    with pytest.raises(SystemExit) as exc:
        main(["data", "rewrite", str(specs), "-o", str(tmp_path / "out")])
    assert exc.value.code == 2 and "--judge-url" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_specs_that_cannot_be_rewritten_are_kept_and_not_sent(tmp_path: Path) -> None:
    specs = _specs(tmp_path / "ds")
    path = specs / "topiocqa_dev_0001.json"
    spec = json.loads(path.read_text())
    spec["turns"][0]["pause"] = {"after_word": 2, "seconds": 0.5}
    path.write_text(json.dumps(spec))
    path = specs / "topiocqa_dev_0003.json"
    spec = json.loads(path.read_text())
    spec["language"] = "ja"
    path.write_text(json.dumps(spec, ensure_ascii=False))
    out = tmp_path / "out"
    with FakeJudge(policy) as server:
        assert _run(specs, out, server, tmp_path / "c.sqlite") == 0
        sent = " ".join(r["messages"][-1]["content"] for r in server.requests)
    assert "night watch" not in sent and "SHORT" not in sent
    records = {r["spec_id"][-1]: r for r in map(json.loads, (out / "rewrite.jsonl").open())}
    assert "positions" in records["1"]["reason"] and "'ja'" in records["3"]["reason"]
    assert json.loads((out / "topiocqa_dev_0001.json").read_text())["turns"][0]["pause"]
