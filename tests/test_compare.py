"""``duplexeval compare`` and ``duplexeval report`` on hand-made scored runs where the answer is
known: identical runs (difference 0, p = 1), a constant shift (the CI excludes 0), exact
permutation p-values, Holm's correction; the report's files, formats and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from duplexeval._fileio import atomic_write_json, atomic_write_text, json_line
from duplexeval.cli import main
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._paired import holm, paired_difference
from duplexeval.report._compare import compare_runs
from duplexeval.results import EventResult, OfflineRecord, load, load_scored
from duplexeval.runs import RunDir
from test_results_reader import make_run


def test_identical_values_give_zero_difference_and_p_one() -> None:
    values = list(np.random.default_rng(1).normal(1.0, 0.3, 40))
    d = paired_difference(values, values)
    assert (d.diff, d.ci_low, d.ci_high, d.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_a_constant_shift_has_a_ci_excluding_zero_and_a_small_p() -> None:
    a = list(np.random.default_rng(2).normal(1.0, 0.3, 40))
    d = paired_difference(a, [x + 0.25 for x in a])
    assert d.diff == pytest.approx(0.25)
    assert d.ci_low == pytest.approx(0.25) and d.ci_high == pytest.approx(0.25)
    assert d.p_value == pytest.approx(1 / 10_001)  # no random sign assignment reaches it


def test_small_samples_have_the_exact_permutation_p() -> None:
    # 5 equal positive differences: only the all-plus and all-minus assignments reach |mean|
    assert paired_difference([0.0] * 5, [1.0] * 5).p_value == pytest.approx(2 / 32)
    # differences +1, -1: every assignment has |mean| in {0, 1}; observed 0 -> p = 1
    assert paired_difference([0.0, 0.0], [1.0, -1.0]).p_value == 1.0


def test_the_bootstrap_is_seeded_and_noise_straddles_zero() -> None:
    rng = np.random.default_rng(3)
    a, b = list(rng.normal(0, 1, 60)), list(rng.normal(0, 1, 60))
    first, again = paired_difference(a, b), paired_difference(a, b)
    assert first == again
    assert first.ci_low < first.diff < first.ci_high
    assert first.p_value > 0.05 and first.ci_low < 0 < first.ci_high


def test_holm() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


# -- on scored runs ---------------------------------------------------------------------------

def _events(latencies: list[float], tors: list[bool], ids: str = "e") -> list[EventResult]:
    return [EventResult(event_id=f"{ids}{i}", sample_id="s1", event_type="TURN_SHIFT",
                        language="en", domain="chat", dimension="smooth_turn_taking",
                        values={"latency ↓": lat, "tor ↑": tor}, extras={}, info={},
                        audio=f"samples/s1/{ids}{i}.wav", user_channel=0,
                        event_start=10.0 * i, event_end=10.0 * i + 0.5)
            for i, (lat, tor) in enumerate(zip(latencies, tors, strict=True))]


def _scored_run(root: Path, latencies: list[float], tors: list[bool],
                words: list[int] | None = None, ids: str = "e", **kwargs: object) -> Path:
    run = make_run(root, **kwargs)  # type: ignore[arg-type]
    files = RunDir(run).scores()
    results = load(run).model_copy(update={"events": _events(latencies, tors, ids)})
    atomic_write_json(files.results, results.model_dump(mode="json"))
    if words is not None:
        atomic_write_text(files.content_offline, "".join(json_line(OfflineRecord(
            event_id=f"{ids}{i}", sample_id="s1", language="en", domain="chat",
            response_words=w, truncated=None, qa_f1=None, qa_em=None, user="", response="",
            reference="").model_dump()) for i, w in enumerate(words)))
    return run


LAT = [0.5, 0.9, 1.3, 0.7, 1.1, 0.6, 0.8, 1.0, 1.2, 0.4] * 3
TOR = [True, False, True] * 10


def test_compare_identical_runs(tmp_path: Path) -> None:
    a = load_scored(_scored_run(tmp_path / "a", LAT, TOR, words=list(range(30))))
    b = load_scored(_scored_run(tmp_path / "b", LAT, TOR, words=list(range(30))))
    c = compare_runs(a, b)
    assert [r.metric for r in c.rows] == ["latency ↓", "tor ↑", "response_words"]
    assert c.shared == 30 and all(r.n == 30 for r in c.rows)
    assert all(r.diff == 0 and r.p_value == 1 and r.p_holm == 1 for r in c.rows)


def test_compare_a_constant_latency_shift_over_shared_events(tmp_path: Path) -> None:
    a = load_scored(_scored_run(tmp_path / "a", LAT, TOR))
    b = load_scored(_scored_run(tmp_path / "b", [x + 0.3 for x in LAT[:20]], TOR[:20]))
    c = compare_runs(a, b)
    latency = next(r for r in c.rows if r.metric == "latency ↓")
    assert latency.n == 20 and c.events_a == 30 and c.events_b == 20
    assert latency.diff == pytest.approx(0.3) and latency.ci_low > 0
    assert latency.p_holm == pytest.approx(2 / 10_001)  # Holm over 2 metrics
    tor = next(r for r in c.rows if r.metric == "tor ↑")
    assert tor.mean_a == pytest.approx(100 * 13 / 20)  # percent points
    assert tor.diff == 0 and tor.p_value == 1


def test_events_are_matched_across_protocols_by_dialogue_channel_type_and_span(
        tmp_path: Path) -> None:
    """Official event ids number each protocol's samples: the same event has another id."""
    a = load_scored(_scored_run(tmp_path / "a", LAT, TOR, words=[3] * 30, protocol="single"))
    b = load_scored(_scored_run(tmp_path / "b", LAT, TOR, words=[5] * 30, ids="x"))
    c = compare_runs(a, b)
    assert c.shared == 30
    words = next(r for r in c.rows if r.metric == "response_words")
    assert (words.n, words.diff) == (30, 2.0)


def test_an_older_file_without_spans_is_matched_by_event_id(tmp_path: Path) -> None:
    a = load_scored(_scored_run(tmp_path / "a", LAT, TOR))
    b = load_scored(_scored_run(tmp_path / "b", LAT, TOR))
    b.results.events[:] = [e.model_copy(update={"event_start": None})
                           for e in b.results.events]
    assert compare_runs(a, b).shared == 30


def test_compare_refuses_runs_without_shared_events(tmp_path: Path) -> None:
    a = load_scored(_scored_run(tmp_path / "a", LAT[:3], TOR[:3]))
    b = load_scored(_scored_run(tmp_path / "b", LAT[:3], TOR[:3]))
    b.results.events[:] = [e.model_copy(update={"sample_id": "other"}) for e in b.results.events]
    with pytest.raises(DuplexevalError, match="share no scored event"):
        compare_runs(a, b)


def test_compare_command_prints_the_table_and_writes_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _scored_run(tmp_path / "a", LAT, TOR)
    b = _scored_run(tmp_path / "b", [x + 0.3 for x in LAT], TOR)
    out = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "TURN_SHIFT latency ↓ [smooth_turn_taking]" in text and "+0.300" in text
    assert "Holm across 2 metrics" in text
    data = json.loads(out.read_text())
    assert data["difference"] == "b - a" and data["resamples"] == 10_000
    assert len(data["rows"]) == 2


# -- duplexeval report --------------------------------------------------------------------------

def test_report_writes_table5_and_table6_in_each_format(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [_scored_run(tmp_path / p, LAT, TOR, protocol=p) for p in ("single", "multi-gen")]
    out = tmp_path / "out"
    assert main(["report", *map(str, runs), "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "compare.json", "compare.md", "table5.csv", "table5.md", "table5.tex", "table6.csv",
        "table6.md", "table6.tex"]
    compared = json.loads((out / "compare.json").read_text())
    assert [(Path(c["a"]).name, Path(c["b"]).name) for c in compared] == [("single",
                                                                            "multi-gen")]
    assert "cascade (Single)" in (out / "table5.md").read_text()
    assert "Chat SHIFT TOR↑ Gen." in (out / "table6.md").read_text()
    assert "cascade (Gen.)" in capsys.readouterr().out


def test_report_skips_a_comparison_without_shared_events(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [make_run(tmp_path / p, protocol=p) for p in ("single", "multi-gen")]
    assert main(["report", *map(str, runs), "-o", str(tmp_path / "out")]) == 0
    assert "not compared: " in capsys.readouterr().err
    assert not (tmp_path / "out" / "compare.md").exists()


def test_report_one_protocol_is_table5_only(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    out = tmp_path / "out"
    assert main(["report", str(run), "-o", str(out), "--format", "md"]) == 0
    assert [p.name for p in out.iterdir()] == ["table5.md"]


@pytest.mark.parametrize(("case", "message"), [
    ("format", "--format 'md,html': choose from md, csv, tex"),
    ("unscored", "not scored"),
    ("mixed", "dataset differs"),
    ("missing", "no such file or folder"),
])
def test_report_bad_input_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, message: str) -> None:
    args = ["report", "-o", str(tmp_path / "out")]
    if case == "format":
        args += [str(make_run(tmp_path / "r")), "--format", "md,html"]
    elif case == "unscored":
        args += [str(make_run(tmp_path / "r", scored=False)), "--no-score"]
    elif case == "mixed":
        args += [str(make_run(tmp_path / "a", protocol="single")),
                 str(make_run(tmp_path / "b", protocol="multi-gen", dataset="other"))]
    else:
        args += [str(tmp_path / "nope")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    if case == "mixed":
        assert main([*args, "--allow-mixed"]) == 0
