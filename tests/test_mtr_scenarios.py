"""MTR's per-round success on real runs of ``mtr-en`` (its ``c03-sip`` dialogue: smooth turn-
taking, interruption and pause combined over 10 rounds, voiced with piper) with ``scripted``
behaving well and badly per feature, under multi-gen (the system's own history, so it is
answering when the user barges in), scored with the ``mtr`` variant.

* smooth turn-taking: ``delay=0.3`` answers; ``delay=12`` never answers inside the 10 s window;
* interruption: ``stop_delay=0.2`` yields to the barge-in; ``stop_delay=10`` talks through it;
* pause handling: ``delay=12`` waits the pause out; ``delay=0.3`` talks into it;
* a degrading system: ``drift=0.12`` adds 0.12 s of delay per second of dialogue, so its
  answers slip out of the window in the later rounds: round 1 succeeds, the last rounds fail.

Background speech and user backchannels are played through the reply (``--no-mute``, as MTR's
rounds are), on ``f01-background`` and ``f01-backchannel`` built with the suite's gaps (their
first four rounds):

* background (a voice 20 dB down, 0.5 s into the reply): a system that hears only the user
  (``threshold_db=-30``) talks through it; one that yields to any voice (``threshold_db=-45``,
  ``stop_delay=0.2``) stops, and MTR's rule fails it::

      user ch  |== user ==|      . . background . .          (-20 dB)
      good                  |===== reply, one speech unit =====|      success
      bad                   |====|  stopped                           failure

* backchannel (the user's "mm-hm" inside the reply): a system that ignores sounds shorter than
  1 s (``ignore_shorter=1``) keeps one long reply; one that yields (``stop_delay=0.2``) breaks
  its reply into pieces, short ones among them, so MTR's backchannel frequency (short segments
  per second of its speech) rises.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ModuleTemp, needs_extra
from duplexeval.cli import main
from duplexeval.metrics._score_run import score_run_dir
from duplexeval.synth._spec import DialogueSpec

pytestmark = [needs_extra("tts-en", "asr"), pytest.mark.slow]


def _first_rounds(spec: DialogueSpec, rounds: int) -> DialogueSpec:
    """``spec`` up to the end of its round ``rounds``: the system's greeting, then a user turn
    and the system's reply per round (with the background voices and MTR rounds they hold)."""
    turns = 1 + 2 * rounds
    cut = spec.model_dump()
    cut["turns"] = cut["turns"][:turns]
    cut["background"] = [b for b in cut["background"] if b["at_turn"] < turns]
    cut["mtr"]["rounds"] = cut["mtr"]["rounds"][:rounds]
    return DialogueSpec.model_validate(cut)


def _built(module_tmp: ModuleTemp, names: tuple[str, ...], label: str,
           rounds: int | None = None) -> Path:
    """The ``mtr-en`` dialogues ``names`` (their first ``rounds`` rounds; ``None``: all ten),
    built with the suite's gaps into a dataset."""
    from duplexeval.suites import SUITES
    from duplexeval.suites._build import suite_gaps
    from duplexeval.synth._build import SynthSettings
    from duplexeval.synth._mtr_synthesizer import MtrSynthesizer
    from duplexeval.synth._spec import load_spec

    suite = SUITES["mtr-en"]
    synth = MtrSynthesizer(SynthSettings(gaps=suite_gaps(suite)))
    specs = [load_spec(suite.spec_folder() / f"{name}.json") for name in names]
    built = [synth.build(s if rounds is None else _first_rounds(s, rounds)) for s in specs]
    out = module_tmp.mktemp(label) / "data"
    synth.write(built, out, metadata={"name": f"mtr-en {' + '.join(names)}"})
    return out


@pytest.fixture(scope="module")
def mtr_sip(module_tmp: ModuleTemp) -> Path:
    """``c03-sip``: one 10-round dialogue combining smooth turn-taking, interruption and
    pause (the three features these tests separate), so each run is one pass."""
    return _built(module_tmp, ("c03-sip",), "mtr-sip")


def _run(dataset: Path, out: Path, protocol: str = "multi-gen",
         **args: str) -> tuple[dict[tuple[str, str], float], dict[tuple[str, int], float]]:
    cli = ["run", "--system", "scripted", "--dataset", str(dataset), "--protocol", protocol,
           "--channels", "0", "--out", str(out)]  # MTR's user is channel 0
    # replies of at most 8 s unless ``args`` say otherwise: still on at every barge-in, and
    # Whisper, most of this module's time, reads only the speech (20 s: 2.5x the analysis)
    for key, value in {"duration": "8", **args}.items():
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


def test_the_suites_own_reference_yields_to_every_barge_in_by_mtrs_rule(mtr_sip: Path) -> None:
    """The reference replies (channel 1's aligned words) under each interruption round's
    barge-in: the interrupted reply runs on a little (a barge-in a listener hears), but no more
    than 2 of its words, under 0.75 s together, lie wholly inside the barge-in
    (``scripts/retime_barge_ins.py`` placed the points), well clear of "speaking" by MTR's rule
    (1 s, or more than 3 words), so the reference row does not fail its own suite's
    interruption rounds::

        system   ... and  understand  music  theory  faster.        4 words inside: fails
        user                   |==== barge-in ===================|
        system   ... music  theory  faster.                         1 word inside: yields
    """
    from duplexeval.analysis._segments import Chunk, SpeechSegment
    from duplexeval.data import Need, load_dataset
    from duplexeval.metrics.timing._mtr_rules import speaking
    from duplexeval.timeline import Span

    (dialogue,), = [load_dataset(mtr_sip, alignment=Need.REQUIRE)[0].dialogues]
    words = dialogue.words_on(1)
    segment = SpeechSegment(1, Span(words[0].start, words[-1].end),
                            chunks=tuple(Chunk(w.start, w.end, w.text) for w in words))
    rounds = [r for r in dialogue.extra["mtr"]["rounds"] if "interruption" in r["features"]]
    assert len(rounds) == 3  # rounds 2, 5 and 8
    for r in rounds:
        start, end = r["interruption_span"]
        assert any(w.start < end and w.end > start for w in words), r  # the reply is still on
        assert r["overlap_span"][1] > r["overlap_span"][0], r
        inside = [w for w in words if w.start >= start and w.end <= end]
        assert len(inside) <= 2 and sum(w.end - w.start for w in inside) < 0.75, inside
        assert not speaking([segment], start, end), r


def test_each_feature_separates_good_from_bad(mtr_sip: Path, tmp_path: Path) -> None:
    eager, _ = _run(mtr_sip, tmp_path / "eager", delay="0.3", stop_delay="0.2")
    late, _ = _run(mtr_sip, tmp_path / "late", delay="12")
    deaf, _ = _run(mtr_sip, tmp_path / "deaf", delay="0.3", stop_delay="10")
    smooth = ("TURN_SHIFT", "smooth_turn_taking")
    assert eager[smooth] > late[smooth]
    assert eager["BARGE_IN", "interruption"] > deaf["BARGE_IN", "interruption"]
    assert late["TURN_HOLD", "pause_handling"] > eager["TURN_HOLD", "pause_handling"]


def test_each_feature_separates_good_from_bad_under_interactive(mtr_sip: Path,
                                                                tmp_path: Path) -> None:
    """The same systems against the simulated user: it resumes its own pause, barges in 1 s
    into the heard reply, and waits for the system; the rounds are moved onto the realised
    timeline (:mod:`duplexeval.runs._realised_items`), and each feature separates as under
    multi-gen, every round's user turn scored (10 shifts, 3 pauses).  The replies run up to
    20 s here (8 s under multi-gen): with 8-s replies the eager system's smooth turn-taking
    falls to 8 of 10 on the realised timeline, and this test holds it to every round."""
    eager, _ = _run(mtr_sip, tmp_path / "eager", "interactive", delay="0.3", stop_delay="0.2",
                    duration="20")
    late, _ = _run(mtr_sip, tmp_path / "late", "interactive", delay="12", duration="20")
    deaf, _ = _run(mtr_sip, tmp_path / "deaf", "interactive", delay="0.3", stop_delay="10",
                   duration="20")
    smooth = ("TURN_SHIFT", "smooth_turn_taking")
    assert eager[smooth] == 1.0 > late[smooth]
    assert eager["BARGE_IN", "interruption"] == 1.0 > deaf["BARGE_IN", "interruption"]
    assert late["TURN_HOLD", "pause_handling"] == 1.0 > eager["TURN_HOLD", "pause_handling"]
    # a system that never speaks while the user could barge in has no interruption to score
    assert ("BARGE_IN", "interruption") not in late


def test_a_system_that_slows_down_degrades_over_rounds(mtr_sip: Path, tmp_path: Path) -> None:
    _, curve = _run(mtr_sip, tmp_path / "drift", delay="0.3", stop_delay="0.2",
                    drift="0.12")
    rounds = sorted(k for d, k in curve if d == "smooth_turn_taking")
    first, last = curve["smooth_turn_taking", rounds[0]], curve["smooth_turn_taking", rounds[-1]]
    assert first > last
    assert sum(curve["smooth_turn_taking", k] for k in rounds[:3]) > \
        sum(curve["smooth_turn_taking", k] for k in rounds[-3:])


@pytest.fixture(scope="module")
def mtr_overheard_4(module_tmp: ModuleTemp) -> Path:
    """``f01-background`` and ``f01-backchannel`` of ``mtr-en``, built with the suite's gaps,
    their first four rounds: the separation holds there as on all ten (multi-gen: background
    4 of 4 against 0 of 4, backchannel frequency 0.015 against 0.11 short segments per second;
    interactive: 3 of 4 against 0 of 4, 0.0 against 0.062), in under half the analysis of all
    ten rounds (Whisper's full transcripts of both channels are most of this module's time)."""
    return _built(module_tmp, ("f01-background", "f01-backchannel"), "mtr-overheard-4",
                  rounds=4)


def _unmuted(dataset: Path, out: Path, protocol: str = "multi-gen",
             **args: str) -> dict[str, float]:
    cli = ["run", "--system", "scripted", "--dataset", str(dataset), "--protocol", protocol,
           "--channels", "0", "--out", str(out)] + (["--no-mute"] if protocol != "interactive"
                                                    else [])
    for key, value in {"duration": "8", **args}.items():
        cli += ["--system-arg", f"{key}={value}"]
    assert main(cli) == 0
    results, _ = score_run_dir(out, variant="mtr", progress=False)
    return {f"{r.dimension} {r.metric}": r.mean or 0.0 for r in results.aggregates
            if r.language == "all" and r.domain == "all" and r.round is None}


def test_background_speech_and_backchannels_separate(mtr_overheard_4: Path,
                                                     tmp_path: Path) -> None:
    good = _unmuted(mtr_overheard_4, tmp_path / "good", threshold_db="-30", ignore_shorter="1")
    bad = _unmuted(mtr_overheard_4, tmp_path / "bad", stop_delay="0.2")
    assert good["background success ↑"] >= 0.5 > 0.2 >= bad["background success ↑"]
    assert bad["backchannel frequency"] > good["backchannel frequency"]


def test_background_speech_and_backchannels_separate_under_interactive(
        mtr_overheard_4: Path, tmp_path: Path) -> None:
    """The simulated user plays the background voice 0.5 s into the heard reply (as the
    reference places it) and backchannels into it: the same separation as under multi-gen, on
    the same first four rounds.  Where the system gave no reply within patience, the background
    or backchannel was not played and its round says why (``unplayed``).

    The good system here waits for the user's end (0.6 s of silence, at -33 dBFS): under
    interactive its own timing moves the user's next items, and one that takes the user's
    quieter syllables (a quarter of a turn's 20-ms frames are under -30 dBFS) for the end of
    the turn starts inside it, so the simulated user, waiting for a reply to start after its
    turn, skips the background for want of one (``unplayed``).  The background stays under
    that threshold (its loudest tenth of frames at about -34 dBFS)."""
    good = _unmuted(mtr_overheard_4, tmp_path / "good", "interactive", threshold_db="-33",
                    delay="0.6", ignore_shorter="1")
    bad = _unmuted(mtr_overheard_4, tmp_path / "bad", "interactive", stop_delay="0.2")
    assert good["background success ↑"] >= 0.5 > 0.2 >= bad["background success ↑"]
    assert bad["backchannel frequency"] > good["backchannel frequency"]
