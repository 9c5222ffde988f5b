"""FLEXI's scenarios on real runs of ``flexi-en`` (its quick subset: the first two items of each
scenario, voiced with piper): ``scripted`` configured to behave well and badly, and the
``flexi`` variant separating the two on each scenario's metric; then the demo's FLEXI stage.

``scripted`` answers ``delay`` seconds after the user falls silent (see its docstring):

* multi-gen, ``delay=0.3`` (eager) against ``delay=3.5`` (slow): the eager one answers sooner
  (turn-taking latency), talks into the held pause (pause TOR), cuts in on the emergency
  statement at its sentence gaps (model interrupt) and drops short utterances into the narrative
  (model backchannel: BCR up, JSD down);
* multi-ref, ``delay=0.3`` against ``delay=3.0``: after the user's backchannel the slow one
  stays silent for more than a second (it yielded: user-backchannel interrupted).

* multi-ref, ``continue_forced=1`` (it takes over the forced reference turn, still speaking
  when the user barges in) with ``stop_delay=0.2`` (yields) against ``stop_delay=10`` (talks
  over the interruption): user-interrupt latency (TTR cannot separate them on this suite: FLEXI
  counts a non-yield only for 3 s of speech inside the interruption, and ours last under 3 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import needs_extra
from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.cli import main
from duplexeval.metrics._score_run import score_run_dir

pytestmark = [needs_extra("tts-en", "asr"), pytest.mark.slow]


@pytest.fixture(scope="module")
def flexi_quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from duplexeval.suites import build_suite

    return build_suite("flexi-en", limit="quick")


def _run(dataset: Path, out: Path, protocol: str, **args: str) -> dict[tuple[str, str], Any]:
    cli = ["run", "--system", "scripted", "--dataset", str(dataset), "--protocol", protocol,
           "--out", str(out)]
    for key, value in args.items():
        cli += ["--system-arg", f"{key}={value}"]
    assert main(cli) == 0
    results, _ = score_run_dir(out, variant="flexi", variant_settings={"latency": 0.5},
                               options=AnalysisOptions(content_event_types=()), progress=False)
    return {(r.event_type, r.metric): r.mean for r in results.aggregates
            if r.language == "all" and r.domain == "all" and r.round is None}


def test_multi_gen_scenarios_separate_eager_from_slow(flexi_quick: Path, tmp_path: Path) -> None:
    eager = _run(flexi_quick, tmp_path / "eager", "multi-gen", delay="0.3")
    slow = _run(flexi_quick, tmp_path / "slow", "multi-gen", delay="3.5")
    assert eager["TURN_SHIFT", "latency ↓"] < slow["TURN_SHIFT", "latency ↓"]
    assert eager["TURN_HOLD", "TOR ↓"] > slow["TURN_HOLD", "TOR ↓"]
    assert eager["TURN_SHIFT", "interrupted ↑"] > slow["TURN_SHIFT", "interrupted ↑"]
    assert eager["TURN_SHIFT", "BCR"] > slow["TURN_SHIFT", "BCR"] == 0
    assert eager["TURN_SHIFT", "JSD ↓"] < slow["TURN_SHIFT", "JSD ↓"] == 1.0


def test_user_backchannel_separates_resuming_from_going_quiet(flexi_quick: Path,
                                                             tmp_path: Path) -> None:
    resumes = _run(flexi_quick, tmp_path / "resumes", "multi-ref", delay="0.3")
    quiet = _run(flexi_quick, tmp_path / "quiet", "multi-ref", delay="3.0")
    assert resumes["BC", "interrupted ↓"] < quiet["BC", "interrupted ↓"]
    assert resumes["BC", "resumed ↑"] > quiet["BC", "resumed ↑"]


def test_user_interrupt_separates_yielding_from_talking_over(flexi_quick: Path,
                                                             tmp_path: Path) -> None:
    yields = _run(flexi_quick, tmp_path / "yields", "multi-ref", continue_forced="1",
                  stop_delay="0.2", duration="20")
    talks = _run(flexi_quick, tmp_path / "talks", "multi-ref", continue_forced="1",
                 stop_delay="10", duration="20")
    # FLEXI's cluster is the speech overlapping the interruption, and "not yielding" needs 3 s
    # of it: the flexi-en interruptions last 2.3-2.7 s, so TTR cannot tell them apart; how long
    # the system kept talking into the interruption (the latency) does
    assert yields["BARGE_IN", "latency ↓"] < 1.0 < talks["BARGE_IN", "latency ↓"]


def test_the_flexi_benchmark_tables_show_each_protocols_scenarios(
        flexi_quick: Path, tmp_path: Path) -> None:
    """``eval flexi`` (as the demo runs it) writes one table per protocol, with the scenarios
    that protocol measures, one row per system."""
    from duplexeval.benchmarks import BENCHMARKS, evaluate
    from duplexeval.systems import load_system

    cells = []
    for name in ("reference", "silence"):
        result = evaluate(load_system(name, {}), ["flexi"], tmp_path / name, progress=False)
        cells += [(name, c) for c in result.cells["flexi"]]
    table, *grids = BENCHMARKS.get("flexi").write_tables(cells, tmp_path / "tables")
    assert [g.name for g in grids] == ["flexi-multi-gen.csv", "flexi-multi-gen.tex",
                                       "flexi-multi-ref.csv", "flexi-multi-ref.tex"]
    text = table.read_text()
    gen, ref = text.split("## multi-ref")
    assert "turn TOR% ↑" in gen and "JSD ↓" in gen and "interrupt TTR% ↑" not in gen
    assert "interrupt TTR% ↑" in ref and "user BC resumed% ↑" in ref
    silence = next(line for line in gen.splitlines() if line.strip().startswith("silence"))
    assert silence.split()[1].startswith("0.0")  # silence never takes the turn
