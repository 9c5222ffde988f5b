"""MTR's per-round success on real runs of ``mtr-en`` (its quick subset: the S, S+I and S+I+P
dialogues, voiced with piper) with ``scripted`` behaving well and badly per feature, under
multi-gen (the system's own history, so it is answering when the user barges in), scored with
the ``mtr`` variant.

* smooth turn-taking: ``delay=0.3`` answers; ``delay=12`` never answers inside the 10 s window;
* interruption: ``stop_delay=0.2`` yields to the barge-in; ``stop_delay=10`` talks through it;
* pause handling: ``delay=12`` waits the pause out; ``delay=0.3`` talks into it;
* a degrading system: ``drift=0.12`` adds 0.12 s of delay per second of dialogue, so its
  answers slip out of the window in the later rounds: round 1 succeeds, the last rounds fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import needs_extra
from duplexeval.cli import main
from duplexeval.metrics.score_run import score_run_dir

pytestmark = needs_extra("tts-en", "asr")


@pytest.fixture(scope="module")
def mtr_quick() -> Path:
    from duplexeval.suites import build_suite

    return build_suite("mtr-en", limit="quick")


def _run(dataset: Path, out: Path, **args: str) -> tuple[dict[tuple[str, str], float],
                                                         dict[tuple[str, int], float]]:
    cli = ["run", "--system", "scripted", "--dataset", str(dataset), "--protocol", "multi-gen",
           "--out", str(out)]
    for key, value in {"duration": "20", **args}.items():
        cli += ["--system-arg", f"{key}={value}"]
    assert main(cli) == 0
    results, _ = score_run_dir(out, variant="mtr", progress=False)
    overall, curve = {}, {}
    for r in results.aggregates:
        if r.metric != "success ↑" or r.language != "all" or r.domain != "all":
            continue
        if r.round is None:
            overall[(r.event_type, r.dimension)] = r.mean or 0.0
        else:
            curve[(r.dimension, r.round)] = r.mean or 0.0
    return overall, curve


def test_each_feature_separates_good_from_bad(mtr_quick: Path, tmp_path: Path) -> None:
    eager, _ = _run(mtr_quick, tmp_path / "eager", delay="0.3", stop_delay="0.2")
    late, _ = _run(mtr_quick, tmp_path / "late", delay="12")
    deaf, _ = _run(mtr_quick, tmp_path / "deaf", delay="0.3", stop_delay="10")
    smooth = ("TURN_SHIFT", "smooth_turn_taking")
    assert eager[smooth] > late[smooth]
    assert eager["BARGE_IN", "interruption"] > deaf["BARGE_IN", "interruption"]
    assert late["TURN_HOLD", "pause_handling"] > eager["TURN_HOLD", "pause_handling"]


def test_a_system_that_slows_down_degrades_over_rounds(mtr_quick: Path, tmp_path: Path) -> None:
    _, curve = _run(mtr_quick, tmp_path / "drift", delay="0.3", stop_delay="0.2",
                    drift="0.12")
    rounds = sorted(k for d, k in curve if d == "smooth_turn_taking")
    first, last = curve["smooth_turn_taking", rounds[0]], curve["smooth_turn_taking", rounds[-1]]
    assert first > last
    assert sum(curve["smooth_turn_taking", k] for k in rounds[:3]) > \
        sum(curve["smooth_turn_taking", k] for k in rounds[-3:])
