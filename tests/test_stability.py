"""pass@k, pass^k and stability of repeated tries (``run --repeats k``): the estimators by hand,
the section on hand-made scores, plans and run directories with repeats, and the acceptance:
``scripted`` with seeded jitter has pass^k falling with k, a seed-ignoring one has it flat and
is reported deterministic."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from duplexeval.cli import main
from duplexeval.data import Dataset, Need, load_dataset
from duplexeval.metrics import DimensionScore, EventScore, EventView
from duplexeval.metrics._stability import pass_at, pass_hat, stability
from duplexeval.metrics.timing._m3 import M3Timing
from duplexeval.plan._samples import PlanOptions, build_plan, split_repeat
from duplexeval.report._text import stability_lines
from duplexeval.results import load
from duplexeval.runs._execution import _plan_config


@pytest.fixture(scope="module")
def chat_voiced(sample_voiced: Path) -> Dataset:
    dataset, _ = load_dataset(sample_voiced, audio=Need.REQUIRE)
    return dataset


def test_estimators_by_hand() -> None:
    """n = 3 tries, c passes; k tries drawn without replacement::

        c = 2 (P . P):  pass@1 = 2/3  pass@2 = 1 - C(1,2)/C(3,2) = 1   pass@3 = 1
                        pass^1 = 2/3  pass^2 = C(2,2)/C(3,2) = 1/3     pass^3 = 0
        c = 3 (P P P):  all 1;  c = 0: all 0
    """
    assert pass_at(3, 2, 1) == pytest.approx(2 / 3) == pass_hat(3, 2, 1)
    assert pass_at(3, 2, 2) == 1.0 and pass_at(3, 2, 3) == 1.0
    assert pass_hat(3, 2, 2) == pytest.approx(1 / 3) and pass_hat(3, 2, 3) == 0.0
    assert [pass_hat(3, 3, k) for k in (1, 2, 3)] == [1.0, 1.0, 1.0]
    assert [pass_at(3, 0, k) for k in (1, 2, 3)] == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        pass_at(3, 2, 4)


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_hat_falls_and_pass_at_rises_with_k(nc: tuple[int, int]) -> None:
    n, c = nc
    hats = [pass_hat(n, c, k) for k in range(1, n + 1)]
    ats = [pass_at(n, c, k) for k in range(1, n + 1)]
    assert all(a >= b for a, b in itertools.pairwise(hats))
    assert all(a <= b for a, b in itertools.pairwise(ats))
    assert hats[0] == pytest.approx(c / n) == pytest.approx(ats[0])
    assert all(h <= a + 1e-12 for h, a in zip(hats, ats, strict=True))


def _score(event_id: str, tor: int, latency: float | None) -> EventScore:
    view = EventView(event_id, "TURN_SHIFT", 0.0, 12.0, 2.0, 2.5, (), sample_id="d")
    return EventScore(view, "m3", "1", (DimensionScore(
        "smooth_turn_taking", {"tor ↑": tor, "latency ↓": latency}),))


def test_section_on_three_events_by_hand() -> None:
    """Three TURN_SHIFT events, k = 3 (P pass: tor ↑ = 1; latency in s)::

        e1   P 0.2   P 0.4   P 0.6      sd 0.2, identical? no (hashes a b c)
        e2   P 0.3   . -     P 0.5      sd of (0.3, 0.5) = 0.1414
        e3   . -     . -     . -        no latency: no sd
        pass^1 = (1 + 2/3 + 0)/3 = 5/9   pass^2 = (1 + 1/3 + 0)/3 = 4/9   pass^3 = 1/3
        pass@2 = (1 + 1 + 0)/3 = 2/3     flips: e2 only, 1/3
    """
    rows = [("e1", [(1, 0.2), (1, 0.4), (1, 0.6)]), ("e2", [(1, 0.3), (0, None), (1, 0.5)]),
            ("e3", [(0, None)] * 3)]
    scores = [_score(f"{e}_r{j}", tor, lat) for e, tries in rows
              for j, (tor, lat) in enumerate(tries)]
    hashes = {s.event.event_id: s.event.event_id for s in scores}  # every try different
    hashes.update({"e3_r0": "x", "e3_r1": "x", "e3_r2": "x"})  # e3's tries identical
    section = stability(scores, M3Timing(), hashes)
    assert section is not None and section.tries == 3 and section.events == 3
    assert section.identical_events == 1 and not section.deterministic
    (row,) = section.rows
    assert row.pass_rule is not None and "tor ↑ = 1" in row.pass_rule
    assert [p.mean for p in row.pass_hat_k] == pytest.approx([5 / 9, 4 / 9, 1 / 3])
    assert [p.mean for p in row.pass_at_k] == pytest.approx([5 / 9, 2 / 3, 2 / 3])
    assert row.flip_share is not None and row.flip_share.mean == pytest.approx(1 / 3)
    assert row.flip_share.ci_method == "wilson"
    (spread,) = row.latency_std
    assert spread.metric == "latency ↓" and spread.n == 2
    assert spread.mean == pytest.approx((0.2 + math.sqrt(0.02)) / 2)
    assert spread.measurement_origin is not None and "turn end" in spread.measurement_origin.start
    assert row.identical_share is not None and row.identical_share.mean == pytest.approx(1 / 3)


def test_no_repeats_no_section() -> None:
    assert stability([_score("d_ch0_0000_smooth_turn_taking", 1, 0.2)], M3Timing()) is None


def test_plan_with_repeats(chat_voiced: Dataset) -> None:
    """k = 1 is today's plan and configuration; k = 3 makes three tries of each sample, ids
    ``_r0.._r2`` in a row, same pass (context start, fork), and ``split_repeat`` undoes them."""
    one = build_plan(chat_voiced, PlanOptions())
    assert one == build_plan(chat_voiced, PlanOptions(repeats=1))
    assert "repeats" not in _plan_config(one) and "repeats" not in one.summary_json()
    three = build_plan(chat_voiced, PlanOptions(repeats=3))
    assert len(three.samples) == 3 * len(one.samples)
    assert three.stats.kept_events == one.stats.kept_events
    for i, s in enumerate(one.samples):
        tries = three.samples[3 * i:3 * i + 3]
        assert [t.event_id for t in tries] == [f"{s.event_id}_r{j}" for j in range(3)]
        assert {t.fork_time for t in tries} == {s.fork_time}
        assert [split_repeat(t.event_id) for t in tries] == [(s.event_id, j) for j in range(3)]
        assert split_repeat(s.event_id) == (s.event_id, None)
    assert _plan_config(three)["repeats"] == 3 and three.summary_json()["repeats"] == 3
    with pytest.raises(ValueError):
        PlanOptions(repeats=0)


def _run_and_score(dataset: Dataset, out: Path, *system_args: str, repeats: int = 4) -> None:
    args = ["run", "--system", "scripted", "--dataset", str(dataset.root), "--protocol",
            "multi-gen", "--out", str(out), "--repeats", str(repeats)]
    for a in system_args:
        args += ["--system-arg", a]
    assert main(args) == 0
    assert main(["score", str(out), "--truth"]) == 0


def _hold(out: Path):
    results = load(out / "scores-truth" / "m3")
    assert results.stability is not None
    return results, next(r for r in results.stability.rows if r.event_type == "TURN_HOLD")


def test_jitter_makes_pass_hat_fall_and_a_seedless_system_is_flat(
        chat_voiced: Dataset, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scripted delay=0.6 jitter=0.5`` takes over some held pauses on some seeds: its TURN_HOLD
    pass^k falls from pass^1 and verdicts flip; ``ignore_seed=1`` (no jitter) gives identical
    tries: flat pass^k, no flips, zero latency spread, ``deterministic``."""
    jitter = tmp_path / "jitter"
    _run_and_score(chat_voiced, jitter, "delay=0.6", "jitter=0.5")
    printed = capsys.readouterr().out
    results, hold = _hold(jitter)
    assert results.stability is not None and not results.stability.deterministic
    hats = [p.mean for p in hold.pass_hat_k]
    assert len(hats) == 4 and hats[0] is not None and hats[-1] is not None
    assert hats[-1] < hats[0] and all(a >= b for a, b in itertools.pairwise(hats))
    assert hold.flip_share is not None and (hold.flip_share.mean or 0) > 0
    assert "stability over 4 tries" in printed and "pass^k" in printed
    report = tmp_path / "report"
    assert main(["report", str(jitter / "scores-truth" / "m3"), "-o", str(report),
                 "--format", "md", "--html"]) == 0
    page = (report / "stability.md").read_text()
    assert "| TURN_HOLD |" in page and "pass^k" in page and "- pass (TURN_HOLD, m3)" in page
    summary = capsys.readouterr().out  # the text summary: pass^j, flips, latency spread
    assert "(m3): stability over 4 tries per event" in summary
    assert all(word in summary for word in ("pass^j j=1..k", "flips", "latency sd"))
    html = (report / "index.html").read_text()  # and the HTML report: table and pass curves
    assert "<h2>Repeated tries: pass@k, pass^k and stability</h2>" in html
    assert "pass (TURN_HOLD, m3)" in html and (report / "figures/pass_curves.svg").is_file()

    fixed = tmp_path / "fixed"
    _run_and_score(chat_voiced, fixed, "delay=0.6", "ignore_seed=1")
    results, hold = _hold(fixed)
    assert results.stability is not None and results.stability.deterministic
    assert results.stability.identical_events == results.stability.events
    hats = [p.mean for p in hold.pass_hat_k]
    assert len(set(hats)) == 1
    assert hold.flip_share is not None and hold.flip_share.mean == 0
    assert all(s.mean == 0 for r in results.stability.rows for s in r.latency_std)
    assert "deterministic" in "\n".join(stability_lines(results))

    # resume: the same command skips every try; another k is another configuration
    args = ["run", "--system", "scripted", "--dataset", str(chat_voiced.root), "--protocol",
            "multi-gen", "--out", str(fixed), "--repeats", "4", "--system-arg", "delay=0.6",
            "--system-arg", "ignore_seed=1"]
    capsys.readouterr()
    assert main(args) == 0
    assert "resumed past 88" in capsys.readouterr().out
    assert main([*args[:-6], "--repeats", "3", *args[-4:]]) == 2
    assert "changed: plan" in capsys.readouterr().err


def test_one_repeat_is_todays_run(chat_voiced: Dataset, tmp_path: Path) -> None:
    """``--repeats 1`` writes the same samples, seeds and configuration hash as no option."""
    outs = []
    for extra in ([], ["--repeats", "1"]):
        out = tmp_path / f"run{len(outs)}"
        assert main(["run", "--system", "scripted", "--system-arg", "jitter=0.2", "--dataset",
                     str(chat_voiced.root), "--protocol", "multi-gen", "--out", str(out),
                     *extra]) == 0
        outs.append(out)
    configs = [json.loads((o / "config.json").read_text()) for o in outs]
    assert configs[0]["config_hash"] == configs[1]["config_hash"]
    wavs = [{p.relative_to(o): p.read_bytes() for p in o.glob("samples/*/*.wav")} for o in outs]
    assert wavs[0] == wavs[1] and not any("_r0" in str(p) for p in wavs[0])
    # three tries fork one snapshot: the shared prefix is stepped once, so the run steps
    # fewer frames than three runs of one try would (prefix + 3 continuations < 3 x (prefix +
    # 1 continuation)), and more than one
    three = tmp_path / "three"
    assert main(["run", "--system", "scripted", "--system-arg", "jitter=0.2", "--dataset",
                 str(chat_voiced.root), "--protocol", "multi-gen", "--out", str(three),
                 "--repeats", "3"]) == 0
    stepped = [json.loads((o / "run_summary.json").read_text())["frames_stepped"]
               for o in (outs[0], three)]
    assert stepped[0] < stepped[1] < 3 * stepped[0]
