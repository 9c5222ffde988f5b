"""FLEXI's scenarios on real runs of ``flexi-en`` (its quick subset: the first five items of each
scenario, voiced with piper; the first three of them, or one, where that separates as well):
``scripted`` configured to behave well and badly, and the ``flexi`` variant separating the two
on each scenario's metric; then the demo's FLEXI stage.

``scripted`` answers ``delay`` seconds after the user falls silent (see its docstring):

* multi-gen, ``delay=0.3`` (eager) against ``delay=3.5`` (slow): the eager one answers sooner
  (turn-taking latency), talks into the held pause (pause TOR), cuts in on the emergency
  statement at its sentence gaps (model interrupt) and drops short utterances into the narrative
  (model backchannel: BCR up, JSD down);
* multi-ref, talking on through the user's backchannel (``ignore_shorter=1``) against stopping
  at it and waiting 3 s: the second stays silent for more than a second (it yielded:
  user-backchannel interrupted).

* multi-ref, ``continue_forced=1`` (it takes over the forced reference turn, still speaking
  when the user barges in) with ``stop_delay=0.2`` (yields) against ``stop_delay=10`` (talks
  over the interruption): user-interrupt TTR and latency.  FLEXI counts a non-yield only for
  3 s of speech inside the interruption, so the suite's interruptions last 2-6 s, most over
  3 s (every one of the quick subset's five).
* interactive, the same stop rules: the simulated user interrupts the system's own answer, and
  every scenario is scored on the realised items.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import needs_extra
from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.cli import main
from duplexeval.metrics._score_run import score_run_dir

pytestmark = [needs_extra("tts-en", "asr"), pytest.mark.slow]

ITEMS = 3
"""Items of each scenario the multi-gen and interactive tests run: the quick subset's first
three (of five), which separate the systems as the five do (cold cache, idle: multi-gen
44.7 s -> 28.6 s, interactive 76 s -> 49 s)."""


@pytest.fixture(scope="module")
def flexi_quick() -> Path:
    from duplexeval.suites import build_suite

    return build_suite("flexi-en", limit="quick")


def _run(dataset: Path, out: Path, protocol: str, events: str | None = None,
         **args: str) -> dict[tuple[str, str], Any]:
    """``scripted`` with ``args`` on ``dataset``, scored by ``flexi``; ``events``: plan only
    these kinds (``run --events``), those the test reads."""
    cli = ["run", "--system", "scripted", "--dataset", str(dataset), "--protocol", protocol,
           "--out", str(out)] + (["--events", events] if events else [])
    for key, value in args.items():
        cli += ["--system-arg", f"{key}={value}"]
    assert main(cli) == 0
    results, _ = score_run_dir(out, variant="flexi", variant_settings={"latency": 0.5},
                               options=AnalysisOptions(content_event_types=()), progress=False)
    return {(r.event_type, r.metric): r.mean for r in results.aggregates
            if r.language == "all" and r.domain == "all" and r.round is None}


def test_multi_gen_scenarios_separate_eager_from_slow(flexi_quick: Path, tmp_path: Path) -> None:
    data = _first_of_each_scenario(flexi_quick, tmp_path / "data", ITEMS)
    eager = _run(data, tmp_path / "eager", "multi-gen", "TURN_SHIFT,TURN_HOLD", delay="0.3")
    slow = _run(data, tmp_path / "slow", "multi-gen", "TURN_SHIFT,TURN_HOLD", delay="3.5")
    assert eager["TURN_SHIFT", "latency ↓"] < slow["TURN_SHIFT", "latency ↓"]
    assert eager["TURN_HOLD", "TOR ↓"] > slow["TURN_HOLD", "TOR ↓"]
    assert eager["TURN_SHIFT", "interrupted ↑"] > slow["TURN_SHIFT", "interrupted ↑"]
    assert eager["TURN_SHIFT", "BCR"] > slow["TURN_SHIFT", "BCR"] == 0
    assert eager["TURN_SHIFT", "JSD ↓"] < slow["TURN_SHIFT", "JSD ↓"] == 1.0


def test_user_backchannel_separates_resuming_from_going_quiet(flexi_quick: Path,
                                                             tmp_path: Path) -> None:
    # both take over the forced reference turn; one treats the user's backchannel as one and
    # talks on, the other stops 0.2 s into it and waits 3 s before speaking again.  (Listening
    # with delay=0.3 against delay=3.0 separated them by one item in five with the one-voice
    # suite and by none once the user's voice changed: it hinged on where the sample's window
    # fell, not on the backchannel.)
    resumes = _run(flexi_quick, tmp_path / "resumes", "multi-ref", "BC", continue_forced="1",
                   ignore_shorter="1.0", duration="20")
    quiet = _run(flexi_quick, tmp_path / "quiet", "multi-ref", "BC", continue_forced="1",
                 stop_delay="0.2", delay="3.0", duration="20")
    assert resumes["BC", "interrupted ↓"] < quiet["BC", "interrupted ↓"]
    assert resumes["BC", "resumed ↑"] > quiet["BC", "resumed ↑"]


def test_user_interruptions_last_long_enough_for_the_3_s_rule() -> None:
    """The user's interrupting question of every user_interrupt item, as the synthesizer places
    it (its trimmed speech): spread over 2-6 s, most over FLEXI's 3 s (a system that talks on
    through all of it does not yield), and all of the quick subset's five."""
    from duplexeval.metrics.timing._flexi_rules import HOLD_CLUSTER
    from duplexeval.suites import SUITES
    from duplexeval.suites._build import quick_by_label
    from duplexeval.synth._build import Synthesizer
    from duplexeval.synth._spec import load_specs

    suite = SUITES["flexi-en"]
    specs = [s for s in load_specs(suite.spec_folder())
             if s.flexi is not None and s.flexi.scenario == "user_interrupt"]
    quick = {s.id for s in quick_by_label(load_specs(suite.spec_folder()),
                                          suite.quick_per_label or 0)}
    synth = Synthesizer()
    seconds = {s.id: synth._prepare(s, "user", s.turns[2].text).duration for s in specs}
    assert len(seconds) == 30 and HOLD_CLUSTER == 3.0
    assert 2.0 <= min(seconds.values()) < 2.5 and 5.5 < max(seconds.values()) <= 6.0
    assert sum(v > 3.2 for v in seconds.values()) >= 20
    assert sum(v < 2.8 for v in seconds.values()) >= 5  # and some that even a talker passes
    in_quick = [v for k, v in seconds.items() if k in quick]
    assert len(in_quick) == 5 and min(in_quick) > 3.2, in_quick


def test_user_interrupt_separates_yielding_from_talking_over(flexi_quick: Path,
                                                             tmp_path: Path) -> None:
    yields = _run(flexi_quick, tmp_path / "yields", "multi-ref", "BARGE_IN",
                  continue_forced="1", stop_delay="0.2", duration="20")
    talks = _run(flexi_quick, tmp_path / "talks", "multi-ref", "BARGE_IN",
                 continue_forced="1", stop_delay="10", duration="20")
    # FLEXI's cluster is the speech overlapping the interruption, and "not yielding" needs 3 s
    # of it: the quick subset's interruptions last over 3 s, so a system that talks on through
    # them fails each, and one that stops at once passes each
    assert yields["BARGE_IN", "TTR ↑"] == 1.0
    assert talks["BARGE_IN", "TTR ↑"] <= 0.2
    # the latency (paper mode) is how long it took to yield: the talker never did
    assert yields["BARGE_IN", "latency ↓"] < 1.0
    assert ("BARGE_IN", "latency ↓") not in talks


def test_interactive_scores_all_six_scenarios_on_the_realised_items(flexi_quick: Path,
                                                                   tmp_path: Path) -> None:
    """Under ``interactive`` the simulated user interrupts the system's own answer 1 s after
    it hears it start, and backchannels into it: a system that stops 0.2 s into the user's
    speech and waits 3 s before it speaks again passes each user interrupt and goes quiet at
    the backchannels, one that talks on for 10 s fails each interrupt and talks through each
    backchannel (the quick subset's interruptions last over 3 s); each scenario has its first
    :data:`ITEMS` items scored on the realised records.  The user's patience is 5 s: a
    backchannel waits that long for the system's reply, which the quiet system gives after 3 s
    (with the default 3 s the two raced, and every backchannel was skipped)."""
    counts: dict[str, dict[tuple[str, str], int]] = {}
    means = {}
    data = _first_of_each_scenario(flexi_quick, tmp_path / "data", ITEMS)
    for name, stop, delay in (("yields", "0.2", "3.0"), ("talks", "10", "0.3")):
        out = tmp_path / name
        assert main(["run", "--system", "scripted", "--dataset", str(data),
                     "--protocol", "interactive", "--system-arg", f"stop_delay={stop}",
                     "--system-arg", f"delay={delay}", "--system-arg", "duration=8",
                     "--patience", "5", "--out", str(out)]) == 0
        results, _ = score_run_dir(out, variant="flexi", variant_settings={"latency": 0.5},
                                   options=AnalysisOptions(content_event_types=()),
                                   progress=False)
        rows = [r for r in results.aggregates
                if r.language == "all" and r.domain == "all" and r.round is None]
        counts[name] = {(r.event_type, r.metric): r.n for r in rows}
        means[name] = {(r.event_type, r.metric): r.mean for r in rows}
    for name in counts:  # each scenario's verdict
        for verdict in [("TURN_SHIFT", "TOR ↑"), ("TURN_SHIFT", "interrupted ↑"),
                        ("TURN_SHIFT", "TOR ↓"), ("TURN_HOLD", "TOR ↓"), ("BARGE_IN", "TTR ↑"),
                        ("BC", "interrupted ↓")]:
            assert counts[name].get(verdict) == ITEMS, (name, verdict, counts[name])
    assert means["yields"]["BARGE_IN", "TTR ↑"] == 1.0
    assert means["talks"]["BARGE_IN", "TTR ↑"] == 0.0
    assert means["talks"]["BC", "interrupted ↓"] == 0.0
    # FLEXI's rule reads a yield from a gap between two of the system's words around the
    # backchannel's onset, where the sample starts: the 0.2 s the quiet system still speaks
    # can hold no recognised word (one item of the five, measured; none of the first three),
    # and then no gap is seen
    assert means["yields"]["BC", "interrupted ↓"] >= 0.6


def _first_of_each_scenario(quick: Path, out: Path, items: int = 1) -> Path:
    """The first ``items`` items of each of the six scenarios of the quick subset (its
    ``01-*`` .. dialogues) as a dataset of its own, which ``run --dataset`` and ``eval --data``
    (of a one-suite benchmark) read like the suite."""
    prefixes = tuple(f"{k:02d}-" for k in range(1, items + 1))
    out.mkdir()
    shutil.copy(quick / "dataset.json", out / "dataset.json")
    lines = (quick / "test.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["id"].startswith(prefixes)]
    (out / "test.jsonl").write_text("".join(kept), encoding="utf-8")
    for folder in ("audio", "txt_align"):
        (out / folder).mkdir()
        for path in sorted((quick / folder).iterdir()):
            if path.name.startswith(prefixes):
                shutil.copy(path, out / folder / path.name)
    assert len(kept) == len(list((out / "audio").iterdir())) == 6 * items
    return out


def test_the_flexi_benchmark_tables_show_each_protocols_scenarios(
        flexi_quick: Path, tmp_path: Path) -> None:
    """``eval flexi`` (as the demo runs it, here on one item of each scenario) writes one
    table per protocol, with the scenarios that protocol measures, one row per system."""
    from duplexeval.benchmarks import BENCHMARKS, evaluate
    from duplexeval.systems import load_system

    data = _first_of_each_scenario(flexi_quick, tmp_path / "data")
    cells = []
    for name in ("reference", "silence"):
        result = evaluate(load_system(name, {}), ["flexi"], tmp_path / name, progress=False,
                          data=data)
        cells += [(name, c) for c in result.cells["flexi"]]
    table, *grids = BENCHMARKS.get("flexi").write_tables(cells, tmp_path / "tables")
    assert [g.name for g in grids] == ["flexi-multi-gen.csv", "flexi-multi-gen.tex",
                                       "flexi-multi-ref.csv", "flexi-multi-ref.tex",
                                       "flexi-interactive.csv", "flexi-interactive.tex"]
    text = table.read_text()
    gen, ref = text.split("## multi-ref")
    ref, interactive = ref.split("## interactive")
    assert "turn TOR% ↑" in gen and "JSD ↓" in gen and "interrupt TTR% ↑" not in gen
    assert "interrupt TTR% ↑" in ref and "user BC resumed% ↑" in ref
    assert "turn TOR% ↑" in interactive and "interrupt TTR% ↑" in interactive
    silence = next(line for line in gen.splitlines() if line.strip().startswith("silence"))
    assert silence.split()[1].startswith("0.0")  # silence never takes the turn
