"""``score --peer flexi``: FLEXI's own output folders re-scored at parity with its evaluators.

Every expected value is derived by hand from ``evaluate/eval_*.py`` of
``ChristineCHEN274/FLEXI`` @2247b0d as written (line numbers cited), quirks included.  The
folders are made here; the model-backchannel ones carry ``vad_segments.json`` so no VAD model
runs.  Timelines: ``=`` speech, ``|`` a boundary, times in seconds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from duplexeval.cli import main
from duplexeval.errors import DuplexevalError
from duplexeval.peers import PeerOptions
from duplexeval.peers.flexi._scorer import score_flexi
from flexi_folders import (
    backchannel_folder,
    interrupt_folder,
    pause_folder,
    silent_wav,
    transcript,
    turn_taking_folder,
    vad_segments,
    write,
)


def _score(task: str, root: Path, out: Path, **options: Any) -> tuple[dict[str, Any],
                                                                      dict[str, dict[str, Any]]]:
    aggregate = score_flexi(task, root, out, PeerOptions(**options))
    rows = [json.loads(line) for line in (out / "per_sample.jsonl").read_text().splitlines()]
    assert json.loads((out / "aggregate.json").read_text()) == aggregate
    return aggregate, {r["sample"]: r for r in rows}


# -- turn taking ---------------------------------------------------------------------------------

def build_turn_taking(root: Path) -> None:
    """Six samples and a folder without ``output.json``; the user ends at 5.0 s::

        user     =========|5.0
        dialog_1           |Sure here is one|        5.4-6.6: takeover, latency 0.4
        dialog_2      |Well I think|                 4.2-5.3: takeover, latency -0.8 (jump-in)
        dialog_3                                     no words: TOR 0
        dialog_4            |yeah ok|                6.0-6.6, 2 words: backchannel, TOR 0
        dialog_5                 |a b c d|           7.0-7.5: 4 words > 3, latency 2.0
        dialog_6          |so  yes|                  5.5-6.5: exactly 1 s, latency 0.5
        dialog_10                                    no output.json: not a sample
    """
    turn_taking_folder(root, "dialog_1", 5.0, [("Sure", 5.4, 5.7), ("here", 5.8, 6.0),
                                               ("is", 6.0, 6.1), ("one", 6.1, 6.6)])
    turn_taking_folder(root, "dialog_2", 5.0, [("Well", 4.2, 4.5), ("I", 4.6, 4.7),
                                               ("think", 4.8, 5.3)])
    turn_taking_folder(root, "dialog_3", 5.0, [])
    turn_taking_folder(root, "dialog_4", 5.0, [("yeah", 6.0, 6.3), ("ok", 6.4, 6.6)])
    turn_taking_folder(root, "dialog_5", 5.0, [("a", 7.0, 7.1), ("b", 7.1, 7.2),
                                               ("c", 7.2, 7.3), ("d", 7.3, 7.5)])
    turn_taking_folder(root, "dialog_6", 5.0, [("so", 5.5, 5.9), ("yes", 6.0, 6.5)])
    turn_taking_folder(root, "dialog_10", 5.0, None)


def test_turn_taking_tor_latency_without_early_starts_and_jir(tmp_path: Path) -> None:
    """TOR = 4/6; Latency = mean(0.4, 2.0, 0.5) (the -0.8 jump-in is left out, l. 78-82);
    JIR = 1/6 over all samples (l. 97)."""
    build_turn_taking(tmp_path / "in")
    agg, rows = _score("turn_taking", tmp_path / "in", tmp_path / "out")
    assert agg["TOR"] == pytest.approx(4 / 6)
    assert agg["Latency"] == pytest.approx((0.4 + 2.0 + 0.5) / 3)
    assert agg["JIR"] == pytest.approx(1 / 6)
    assert agg["samples"] == 6 and agg["skipped"] == 1 and agg["definitions"] == "code"
    assert rows["dialog_2"] == {"sample": "dialog_2", "TOR": 1,
                                "latency": pytest.approx(-0.8), "jump_in": 1}
    assert rows["dialog_3"]["TOR"] == 0 and rows["dialog_3"]["latency"] is None
    assert rows["dialog_4"]["TOR"] == 0
    assert rows["dialog_6"]["latency"] == pytest.approx(0.5)
    assert "skipped" in rows["dialog_10"]


def test_turn_taking_latency_is_zero_when_every_takeover_jumps_in(tmp_path: Path) -> None:
    """Only early starts: the code's Latency is 0 (``if len(latency_list) > 0 else 0``)."""
    turn_taking_folder(tmp_path, "dialog_1", 5.0, [("Well", 3.0, 3.5), ("I", 3.6, 4.2)])
    agg, _ = _score("turn_taking", tmp_path, tmp_path / "out")
    assert (agg["TOR"], agg["Latency"], agg["JIR"]) == (1.0, 0.0, 1.0)


# -- pause handling ------------------------------------------------------------------------------

USER = [("I've", 1.0, 2.0), ("been", 2.1, 5.0), ("thinking", 6.0, 9.0), ("about", 9.1, 10.0)]


def build_pause(root: Path) -> None:
    """The user pauses 5.0-6.0 and ends at 10.0::

        user     =======|  pause  |========|10.0
        p1                 |I              |see     first word 5.5: in the pause, TOR 1
        p2                        |hm                6.4: after the pause (1 with L >= 1.4)
        p3                                    |ok    10.5: after the user's end, TOR 0
        p4                                          silent: skipped by the code
        p5                                          no pause.json: skipped
        p6           |uh|                           4.0: before the pause, TOR 0
        p7              |yes                         5.0: at the pause start, TOR 1
    """
    pause = (5.0, 6.0)
    pause_folder(root, "p1", pause, USER, [("I", 5.5, 5.8), ("see", 10.3, 10.6)])
    pause_folder(root, "p2", pause, USER, [("hm", 6.4, 6.6)])
    pause_folder(root, "p3", pause, USER, [("ok", 10.5, 10.9)])
    pause_folder(root, "p4", pause, USER, [])
    pause_folder(root, "p5", None, USER, [("no", 5.5, 6.0)])
    pause_folder(root, "p6", pause, USER, [("uh", 4.0, 4.5)])
    pause_folder(root, "p7", pause, USER, [("yes", 5.0, 5.4)])


def test_pause_handling_code_drops_silent_models_and_defaults_latency_to_zero(
        tmp_path: Path) -> None:
    """Scored p1 p2 p3 p6 p7: TOR = 2/5 with ``--latency`` 0 (l. 119); p4 and p5 skipped."""
    build_pause(tmp_path / "in")
    agg, rows = _score("pause_handling", tmp_path / "in", tmp_path / "out")
    assert agg["TOR"] == pytest.approx(2 / 5)
    assert (agg["samples"], agg["skipped"]) == (5, 2)
    assert "silent" in rows["p4"]["skipped"] and "pause.json" in rows["p5"]["skipped"]
    assert [rows[p]["TOR"] for p in ("p1", "p2", "p3", "p6", "p7")] == [1, 0, 0, 0, 1]


def test_pause_handling_latency_allowance_stretches_the_window(tmp_path: Path) -> None:
    """``--latency 1.5``: the window ends at 6.0 + max(1.5 - 1.0, 0) = 6.5, so p2 (6.4)
    becomes a takeover: 3/5.  p3 stays 0: it starts after the user's end (l. 88)."""
    build_pause(tmp_path / "in")
    agg, rows = _score("pause_handling", tmp_path / "in", tmp_path / "out", latency=1.5)
    assert agg["TOR"] == pytest.approx(3 / 5)
    assert rows["p2"]["window"] == [5.0, 6.5]
    agg, _ = _score("pause_handling", tmp_path / "in", tmp_path / "o2", latency=6.0)
    assert agg["TOR"] == pytest.approx(3 / 5)  # p3: window to 11.0, but after the user's end


def test_pause_handling_paper_counts_silent_models_and_computes_latency(tmp_path: Path) -> None:
    """Paper: p4 counts as TOR 0 (denominator 6), and L is the mean response latency after the
    user's end: p1 0.3, p3 0.5 -> 0.4 (window still 6.0, so p2 stays 0): TOR = 2/6."""
    build_pause(tmp_path / "in")
    agg, rows = _score("pause_handling", tmp_path / "in", tmp_path / "out", compat=False)
    assert agg["TOR"] == pytest.approx(2 / 6)
    assert agg["latency_allowance"] == pytest.approx(0.4)
    assert rows["p4"]["TOR"] == 0
    assert {"metric": "TOR", "paper": agg["TOR"], "code": pytest.approx(2 / 5)} \
        in agg["differences"]


# -- user interrupt ------------------------------------------------------------------------------

def build_user_interrupt(root: Path) -> None:
    """The user interrupts 10.0-14.0::

        user                     |== interrupt ==|
        u1  The process |of   light|                 |Sure simply|   cluster 9.5-11.2: 1.7 s
        u2  |a========b=======c=======d===|          |e|             cluster 9.0-14.5: 5.5 s
        u3                                                           silent: TOR 1, no cluster
        u4                                             |Hi there|    no overlap: cluster 0 s
        u5       |x==========|                                       nothing after: TOR 1
        u6       |a=====|b======|                        |c|         cluster 9.0-12.0: exactly 3
        u7  (no interrupt.json)                                      skipped
    """
    ui = (10.0, 14.0)
    interrupt_folder(root, "u1", ui, [("The", 8.0, 8.5), ("process", 8.6, 9.4),
                                      ("of", 9.5, 10.5), ("light", 10.6, 11.2),
                                      ("Sure", 15.0, 15.4), ("simply", 15.5, 16.2)])
    interrupt_folder(root, "u2", ui, [("a", 9.0, 10.5), ("b", 10.5, 12.0), ("c", 12.0, 13.5),
                                      ("d", 13.6, 14.5), ("e", 16.0, 17.0)])
    interrupt_folder(root, "u3", ui, [])
    interrupt_folder(root, "u4", ui, [("Hi", 15.5, 16.0), ("there", 16.1, 16.8)])
    interrupt_folder(root, "u5", ui, [("x", 9.0, 11.0)])
    interrupt_folder(root, "u6", ui, [("a", 9.0, 10.5), ("b", 10.6, 12.0), ("c", 15.5, 16.0)])
    write(root / "u7", output_json=transcript([]))


def test_user_interrupt_ttr_and_cluster_latency(tmp_path: Path) -> None:
    """TOR (1 = did not yield): u1 0, u2 1, u3 1, u4 0, u5 1, u6 1 (3.0 is not < 3, l. 99):
    TTR = 1 - 4/6.  Latency = mean of the closed clusters 1.7, 5.5, 0, 3.0 (l. 96-98, 196);
    u1's response latency is 15.0 - 14.0 (l. 131-133)."""
    build_user_interrupt(tmp_path / "in")
    agg, rows = _score("user_interrupt", tmp_path / "in", tmp_path / "out")
    assert [rows[u]["TOR"] for u in ("u1", "u2", "u3", "u4", "u5", "u6")] == [0, 1, 1, 0, 1, 1]
    assert agg["TTR"] == pytest.approx(1 - 4 / 6)
    assert agg["Latency"] == pytest.approx((1.7 + 5.5 + 0.0 + 3.0) / 4)
    assert rows["u1"]["overlap"] == pytest.approx(1.7) and rows["u3"]["overlap"] is None
    assert rows["u1"]["latency"] == pytest.approx(1.0) and rows["u1"]["responded"] == 1
    assert rows["u4"]["latency"] == pytest.approx(1.5)
    assert rows["u2"]["latency"] is None  # did not yield: no latency kept
    assert rows["u7"]["skipped"] == "missing file interrupt.json"
    assert agg["LLM Rating"] is None and agg["not_computed"] == ["LLM Rating"]


def test_user_interrupt_paper_counts_silence_after_the_overlap_as_yielding(
        tmp_path: Path) -> None:
    """Paper: u3 (silent) and u5 (silent after a 2 s overlap) terminated: TTR = 1 - 2/6.
    Latency = time from 10.0 to the end of the overlap, yielded samples: u1 1.2, u3 0, u4 0,
    u5 1.0 -> 0.55."""
    build_user_interrupt(tmp_path / "in")
    agg, rows = _score("user_interrupt", tmp_path / "in", tmp_path / "out", compat=False)
    assert agg["TTR"] == pytest.approx(1 - 2 / 6)
    assert agg["Latency"] == pytest.approx(0.55) and agg["Latency level"] == 3
    assert rows["u5"]["TOR"] == 0
    assert any(d.get("metric") == "TTR" for d in agg["differences"])


def test_user_interrupt_without_any_closed_cluster_has_no_latency(tmp_path: Path) -> None:
    """Only a silent model: the code divides by zero (l. 196); here Latency is null."""
    interrupt_folder(tmp_path, "u1", (10.0, 14.0), [])
    agg, _ = _score("user_interrupt", tmp_path, tmp_path / "out")
    assert agg["TTR"] == 0.0 and agg["Latency"] is None


# -- model interrupt -----------------------------------------------------------------------------

def build_model_interrupt(root: Path) -> None:
    """The user's last word ends at 8.0::

        user   ==================|8.0
        m1           |Wait          6.0: delay -2.0 < -0.5, interrupted
        m2                  |Well   7.5: delay -0.5, not (strictly less, l. 99)
        m3                      |No 8.3: delay 0.3
        m4                          silent: skipped
        m5                          no input.json: skipped
    """
    user = transcript([("Roosevelt", 1.0, 5.0), ("signed", 5.1, 8.0)])
    for name, start in (("m1", 6.0), ("m2", 7.5), ("m3", 8.3)):
        write(root / name, input_json=user, output_json=transcript([("w", start, start + 1)]))
    write(root / "m4", input_json=user, output_json=transcript([]))
    write(root / "m5", output_json=transcript([("w", 1.0, 2.0)]))


def test_model_interrupt_tor_is_a_count(tmp_path: Path) -> None:
    """TOR = 1 (a count, l. 169); delays per sample; EDS not computed."""
    build_model_interrupt(tmp_path / "in")
    agg, rows = _score("model_interrupt", tmp_path / "in", tmp_path / "out")
    assert agg["TOR"] == 1 and isinstance(agg["TOR"], int)
    assert rows["m1"] == {"sample": "m1", "delay": -2.0, "interrupted": 1}
    assert rows["m2"]["interrupted"] == 0 and rows["m2"]["delay"] == -0.5
    assert "silent" in rows["m4"]["skipped"] and "input.json" in rows["m5"]["skipped"]
    assert agg["EDS"] is None


def test_model_interrupt_paper_tor_is_a_rate_with_silent_models(tmp_path: Path) -> None:
    """Paper: 1 interruption / (3 scored + 1 silent) = 0.25."""
    build_model_interrupt(tmp_path / "in")
    agg, _ = _score("model_interrupt", tmp_path / "in", tmp_path / "out", compat=False)
    assert agg["TOR"] == 0.25
    assert {"metric": "TOR", "paper": 0.25, "code": 1} in agg["differences"]


# -- user backchannel ----------------------------------------------------------------------------

QUERY = [("Explain", 0.5, 1.0), ("photosynthesis", 1.1, 2.0)]


def build_user_backchannel(root: Path) -> None:
    """The user's backchannel "Okay" starts at 8.0 (found after a > 1.5 s input gap)::

        user   |Explain photosynthesis|       |Okay|
        b1     |w1==|w2====|w3=======|  2.0  |w4|         gap 8.5-10.5 at 8.0: interrupted
        b2     |w1======|w2========|w3=======|            no gap: not
        b3     |w1============|w2=========|  2.0  |w3|    gap 12-14, w1 ends 8.0 <= 8.0: code 1
        b4     |w1| 2.0 |w2|w3=====|                      gap 3-5 before 7.0: code 1 (metadata)
        b5     input without a gap, no metadata.json:     skipped
        b6     one input word:                            skipped
        b7     silent model:                              counted, not interrupted
        b8     |w1=========| 1.2 |w2====|                 gap 8.2-9.4: > 1 s, not > 1.5 s
    """
    okay = [*QUERY, ("Okay", 8.0, 8.4)]
    backchannel_folder(root, "b1", okay, [("w1", 3.0, 4.0), ("w2", 4.1, 6.0),
                                          ("w3", 6.1, 8.5), ("w4", 10.5, 11.0)])
    backchannel_folder(root, "b2", okay, [("w1", 3.0, 6.0), ("w2", 6.1, 9.0),
                                          ("w3", 9.2, 12.0)])
    backchannel_folder(root, "b3", okay, [("w1", 3.0, 8.0), ("w2", 8.1, 12.0),
                                          ("w3", 14.0, 15.0)])
    backchannel_folder(root, "b4", [*QUERY, ("okay", 2.5, 2.9)],
                       [("w1", 2.0, 3.0), ("w2", 5.0, 6.0), ("w3", 6.1, 9.0)], [7.0])
    backchannel_folder(root, "b5", [*QUERY, ("okay", 2.5, 2.9)], [("w1", 3.0, 4.0)])
    backchannel_folder(root, "b6", [("Okay", 8.0, 8.4)], [("w1", 3.0, 4.0)])
    backchannel_folder(root, "b7", okay, [])
    backchannel_folder(root, "b8", okay, [("w1", 3.0, 8.2), ("w2", 9.4, 12.0)])


def test_user_backchannel_interrupt_rate(tmp_path: Path) -> None:
    """Counted b1 b2 b3 b4 b7 b8; interrupted b1, b3 and b4 (the code's index test,
    l. 111-112): 3/6."""
    build_user_backchannel(tmp_path / "in")
    agg, rows = _score("user_backchannel", tmp_path / "in", tmp_path / "out")
    flags = {b: rows[b]["interrupted"] for b in ("b1", "b2", "b3", "b4", "b7", "b8")}
    assert flags == {"b1": 1, "b2": 0, "b3": 1, "b4": 1, "b7": 0, "b8": 0}
    assert agg["Interrupt Rate"] == 0.5
    assert rows["b1"]["backchannel_time"] == 8.0
    assert rows["b4"]["backchannel_source"] == "metadata.json"
    assert "metadata.json" in rows["b5"]["skipped"] and "two words" in rows["b6"]["skipped"]
    assert agg["Coherent cases"] is None


def test_user_backchannel_paper_gap_of_one_second_around_the_backchannel(
        tmp_path: Path) -> None:
    """Paper: b1 and b8 (1.2 s > 1 s) interrupted; b3 and b4 not (their gaps are away from
    the backchannel): 2/6."""
    build_user_backchannel(tmp_path / "in")
    agg, rows = _score("user_backchannel", tmp_path / "in", tmp_path / "out", compat=False)
    assert agg["Interrupt Rate"] == pytest.approx(2 / 6) and agg["TTR"] == agg["Interrupt Rate"]
    assert rows["b8"]["interrupted"] == 1 and rows["b3"]["interrupted"] == 0


# -- model backchannel ---------------------------------------------------------------------------

def build_model_backchannel(root: Path) -> dict[str, list[float]]:
    """Ten-second outputs (51 bins of 0.2 s); returns the reference distributions::

        k1   |yeah|      |mm|                    two backchannels: TOR 0, freq 0.2
        k2   |========= 3.5 s =======| |oh|      > 3 s: TOR 1, stop; none kept: JSD 1
        k3   |mm|  |so the thing ....|           a turn resets the list: TOR 1, JSD 1
        k4   |so the thing ..|  |yeah|           turn, then one backchannel: TOR 0 (last)
        k6   |yeah======|  1.0-1.96 s in samples: rounded to 1.0-2.0 = 1 s, a turn: TOR 1
    """
    for name in ("k1", "k2", "k3", "k4", "k6"):
        silent_wav(root / name / "output.wav", 10.0)
    vad_segments(root / "k1", [(1.0, 1.4), (3.0, 3.5)])
    write(root / "k1", output_json=transcript([("yeah", 1.05, 1.35), ("mm", 3.1, 3.4)]))
    vad_segments(root / "k2", [(0.5, 4.0), (5.0, 5.3)])
    write(root / "k2", output_json="not read: the first segment is a turn")
    vad_segments(root / "k3", [(1.0, 1.3), (2.0, 3.5)])
    write(root / "k3", output_json=transcript([("mm", 1.0, 1.3), ("so", 2.0, 2.4),
                                               ("the", 2.5, 2.8), ("thing", 2.9, 3.4)]))
    vad_segments(root / "k4", [(1.0, 2.5), (4.0, 4.4)])
    write(root / "k4", output_json=transcript([("so", 1.0, 1.4), ("the", 1.5, 1.8),
                                               ("thing", 1.9, 2.4), ("yeah", 4.0, 4.3)]))
    vad_segments(root / "k6", [(16000, 31360)], unit="samples")
    write(root / "k6", output_json=transcript([("yeah", 1.2, 1.5)]))
    at_4s = [0.0] * 51
    at_4s[20] = at_4s[21] = at_4s[22] = 1 / 3
    return {"k1": [1.0] * 26, "k2": [1.0] * 26, "k3": [1.0] * 26, "k4": at_4s, "k6": [1.0] * 51}


def _k1_distance() -> float:
    """JS distance (natural log) between k1's histogram, 1/5 on bins 5, 6 (1.4 / 0.2 =
    6.999... -> 6) and 15-17 (3.0 / 0.2 = 15.0; the 1e-10 smoothing is negligible), and the
    uniform 1/51: each of the 5 bins has M = (1/5 + 1/51) / 2, the other 46 M = 1/102."""
    m = (1 / 5 + 1 / 51) / 2
    kl_p = math.log((1 / 5) / m)
    kl_q = 5 / 51 * math.log((1 / 51) / m) + 46 / 51 * math.log(2)
    return math.sqrt((kl_p + kl_q) / 2)


def test_model_backchannel_tor_freq_and_jsd_distance(tmp_path: Path) -> None:
    """TOR = mean(0, 1, 1, 0, 1); freq = mean(0.2, 0, 0, 0.1, 0); JSD = mean(k1, 1, 1, ~0, 1):
    k4's backchannel (bins 20-22: 4.4 / 0.2 = 22.0) matches its reference."""
    ref = build_model_backchannel(tmp_path / "in")
    write(tmp_path, ref_json=ref)
    agg, rows = _score("model_backchannel", tmp_path / "in", tmp_path / "out",
                       reference_distribution=tmp_path / "ref.json")
    assert [rows[k]["TOR"] for k in ("k1", "k2", "k3", "k4", "k6")] == [0, 1, 1, 0, 1]
    assert rows["k1"]["JSD"] == pytest.approx(_k1_distance(), rel=1e-6)
    assert rows["k4"]["JSD"] == pytest.approx(0.0, abs=1e-3)
    assert rows["k2"]["JSD"] == rows["k3"]["JSD"] == rows["k6"]["JSD"] == 1.0
    assert agg["TOR"] == pytest.approx(0.6)
    assert agg["BCR"] == agg["freq"] == pytest.approx(0.06)
    assert agg["JSD"] == pytest.approx((_k1_distance() + 3 + rows["k4"]["JSD"]) / 5)
    assert rows["k1"]["backchannels"] == [[1.0, 1.4], [3.0, 3.5]]


def test_model_backchannel_paper_divergence_base2_and_unrounded_segments(
        tmp_path: Path) -> None:
    """Paper: k1's JSD is the base-2 divergence, distance**2 / ln 2; k6 keeps 1.0-1.96
    (0.96 s, one word): a backchannel, so TOR 0 and JSD against the uniform reference."""
    ref = build_model_backchannel(tmp_path / "in")
    write(tmp_path, ref_json=ref)
    agg, rows = _score("model_backchannel", tmp_path / "in", tmp_path / "out",
                       reference_distribution=tmp_path / "ref.json", compat=False)
    assert rows["k1"]["JSD"] == pytest.approx(_k1_distance() ** 2 / math.log(2), rel=1e-6)
    assert rows["k6"]["TOR"] == 0 and rows["k6"]["backchannels"] == [[1.0, 1.96]]
    assert agg["TOR"] == pytest.approx(0.4)
    assert any("base 2" in d.get("rule", "") for d in agg["differences"])


def test_model_backchannel_needs_its_reference_and_audio(tmp_path: Path) -> None:
    ref = build_model_backchannel(tmp_path / "in")
    with pytest.raises(DuplexevalError, match="--reference-distribution"):
        score_flexi("model_backchannel", tmp_path / "in", tmp_path / "out", PeerOptions())
    del ref["k1"]
    write(tmp_path, ref_json=ref)
    with pytest.raises(DuplexevalError, match="no reference distribution for 'k1'"):
        score_flexi("model_backchannel", tmp_path / "in", tmp_path / "out",
                    PeerOptions(reference_distribution=tmp_path / "ref.json"))
    (tmp_path / "in" / "k2" / "output.wav").unlink()
    (tmp_path / "in" / "k2" / "vad_segments.json").unlink()
    ref["k1"] = [1.0, 1.0]
    write(tmp_path, ref_json=ref)
    with pytest.raises(DuplexevalError, match=r"k2/output.wav: required file not found"):
        score_flexi("model_backchannel", tmp_path / "in", tmp_path / "out",
                    PeerOptions(reference_distribution=tmp_path / "ref.json"))


# -- errors and the command line -----------------------------------------------------------------

def test_bad_files_are_one_line_errors_naming_them(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DuplexevalError, match="no FLEXI sample folder"):
        score_flexi("pause_handling", tmp_path / "empty", tmp_path / "out", PeerOptions())
    with pytest.raises(DuplexevalError, match="not a folder"):
        score_flexi("user_interrupt", tmp_path / "nope", tmp_path / "out", PeerOptions())
    turn_taking_folder(tmp_path, "dialog_1", 5.0, [("a", 1.0, 2.0)])
    write(tmp_path / "dialog_1", output_json="{not json")
    with pytest.raises(DuplexevalError, match=r"dialog_1/output.json: not valid JSON"):
        score_flexi("turn_taking", tmp_path, tmp_path / "out", PeerOptions())
    write(tmp_path / "dialog_1", output_json={"chunks": [{"text": "a", "timestamp": ["x", 1]}]})
    with pytest.raises(DuplexevalError, match=r"output.json: chunks\[0\]"):
        score_flexi("turn_taking", tmp_path, tmp_path / "out", PeerOptions())
    (tmp_path / "dialog_1" / "turn_taking.json").unlink()
    with pytest.raises(DuplexevalError, match=r"turn_taking\.json: required file not found"):
        score_flexi("turn_taking", tmp_path, tmp_path / "out", PeerOptions())


def test_cli_scores_and_reports_bad_input_with_exit_2(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    build_turn_taking(tmp_path / "in")
    out = tmp_path / "out"
    assert main(["score", "--peer", "flexi", "--task", "turn_taking", str(tmp_path / "in"),
                 "-o", str(out)]) == 0
    assert (out / "per_sample.jsonl").is_file() and (out / "aggregate.json").is_file()
    assert "JIR" in capsys.readouterr().out
    assert main(["score", "--peer", "flexi", "--task", "turn_taking", str(tmp_path / "in"),
                 "-o", str(out), "--paper"]) == 0
    paper = json.loads((out / "aggregate.json").read_text())
    assert paper["definitions"] == "paper" and paper["Latency level"] == 3  # 0.97 s
    assert paper["differences"] == [{"rule": paper["differences"][0]["rule"]}]  # no value
    capsys.readouterr()
    write(tmp_path / "in" / "dialog_1", output_json="{")
    assert main(["score", "--peer", "flexi", "--task", "turn_taking", str(tmp_path / "in"),
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dialog_1/output.json" in err[0]
    assert main(["score", "--peer", "flexi", "--task", "nope", str(tmp_path / "in"),
                 "-o", str(out)]) == 2
