"""``duplexeval score RUN_DIR --variant turnbench`` end to end: two ``scripted`` systems under
Multi (ref) on the first bundled English dialogue (voiced with clip-bank bursts), scored from
the speech they logged (``--truth``).  Both continue the reference's turn at each onset
(``continue_forced=1``); one stops 0.2 s into every user sound (``ignore_shorter=0``), the
other treats user speech under 1 s as a backchannel (``ignore_shorter=1``)::

    user         |bc|                       a backchannel at the sample's start
    yields     MM|      .         R         stops at 0.2 s: pays R - 0.2 (R: the reference
    ignores    MMMMMMMMMMMMMMMMMMMMMM|      turn's end); talks on: pays nothing
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import ModuleTemp
from duplexeval.cli import main
from duplexeval.data import Need, bundled_dataset, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs import execute_run
from duplexeval.systems import load_system

SYSTEMS = {"yields": {"ignore_shorter": "0"}, "ignores": {"ignore_shorter": "1"}}
COMMON = {"continue_forced": "1", "delay": "1.0", "duration": "6"}


@pytest.fixture(scope="module")
def scored(module_tmp: ModuleTemp) -> dict[str, dict[str, Any]]:
    root = module_tmp.mktemp("turnbench")
    source, _ = load_dataset(bundled_dataset("sample-en"), alignment=Need.REQUIRE)
    voice_bursts(source, root / "data", 16000)
    dataset, _ = load_dataset(root / "data", audio=Need.REQUIRE)
    plan = build_plan(dataset.dialogues[:1], PlanOptions(protocol=EvalProtocol.MULTI_REF))
    out = {}
    for name, args in SYSTEMS.items():
        run = root / name
        execute_run(load_system("scripted", {**args, **COMMON}), dataset, plan, run, seed=1,
                    progress=False)
        assert main(["score", str(run), "--variant", "turnbench", "--truth"]) == 0
        folder = run / "scores-truth" / "turnbench"
        assert (folder / "per_event.jsonl").read_text(encoding="utf-8")
        out[name] = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return out


def _rows(results: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["event_type"], r["metric"]): r for r in results["aggregates"]
            if r["language"] == "all" and r["domain"] == "all" and r.get("round") is None}


def test_the_results_record_the_variant_and_its_turn_taking_figures(
        scored: dict[str, dict[str, Any]]) -> None:
    results = scored["yields"]
    assert results["variant"]["name"] == "turnbench"
    assert results["variant"]["definition"] == "paper"
    rows = _rows(results)
    match, latency = rows[("TURN_SHIFT", "match ↑")], rows[("TURN_SHIFT", "latency ↓")]
    assert match["n"] == 5 and match["mean"] == 1.0  # every reply 1 s after the user's end
    assert latency["quantiles"]["p50"] == pytest.approx(1.0, abs=0.02)
    assert latency["quantiles"]["p10"] <= latency["quantiles"]["p50"] <= latency["quantiles"][
        "p90"]
    assert latency["measurement_origin"]["start"].startswith("the user's turn end")
    assert rows[("TURN_HOLD", "false_positive ↓")]["n"] == 3
    assert match["quantiles"] is None  # only the metrics the variant names carry them


def test_a_system_that_yields_to_every_backchannel_pays_more_than_one_that_ignores_them(
        scored: dict[str, dict[str, Any]]) -> None:
    yields = _rows(scored["yields"])
    ignores = _rows(scored["ignores"])
    assert yields[("BC", "false_stop ↓")]["mean"] == 1.0
    assert ignores[("BC", "false_stop ↓")]["mean"] == 0.0
    paid = yields[("BC", "penalty_s ↓")]
    assert paid["n"] == 2 and paid["official"] is False
    assert paid["mean"] > 1.0  # about 1.9 s: the rest of two reference turns
    assert ignores[("BC", "penalty_s ↓")]["mean"] == 0.0
