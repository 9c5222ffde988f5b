"""``score --peer fdb-v1``: hand-made FDB v1/v1.5 sample folders, expected values worked out by
hand from FDB's ``v1_v1.5/evaluation`` code as written (its edge cases and bugs included).

Timelines: ``tt`` the turn_taking.json event start, ``|`` interrupt end, ``w`` ASR words,
``M`` VAD segments (given by ``vad_segments.json``, so no VAD model runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from duplexeval.errors import DuplexevalError
from duplexeval.peers import PeerOptions, get_peer
from duplexeval.peers.fdb._scorer import score_fdb
from fdb_folders import chunks as _chunks
from fdb_folders import event as _event
from fdb_folders import score as _score


def test_registered_with_its_tasks() -> None:
    assert get_peer("fdb-v1").tasks == ("smooth_turn_taking", "pause_handling", "backchannel",
                                        "user_interruption", "v1_5_timing")


def test_smooth_turn_taking(tmp_path: Path) -> None:
    """::

        1  tt 2.0   words 1.8 .. 3.2 (4)   TOR 1, raw -0.2 -> latency 0
        2  tt 3.0   words 3.5 .. 3.9 (2)   span 0.4 s, 2 words: TOR 0
        3  tt 1.0   words 1.5 .. 2.6 (2)   span 1.1 s: TOR 1, latency 0.5
        4  tt 1.0   no words               TOR 0
        Average take turn 2/4; Average latency (0 + 0.5) / 2
    """
    root = tmp_path / "stt"
    for name, tt, stamps in [("1", 2.0, [(1.8, 2.1), (2.1, 2.4), (2.4, 2.9), (2.9, 3.2)]),
                             ("2", 3.0, [(3.5, 3.7), (3.7, 3.9)]),
                             ("3", 1.0, [(1.5, 2.0), (2.0, 2.6)]), ("4", 1.0, [])]:
        _event(root / name, "turn_taking.json", tt, tt + 0.4)
        _chunks(root / name, *stamps)
    (root / "README.md").write_text("ignored by name")
    aggregate, rows = _score("smooth_turn_taking", root, tmp_path / "out")
    assert aggregate["Average take turn"] == 0.5
    assert aggregate["Average latency"] == 0.25
    assert [(r["sample"], r["TOR"], r["latency"]) for r in rows] == [
        ("1", 1, 0), ("2", 0, None), ("3", 1, 0.5), ("4", 0, None)]
    assert rows[0]["latency_raw"] == pytest.approx(-0.2)
    assert aggregate["mode"] == "compat" and "differences" not in aggregate


def _mispaired(root: Path) -> None:
    """Folder 2 has no turn_taking.json::

        1  tt 0.0  words 0.5 .. 1.6    paired with 1/tt: latency 0.5
        2  (no tt) words 2.0 .. 3.1    paired with 3/tt (1.0): latency 1.0
        3  tt 1.0  words 1.25 .. 2.5   no annotation left: dropped by zip
    """
    _event(root / "1", "turn_taking.json", 0.0, 0.4)
    _chunks(root / "1", (0.5, 1.0), (1.0, 1.6))
    _chunks(root / "2", (2.0, 2.5), (2.5, 3.1))
    _event(root / "3", "turn_taking.json", 1.0, 1.4)
    _chunks(root / "3", (1.25, 2.5))


def test_smooth_turn_taking_mis_paired_files_in_compat(tmp_path: Path) -> None:
    root = tmp_path / "stt"
    _mispaired(root)
    aggregate, rows = _score("smooth_turn_taking", root, tmp_path / "out")
    assert aggregate["Average take turn"] == 1.0 and aggregate["Average latency"] == 0.75
    assert rows[1]["turn_taking"] == "3/turn_taking.json" and rows[1]["latency"] == 1.0
    assert rows[2] == {"sample": "3", "skipped": rows[2]["skipped"]}
    assert "zip" in rows[2]["skipped"] and aggregate["n_skipped"] == 1
    with pytest.raises(DuplexevalError, match=r"2/turn_taking.json: not found"):
        score_fdb("smooth_turn_taking", root, tmp_path / "paper", PeerOptions(compat=False))


def test_smooth_turn_taking_suffix_match_paper_differences(tmp_path: Path) -> None:
    """``clean_output.json`` ends with ``output.json``: the code scores it as a second sample
    of folder 1 (words 1.0 .. 1.2, TOR 0); the paper reading does not."""
    root = tmp_path / "stt"
    _event(root / "1", "turn_taking.json", 0.0, 0.4)
    _chunks(root / "1", (0.5, 1.0), (1.0, 1.6))
    _chunks(root / "1", (1.0, 1.2), name="clean_output.json")
    compat, rows = _score("smooth_turn_taking", root, tmp_path / "c")
    assert compat["Average take turn"] == 0.5
    assert [r.get("file") for r in rows] == ["clean_output.json", None]
    paper, _ = _score("smooth_turn_taking", root, tmp_path / "p", compat=False)
    assert paper["Average take turn"] == 1.0 and paper["mode"] == "paper"
    assert paper["changed"]["only_in_compat"] == ["1/clean_output.json"]
    assert paper["compat"]["Average take turn"] == 0.5
    assert {d["rule"] for d in paper["differences"]} == {"mis_paired_files", "suffix_match"}


def test_pause_handling(tmp_path: Path) -> None:
    """::

        1  words 3.4 .. (3.6, null)     null last end -> its start: span 0.2, 2 words: 0
        2  four words 1.0 .. 1.4        span 0.4 s, 4 words: 1
        3  no words                     0
        Average take turn 1/3
    """
    root = tmp_path / "pause"
    _chunks(root / "1", (3.4, 3.6), (3.6, None))
    _chunks(root / "2", (1.0, 1.1), (1.1, 1.2), (1.2, 1.3), (1.3, 1.4))
    _chunks(root / "3")
    (root / ".DS_Store").write_text("")
    aggregate, rows = _score("pause_handling", root, tmp_path / "out")
    assert aggregate["Average take turn"] == pytest.approx(1 / 3, abs=0)
    assert [r["TOR"] for r in rows] == [0, 1, 0]


def test_pause_handling_stray_file_fails_like_fdb(tmp_path: Path) -> None:
    root = tmp_path / "pause"
    _chunks(root / "1", (1.0, 2.0))
    (root / "notes.txt").write_text("x")
    with pytest.raises(DuplexevalError, match=r"notes\.txt: not a folder"):
        score_fdb("pause_handling", root, tmp_path / "out", PeerOptions())
    paper, _ = _score("pause_handling", root, tmp_path / "p", compat=False)
    assert paper["Average take turn"] == 1.0 and paper["compat"]["error"]


def _interruption(root: Path) -> None:
    """::

        1  |13.0  words 12.8 .. 14.0 (2)      span 1.2: TOR 1, raw -0.2 -> latency 0
        2  |6.0   words 7.0 .. 7.6 (3)        span 0.6, 3 words: TOR 0
        3  |3.0   words 3.5 .. 4.3 (4)        4 words: TOR 1, latency 0.5
    """
    for name, end, stamps in [("1", 13.0, [(12.8, 13.5), (13.5, 14.0)]),
                              ("2", 6.0, [(7.0, 7.2), (7.2, 7.4), (7.4, 7.6)]),
                              ("3", 3.0, [(3.5, 3.7), (3.7, 3.9), (3.9, 4.1), (4.1, 4.3)])]:
        _event(root / name, "interrupt.json", end - 2.5, end)
        _chunks(root / name, *stamps)


def test_user_interruption(tmp_path: Path) -> None:
    root = tmp_path / "ui"
    _interruption(root)
    aggregate, rows = _score("user_interruption", root, tmp_path / "out")
    assert aggregate["Average take turn"] == pytest.approx(2 / 3, abs=0)
    assert aggregate["Average latency"] == 0.25
    assert aggregate["Average rating"] is None
    assert aggregate["not_computed"] and "judge" in aggregate["not_computed"][0]
    assert [(r["TOR"], r["latency"]) for r in rows] == [(1, 0), (0, None), (1, 0.5)]


def test_user_interruption_nested_folder(tmp_path: Path) -> None:
    """``os.walk`` makes ``3/extra`` a sample too: FDB fails on its missing output.json."""
    root = tmp_path / "ui"
    _interruption(root)
    (root / "3" / "extra").mkdir()
    with pytest.raises(DuplexevalError, match=r"3/extra/output.json: not found"):
        score_fdb("user_interruption", root, tmp_path / "out", PeerOptions())
    paper, _ = _score("user_interruption", root, tmp_path / "p", compat=False)
    assert paper["Average latency"] == 0.25


def test_empty_outputs_everywhere(tmp_path: Path) -> None:
    """Only empty outputs: TOR 0 and no latency (FDB's code divides by zero there)."""
    root = tmp_path / "stt"
    _event(root / "1", "turn_taking.json", 1.0, 1.4)
    _chunks(root / "1")
    aggregate, _ = _score("smooth_turn_taking", root, tmp_path / "out")
    assert aggregate["Average take turn"] == 0 and aggregate["Average latency"] is None


def test_out_dir_inside_root_is_not_a_sample(tmp_path: Path) -> None:
    root = tmp_path / "ui"
    _interruption(root)
    aggregate, _ = _score("user_interruption", root, root / "scores")
    aggregate, _ = _score("user_interruption", root, root / "scores")
    assert aggregate["n_samples"] == 3
