"""``duplexeval judge-agreement``: the statistics against hand-worked values and Krippendorff's
published examples, the pairing of two judges' records with every exclusion counted, the
command on a run over two loopback judges with a known pattern of disagreement (and a re-run
that makes no call), on two content files, and bad input refused in one line."""

from __future__ import annotations

import doctest
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import needs_extra
from duplexeval._fileio import atomic_write_json, atomic_write_text, json_line
from duplexeval.analysis import Chunk, SpeechSegment, transcript_json
from duplexeval.cli import main
from duplexeval.metrics._stats import RESAMPLES
from duplexeval.metrics.content import _agreement as agreement_module
from duplexeval.metrics.content._agreement import (
    agreement,
    cohen_kappa,
    krippendorff_alpha,
)
from duplexeval.metrics.content._judge_pairs import compare_records
from duplexeval.results import ContentRecord
from duplexeval.runs._directory import (
    AnalysisInputs,
    AnalysisRow,
    DatasetInfo,
    RunConfigFile,
    RunDir,
    SystemInfo,
)
from fake_judge import FakeJudge

# -- the statistics -----------------------------------------------------------------------

# Twelve items on 0-2; judge B = judge A + 1 on every third item (3, 6, 9, 12; all below 2).
GRADES_A = [0, 2, 1, 2, 0, 0, 1, 2, 1, 0, 2, 0]
GRADES_B = [g + 1 if i % 3 == 0 else g for i, g in enumerate(GRADES_A, start=1)]
# By hand.  Counts (A rows, B columns): C = [[3, 2, 0], [0, 1, 2], [0, 0, 4]]; A's marginals
# (5, 3, 4), B's (3, 3, 6).  Exact: 8/12.  Quadratic weights w = (i - j)^2 / 4: the four
# disagreements are one point apart, sum w O = 4 * 1/4 / 12 = 1/12; sum w E = (5*3/4 + 5*6 +
# 3*3/4 + 3*6/4 + 4*3 + 4*3/4) / 144 = 55.5 / 144, so kappa = 1 - 12 / 55.5 = 29/37.
# Alpha: o = C + C^T, n_c = (8, 6, 10), n = 24, sum o d2 = 2 * 4 = 8 (interval);
# sum n_c n_k d2 = 2 * (8*6*1 + 8*10*4 + 6*10*1) = 856: alpha = 1 - 23 * 8 / 856.
# Ordinal d2: (0,1) = ((8+6)/2)^2 = 49, (1,2) = ((6+10)/2)^2 = 64, (0,2) = (24 - 9)^2 = 225;
# sum o d2 = 2 * (2*49 + 2*64) = 452, sum n_c n_k d2 = 2 * (8*6*49 + 8*10*225 + 6*10*64) =
# 48384: alpha = 1 - 23 * 452 / 48384.  Mean difference B - A: 4/12.
HAND = {("exact_agreement", None): 8 / 12, ("cohen_kappa", "quadratic"): 29 / 37,
        ("krippendorff_alpha", "interval"): 1 - 23 * 8 / 856,
        ("krippendorff_alpha", "ordinal"): 1 - 23 * 452 / 48384,
        ("mean_difference", None): 4 / 12}

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the reliability data of
# four observers on twelve units with missing values (unit 12 has one value: not pairable),
# and the values published there: nominal .743, ordinal .815, interval .849.
N = None
KRIPPENDORFF_2011 = list(zip(
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N], strict=True))
# The same paper's binary example: two observers, ten units, nominal alpha .095.
BINARY_A = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
BINARY_B = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
# Cohen's kappa of it by hand: p_o = 6/10; A's share of 1s 2/10, B's 4/10; p_e = 0.8 * 0.6 +
# 0.2 * 0.4 = 0.56; kappa = (0.6 - 0.56) / (1 - 0.56) = 1/11.  Alpha: n_0 = 14, n_1 = 6,
# four disagreements: 1 - 19 * 8 / (2 * 14 * 6) = 2/21 (the published .095).
BINARY_HAND = {("exact_agreement", None): 0.6, ("cohen_kappa", "unweighted"): 1 / 11,
               ("krippendorff_alpha", "nominal"): 2 / 21, ("mean_difference", None): 0.2}


def _values(estimates: list[Any]) -> dict[tuple[str, str | None], float | None]:
    return {(e.metric, e.form): e.value for e in estimates}


def test_the_module_examples_hold() -> None:
    result = doctest.testmod(agreement_module)
    assert result.attempted >= 6 and result.failed == 0


def test_kappa_alpha_and_the_rest_match_the_hand_worked_example() -> None:
    estimates = agreement(GRADES_A, GRADES_B, 0, 2)
    assert _values(estimates) == pytest.approx(HAND)
    assert cohen_kappa(GRADES_A, GRADES_B, 0, 2) == pytest.approx(29 / 37)
    assert cohen_kappa(GRADES_A, GRADES_B, 0, 2, "unweighted") == pytest.approx(
        (8 / 12 - (5 * 3 + 3 * 3 + 4 * 6) / 144) / (1 - (5 * 3 + 3 * 3 + 4 * 6) / 144))
    for e in estimates:  # every interval brackets its value, from the same 2000 draws
        assert e.n == 12 and e.reason is None
        assert e.ci_low is not None and e.ci_high is not None
        assert e.ci_low <= e.value <= e.ci_high  # type: ignore[operator]
        assert 0.95 * RESAMPLES <= e.resamples <= RESAMPLES
    assert agreement(GRADES_A, GRADES_B, 0, 2) == estimates  # fixed seed: the same intervals
    # on 0-5 the same scores agree the same (quadratic weights and alpha are scale-free)
    assert _values(agreement(GRADES_A, GRADES_B, 0, 5)) == pytest.approx(HAND)


def test_alpha_reproduces_krippendorffs_published_examples() -> None:
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
    for metric, value in published.items():
        assert round(krippendorff_alpha(KRIPPENDORFF_2011, metric), 3) == value  # type: ignore[arg-type]
    binary = agreement(BINARY_A, BINARY_B, 0, 1)
    assert _values(binary) == pytest.approx(BINARY_HAND)
    assert round(BINARY_HAND["krippendorff_alpha", "nominal"], 3) == 0.095


def test_undefined_values_are_none_with_a_reason() -> None:
    constant = _by_metric(agreement([1, 1, 1, 1], [0, 1, 2, 1], 0, 2))
    kappa = constant["cohen_kappa"]
    assert kappa.value is None and kappa.ci_low is None
    assert "judge A gives one score only (1)" in (kappa.reason or "")
    assert constant["krippendorff_alpha"].value is not None  # pooled: still defined
    same = _by_metric(agreement([2, 2, 2], [2, 2, 2], 0, 2))
    assert same["krippendorff_alpha"].value is None
    assert "every score is 2" in (same["krippendorff_alpha"].reason or "")
    assert same["exact_agreement"].value == 1.0
    one = _by_metric(agreement([1], [2], 0, 2))
    assert one["mean_difference"].value == 1.0 and one["mean_difference"].ci_low is None
    assert "fewer than 2 items" in (one["mean_difference"].reason or "")
    assert all(e.value is None and e.reason == "no item scored by both judges"
               for e in agreement([], [], 0, 1))
    with pytest.raises(ValueError, match="outside the scale"):
        agreement([3], [0], 0, 2)


def _by_metric(estimates: list[Any]) -> dict[str, Any]:
    return {e.metric: e for e in estimates}


# -- pairing -----------------------------------------------------------------------------------

def _record(event: str, score: int | None, model: str, dimension: str = "instruction",
            prompt: str = "mtr.instruction", version: int = 1) -> ContentRecord:
    return ContentRecord(event_id=event, dimension=dimension, score=score,
                         score_100=None if score is None else score * 100.0,
                         unscored_reason=None if score is not None else "no JSON object",
                         judge_model=model, prompt_id=prompt, prompt_version=version,
                         raw=None, reason=None, sample_id="d1", language="en", domain="chat")


def _binary_files() -> tuple[list[ContentRecord], list[ContentRecord]]:
    """Krippendorff's binary example as two judges' records, and one item of each exclusion."""
    a = [_record(f"e{i}", s, "big") for i, s in enumerate(BINARY_A)]
    b = [_record(f"e{i}", s, "small") for i, s in enumerate(BINARY_B)]
    a += [_record("rule", 0, "rule"), _record("ua", None, "big"), _record("ub", 1, "big"),
          _record("both", None, "big"), _record("onlya", 1, "big"),
          _record("v", 1, "big", version=1)]
    b += [_record("rule", 0, "rule"), _record("ua", 1, "small"), _record("ub", None, "small"),
          _record("both", None, "small"), _record("onlyb", 0, "small"),
          _record("v", 1, "small", version=2)]
    return a, b


def test_pairs_are_counted_and_every_exclusion_has_its_reason() -> None:
    a, b = _binary_files()
    (dim,) = compare_records(a, b)
    assert (dim.dimension, dim.scale, dim.score_min, dim.score_max) == ("instruction",
                                                                       "binary", 0, 1)
    assert (dim.items, len(dim.a)) == (17, 10) and dim.excluded.total == 7
    ex = dim.excluded
    assert (ex.no_call, ex.unscored_a, ex.unscored_b, ex.unscored_both, ex.only_a, ex.only_b,
            ex.other_prompt) == (1, 1, 1, 1, 1, 1, 1)
    assert _values(dim.estimates) == pytest.approx(BINARY_HAND)


# -- the command over two loopback judges --------------------------------------------------------

GRADED = re.compile(r"item (\d+) grade (\d+)")


def _grade(messages: list[dict[str, str]]) -> tuple[int, int]:
    found = GRADED.search(messages[-1]["content"])
    assert found, "every judged reply says its item and grade"
    return int(found.group(1)), int(found.group(2))


def _judge_a(messages: list[dict[str, str]]) -> dict[str, str]:
    """The reference: the grade the reply carries."""
    return {"score": str(_grade(messages)[1])}


def _judge_b(messages: list[dict[str, str]]) -> dict[str, str]:
    """One point more on every third item; no JSON for a reply that says 'garbled'."""
    if "garbled" in messages[-1]["content"]:
        return {"raw": "I would rather not say"}
    item, grade = _grade(messages)
    return {"score": str(grade + 1 if item % 3 == 0 else grade)}


def _event_row(run: RunDir, i: int, reply: str | None, event_type: str) -> AnalysisRow:
    """One sample's analysed transcript (the user asks on channel 0 until 2.0 s, the system
    replies from 2.6 s on channel 1, or not at all) and its metadata row."""
    event_id = f"d1_ch0_{i:04d}"
    user = [Chunk(0.0, 1.0, "what"), Chunk(1.0, 2.0, "now")]
    segments = [SpeechSegment.of(0, 0.0, 2.0, "what now", tuple(user))]
    if reply:
        words = tuple(Chunk(2.6 + 0.2 * k, 2.8 + 0.2 * k, w) for k, w in enumerate(reply.split()))
        segments.append(SpeechSegment.of(1, words[0].start, words[-1].end, reply, words))
    files = run.analysis()
    atomic_write_json(files.transcript("d1", event_id), transcript_json(segments))
    return AnalysisRow(
        sample_id="d1", event_id=event_id, user_channel=0, system_channel=1,
        event_type=event_type, task="smooth_turn_taking", event_start=2.0, event_end=2.5,
        input_start=0.0, input_end=12.0, context_start=0.0, context_end=0.0, model="scripted",
        trigger_time=2.0, input_audio_path="in.wav", context_audio_path="ctx.wav",
        output_audio_path="out.wav", use_context=False, context_mode="none",
        output_asr_path=files.transcript_key("d1", event_id))


def make_analysed_run(root: Path, replies: list[str | None],
                      event_type: str = "TURN_SHIFT") -> Path:
    """A chat run whose analysis (transcripts, metadata, settings: what ``score`` leaves) is
    written by hand, so the judged replies are known; its dataset is not at hand."""
    run = RunDir(root)
    run.root.mkdir(parents=True)
    run.write_config(RunConfigFile(
        config={}, config_hash="x", system=SystemInfo(name="scripted"), protocol="multi-ref",
        seed=0, dataset=DatasetInfo(path=str(root / "absent"), name="x", language="en",
                                    domain="chat")))
    rows = [_event_row(run, i, reply, event_type) for i, reply in enumerate(replies, start=1)]
    run.analysis().finish(rows, AnalysisInputs(metadata_sha256="x", audio={}),
                          {"asr": "base-packaged", "content_event_types": ["TURN_SHIFT"]})
    return root


REPLIES: list[str | None] = [f"item {i} grade {g}" for i, g in enumerate(GRADES_A, start=1)]
REPLIES += [None, "item 13 grade 1 garbled"]
"""Twelve graded replies, one silence (scored 0 without a call) and one B cannot score."""


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_two_loopback_judges_agree_as_their_pattern_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_analysed_run(tmp_path / "run", REPLIES)
    before = _files(run)
    cache = tmp_path / "judge.sqlite"
    with FakeJudge(policy=_judge_a) as a, FakeJudge(policy=_judge_b) as b:
        args = ["judge-agreement", str(run), "--judge", f"url={a.base_url},model=judge-a",
                "--judge", f"model=judge-b,url={b.base_url}", "--judge-cache", str(cache),
                "--judge-concurrency", "2"]
        assert main([*args, "--json"]) == 0
        calls = (len(a.requests), len(b.requests))
        report = json.loads(capsys.readouterr().out, parse_constant=_no_constants)
        assert calls == (13 * 3, 13 * 3)  # 13 replies x (relevance, consistency, quality)
        assert main(args) == 0  # again, as a table: every answer from the cache
        assert (len(a.requests), len(b.requests)) == calls
        table = capsys.readouterr().out
    assert _files(run) == before  # nothing written into the run
    assert [j["model"] for j in report["judges"]] == ["judge-a", "judge-b"]
    assert "no JSON object" in report["judges"][1]["first_unscored"]
    dims = {d["dimension"]: d for d in report["dimensions"]}
    assert set(dims) == {"relevance", "consistency", "quality"}
    for d in dims.values():
        assert (d["items"], d["paired"]) == (14, 12)
        assert d["excluded"]["no_call"] == 1 and d["excluded"]["unscored_b"] == 1
        assert d["excluded"]["total"] == 2
        values = {(m["metric"], m["form"]): m["value"] for m in d["metrics"]}
        assert values == pytest.approx(HAND)
        assert all(m["n"] == 12 and m["ci_low"] <= m["value"] <= m["ci_high"]
                   for m in d["metrics"])
    assert (dims["quality"]["score_min"], dims["quality"]["score_max"]) == (0, 5)
    assert "judge-a: 0 requests" in table and "39 cached" in table
    assert re.search(r"Cohen's kappa \(quadratic\)\s+0\.784\s+\[0\.\d{3}, 0\.\d{3}\]\s+12",
                     table)
    assert "exact agreement" in table and "mean difference (B - A)" in table
    assert "excluded: 1 decided without a call (rule), 1 unscored by B" in table


def _no_constants(token: str) -> None:
    raise AssertionError(f"not strict JSON: {token}")


# -- the command on two content files --------------------------------------------------------------

def _write(path: Path, records: list[ContentRecord]) -> Path:
    atomic_write_text(path, "".join(json_line(r.model_dump()) for r in records))
    return path


def test_two_content_files_and_a_constant_judge_in_strict_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _binary_files()
    b.append(_record("q1", 2, "small", dimension="relevance", prompt="m3.relevance"))
    a.append(_record("q1", 2, "big", dimension="relevance", prompt="m3.relevance"))
    a.append(_record("q2", 2, "big", dimension="relevance", prompt="m3.relevance"))
    b.append(_record("q2", 1, "small", dimension="relevance", prompt="m3.relevance"))
    folder = tmp_path / "scores-b"
    folder.mkdir()
    _write(folder / "content.jsonl", b)  # a scores folder names its content file
    assert main(["judge-agreement", "--content", str(_write(tmp_path / "a.jsonl", a)),
                 "--content", str(folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out, parse_constant=_no_constants)
    assert [j["model"] for j in report["judges"]] == ["big", "small"]
    instruction, relevance = report["dimensions"]
    values = {(m["metric"], m["form"]): m["value"] for m in instruction["metrics"]}
    assert values == pytest.approx(BINARY_HAND) and instruction["paired"] == 10
    kappa = next(m for m in relevance["metrics"] if m["metric"] == "cohen_kappa")
    assert kappa["value"] is None and kappa["ci_low"] is None
    assert "judge A gives one score only (2)" in kappa["reason"]


# -- bad input -----------------------------------------------------------------------------------

def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["judge-agreement", *args]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err and captured.out == ""
    return lines[0]


def test_bad_input_is_one_line_naming_the_file_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judges = ["--judge", "url=http://127.0.0.1:9/v1,model=a",
              "--judge", "url=http://127.0.0.1:9/v1,model=b",
              "--judge-cache", str(tmp_path / "cache.sqlite")]
    missing = tmp_path / "no-run"
    assert f"{missing}: not a run directory" in _refused([str(missing), *judges], capsys)
    bare = tmp_path / "bare"
    make_analysed_run(bare, ["item 1 grade 1"])
    RunDir(bare).analysis().settings.unlink()
    assert "settings.json: not found" in _refused([str(bare), *judges], capsys)
    holds = make_analysed_run(tmp_path / "holds", ["item 1 grade 1"], event_type="TURN_HOLD")
    line = _refused([str(holds), *judges], capsys)
    assert "metadata.jsonl: no content items" in line
    spec = _refused([str(holds), "--judge", "host=x,model=a", *judges[2:]], capsys)
    assert "--judge 'host=x,model=a'" in spec and "url=URL,model=MODEL" in spec
    assert "no url" in _refused([str(holds), "--judge", "model=a", "--judge", "model=b"],
                                capsys)
    same = ["--judge", "url=http://x/v1,model=m", "--judge", "url=http://y/v1,model=m"]
    assert "both judges are model 'm'" in _refused([str(holds), *same], capsys)
    assert "got 1" in _refused([str(holds), *judges[:2]], capsys)
    assert not (tmp_path / "cache.sqlite").exists() and not missing.exists()
    absent = tmp_path / "absent.jsonl"
    assert str(absent) in _refused(["--content", str(absent), "--content", str(absent)], capsys)
    empty = _write(tmp_path / "empty.jsonl", [])
    assert f"{empty}: no content items" in _refused(["--content", str(empty), "--content",
                                                     str(empty)], capsys)
    off = _write(tmp_path / "off.jsonl", [_record("e", 3, "big")])
    line = _refused(["--content", str(off), "--content", str(off)], capsys)
    assert str(off) in line and "score 3 outside mtr.instruction's 0-1" in line
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("{not json\n")
    assert f"{garbage}:1:" in _refused(["--content", str(garbage), "--content", str(off)],
                                       capsys)


# -- end to end: the items of `score` --------------------------------------------------------------

def _by_length(messages: list[dict[str, str]]) -> dict[str, str]:
    """A judge whose score follows the prompt's length (both judges of the test use it)."""
    return {"score": str(len(messages[-1]["content"]) % 2)}


@needs_extra("asr")
@pytest.mark.slow  # the content analysis of a whole run (Whisper on both channels)
def test_the_items_are_those_score_judged(
        sample_voiced: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After ``score --judge-url A``, asking A again costs nothing (the same items, from the
    cache); B, answering like A, is asked each of them once and agrees on all."""
    data = tmp_path / "data"
    shutil.copytree(sample_voiced, data)
    meta = json.loads((data / "dataset.json").read_text())
    (data / "dataset.json").write_text(json.dumps({**meta, "domain": "task"}))
    run = tmp_path / "run"
    assert main(["run", "--system", "reference", "--dataset", str(data), "--protocol",
                 "multi-ref", "--out", str(run)]) == 0
    cache = ["--judge-cache", str(tmp_path / "judge.sqlite")]
    with FakeJudge(policy=_by_length) as a, FakeJudge(policy=_by_length) as b:
        assert main(["score", str(run), "--judge-url", a.base_url, "--judge-model", "judge-a",
                     *cache]) == 0
        scored = len(a.requests)
        capsys.readouterr()
        assert main(["judge-agreement", str(run), "--judge", f"url={a.base_url},model=judge-a",
                     "--judge", f"url={b.base_url},model=judge-b", *cache, "--json"]) == 0
        assert (len(a.requests), len(b.requests)) == (scored, scored) and scored > 0
    report = json.loads(capsys.readouterr().out, parse_constant=_no_constants)
    records = [json.loads(x) for x in (RunDir(run).scores().content).read_text().splitlines()]
    judged = [r for r in records if r["judge_model"] == "judge-a"]
    assert sum(d["paired"] for d in report["dimensions"]) == len(judged) == scored
    assert sum(d["items"] for d in report["dimensions"]) == len(records)
    for d in report["dimensions"]:
        exact = next(m for m in d["metrics"] if m["metric"] == "exact_agreement")
        assert exact["value"] == 1.0 and exact["n"] == d["paired"]
