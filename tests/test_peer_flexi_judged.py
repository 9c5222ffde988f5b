"""FLEXI's judged scores on its own folders through the judge client (loopback server, real
HTTP): EDS on model interrupts, the topic-shift rating on user interrupts (only where the model
yielded and responded, as FLEXI rates them), and coherence after a user backchannel, which
FLEXI's code never parses (always 0) and ours does."""

from __future__ import annotations

import json
from pathlib import Path

from duplexeval.metrics.content import JudgeSettings
from duplexeval.peers import PeerOptions
from duplexeval.peers.flexi._scorer import score_flexi
from fake_judge import FakeJudge
from test_peer_flexi import build_model_interrupt, build_user_backchannel, build_user_interrupt


def _policy(messages: list[dict[str, str]]) -> dict[str, str]:
    """5 when the model's words after the split (or its reply) start with w4 / Sure / w; else
    2."""
    user = messages[-1]["content"]
    last = user.rsplit("\n", 1)[-1]
    return {"score": "5" if last.startswith(("w4", "Sure", "w")) else "2"}


def _run(task: str, root: Path, tmp_path: Path, server: FakeJudge) -> tuple[dict, dict]:
    judge = JudgeSettings(server.base_url, "fake-judge", cache_path=tmp_path / "c.sqlite")
    out = tmp_path / f"out-{task}"
    aggregate = score_flexi(task, root, out, PeerOptions(judge=judge))
    rows = {r["sample"]: r for r in map(json.loads, (out / "per_sample.jsonl").read_text()
                                        .splitlines())}
    return aggregate, rows


def test_eds_is_judged_on_every_scored_model_interrupt(tmp_path: Path) -> None:
    root = tmp_path / "mi"
    build_model_interrupt(root)
    with FakeJudge(policy=_policy) as server:
        aggregate, rows = _run("model_interrupt", root, tmp_path, server)
        # m1, m2 and m3 are judged (the silent and broken ones skipped) and their prompts are
        # the same: one call, the other two from its cached answer, however the threads ran
        assert len(server.requests) == 1
    assert aggregate["EDS"] == 5.0 and aggregate["not_computed"] == []
    assert rows["m1"]["judge"]["prompt_id"] == "flexi.emergency"
    assert rows["m1"]["judge"]["judge_model"] == "fake-judge"
    assert "judge" not in rows["m4"]  # skipped: not judged
    assert aggregate["judged"]["n"] == 3 and aggregate["judged"]["unscored"] == 0


def test_topic_shift_is_rated_only_where_the_model_yielded_and_responded(
        tmp_path: Path) -> None:
    root = tmp_path / "ui"
    build_user_interrupt(root)
    with FakeJudge(policy=_policy) as server:
        aggregate, rows = _run("user_interrupt", root, tmp_path, server)
    judged = {name for name, r in rows.items() if "judge" in r}
    assert judged == {name for name, r in rows.items()
                      if r.get("TOR") == 0 and r.get("responded")}
    assert judged and aggregate["LLM Rating"] is not None


def test_coherence_is_parsed_and_counted(tmp_path: Path) -> None:
    root = tmp_path / "ub"
    build_user_backchannel(root)
    with FakeJudge(policy=_policy) as server:
        aggregate, rows = _run("user_backchannel", root, tmp_path, server)
    scored = [r["judge"]["score"] for r in rows.values() if "judge" in r]
    assert aggregate["Coherence"] == sum(scored) / len(scored)
    assert aggregate["Coherent cases"] == sum(s >= 4 for s in scored) > 0
    assert rows["b7"]["judge"]["judge_model"] == "rule"  # a silent model: 0 without a call


def test_without_a_judge_the_scores_are_listed_as_not_computed(tmp_path: Path) -> None:
    root = tmp_path / "ub"
    build_user_backchannel(root)
    aggregate = score_flexi("user_backchannel", root, tmp_path / "o", PeerOptions())
    assert aggregate["Coherence"] is None
    assert aggregate["not_computed"] == ["Coherence", "Coherent cases"]
