"""Re-scoring an official M3-DuplexBench output folder (fixture: tests/fixtures/m3_outputs).

The six events, in output-wav time (``input_start`` subtracted), model = channel 1::

    0000 TURN_SHIFT  T = 2.5          model [2.9, 4.0]: TOR 1, latency 0.4; human 0.3 -> err 0.1
    0001 TURN_SHIFT  T = 3.0          model [1.0, 3.5]: started > 0.4 s early -> long overlap
    0002 TURN_HOLD   pause [2.0, 3.0] model [2.3, 2.6] 1 word (a backchannel), [4.0, 5.0]:
                                      TOR 0, latency 4.0 - 2.0 = 2.0
    0003 SHORTPAUSE  pause [1.0, 1.4] model [1.2, 3.0] 6 words: takeover, latency 0.2
    0004 BC          onset 0          model [0.0, 2.5]: stop latency 2.5, speaking
    0005 BARGE_IN    onset 0          no model speech: stop latency None, not speaking
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from duplexeval.analysis import Chunk, SpeechSegment
from duplexeval.cli import main
from duplexeval.metrics import EventView, get_variant
from duplexeval.metrics._score_outputs import build_results
from duplexeval.metrics._scoring import score_events
from duplexeval.report._text import TIMING_COLUMNS, timing_table_lines
from duplexeval.results import SourceInfo
from duplexeval.results import load as load_results_file

FIXTURE = Path(__file__).parent / "fixtures" / "m3_outputs"

EXPECTED_AGGREGATE = [
    # (event_type, dimension, metric, n, mean)
    ("BARGE_IN", "user_barge_in", "is_speaking", 1, 0.0),
    ("BC", "user_backchanneling", "is_speaking", 1, 1.0),
    ("BC", "user_backchanneling", "stop_latency ↑", 1, 2.5),
    ("SHORTPAUSE", "pause_handling", "latency ↑", 1, 0.2),
    ("SHORTPAUSE", "pause_handling", "latency_wo_long_overlap", 1, 0.2),
    ("SHORTPAUSE", "pause_handling", "tor ↓", 1, 1.0),
    ("SHORTPAUSE", "pause_handling", "tor_err_long_overlap", 1, 0.0),
    ("SHORTPAUSE", "pause_handling", "tor_err_normal", 1, 1.0),
    ("TURN_HOLD", "pause_handling", "latency ↑", 1, 2.0),
    ("TURN_HOLD", "pause_handling", "latency_wo_long_overlap", 1, 2.0),
    ("TURN_HOLD", "pause_handling", "tor ↓", 1, 0.0),
    ("TURN_HOLD", "pause_handling", "tor_err_long_overlap", 1, 0.0),
    ("TURN_HOLD", "pause_handling", "tor_err_normal", 1, 0.0),
    ("TURN_SHIFT", "smooth_turn_taking", "latency ↓", 1, 0.4),
    ("TURN_SHIFT", "smooth_turn_taking", "tor ↑", 2, 0.5),
    ("TURN_SHIFT", "smooth_turn_taking", "tor_err_long_overlap", 2, 0.5),
    ("TURN_SHIFT", "smooth_turn_taking", "tor_err_silence", 2, 0.0),
]


def test_rescoring_an_official_output_folder(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # transcript paths resolve relative to the folder
    out = tmp_path / "scores"
    assert main(["score", "--m3", str(FIXTURE), "-o", str(out), "--language", "ja",
                 "--domain", "chat"]) == 0
    printed = capsys.readouterr().out
    assert "SHIFT TOR% ↑" in printed and "50.0 [9.5, 90.5]†" in printed
    assert "6 event(s) scored" in printed

    aggregate = json.loads((out / "aggregate.json").read_text())
    got = [(r["event_type"], r["dimension"], r["metric"], r["n"]) for r in aggregate]
    assert got == [e[:4] for e in EXPECTED_AGGREGATE]
    for row, expected in zip(aggregate, EXPECTED_AGGREGATE, strict=True):
        assert row["mean"] == pytest.approx(expected[4])
        assert row["few_events"] is True  # n < 20: the dagger
    tor = next(r for r in aggregate if r["metric"] == "tor ↑")
    # 1 of 2, z = 1.959964: Wilson centre (0.5 + z²/4) / (1 + z²/2) = 0.5, half
    # z·sqrt(0.25/2 + z²/16) / (1 + z²/2) = 0.405468: [0.094532, 0.905468], inside [0, 1]
    # (Student's t gave 0.5 ± 6.35: far outside the scale)
    assert tor["ci_method"] == "wilson"
    assert (tor["ci95_low"], tor["ci95_high"]) == pytest.approx((0.094532, 0.905468), abs=1e-6)

    rows = [json.loads(line) for line in (out / "per_event.jsonl").read_text().splitlines()]
    by_id = {r["event_id"].split("_")[2]: r for r in rows}
    assert by_id["0000"]["latency ↓"] == pytest.approx(0.4)
    assert by_id["0000"]["latency_abs_err_to_human"] == pytest.approx(0.1)
    assert by_id["0001"]["miss_type"] == "long_overlap" and by_id["0001"]["latency ↓"] is None
    assert by_id["0002"]["latency ↑"] == pytest.approx(2.0)
    assert by_id["0002"]["latency_responders ↑"] == pytest.approx(2.0)  # a responder
    assert by_id["0003"]["miss_type"] == "takeover"
    assert by_id["0005"] == {"event_id": "d1_ch1_0005_user_barge_in", "sample_id": "d1",
                             "event_type": "BARGE_IN", "dimension": "user_barge_in",
                             "stop_latency ↓": None, "is_speaking": 0}

    results = load_results_file(out / "results.json")
    assert results.variant.name == "m3" and results.source.kind == "m3-official"
    assert {e.language for e in results.events} == {"ja"}
    extra = [r for r in results.aggregates if r.metric == "latency_abs_err_to_human"]
    assert len(extra) == 1 and not extra[0].official and extra[0].mean == pytest.approx(0.1)
    responders = {r.event_type: r for r in results.aggregates
                  if r.metric == "latency_responders ↑"}
    assert set(responders) == {"TURN_HOLD", "SHORTPAUSE"}
    assert not responders["TURN_HOLD"].official and responders["TURN_HOLD"].n == 1

    # the same folder through the peer registry: `score --m3` is the peer m3
    peer_out = tmp_path / "peer"
    assert main(["score", "--peer", "m3", "--task", "all", str(FIXTURE), "-o", str(peer_out),
                 "--language", "ja", "--domain", "chat"]) == 0
    peer_printed = capsys.readouterr().out
    assert f"TURN_SHIFT/smooth_turn_taking/tor ↑: {tor['mean']}" in peer_printed
    assert (peer_out / "per_event.jsonl").read_bytes() == (out / "per_event.jsonl").read_bytes()
    assert (peer_out / "aggregate.json").read_bytes() == (out / "aggregate.json").read_bytes()
    assert responders["SHORTPAUSE"].mean == pytest.approx(0.2)
    assert "HOLD lat s ↑ (official, 10 s if silent)" in printed
    assert "2.00†(n=1)" in printed  # the responders-only HOLD latency with its n


def _hold(event_id: str, *model: tuple[float, float]) -> EventView:
    """A TURN_HOLD, pause [2.0, 3.0] in wav time, window to 12.0, model segments of 6 words."""
    segs = tuple(SpeechSegment.of(1, a, b, "w " * 6, tuple(Chunk(a, b, "w") for _ in range(6)))
                 for a, b in model)
    return EventView(event_id=event_id, event_type="TURN_HOLD", input_start=0.0,
                     input_end=12.0, event_start=2.0, event_end=3.0, segments=segs)


def test_table_labels_the_official_pause_latency_and_adds_the_responders_one() -> None:
    """Two systems on three holds (pause [2.0, 3.0], window to 12.0):

        silent     model  (nothing)            official 10, 10, 10 -> 10.00; responders (n=0)
        responder  model        MMM  at 4.0    official 2, 3, 10  -> 5.00;  responders 2.50,
                   model         MMM at 5.0                                  n=2
                   model  (nothing)

    The official column makes the silent system look best (a higher pause latency is better);
    the responders column shows it never responded."""
    variant = get_variant("m3")
    source = SourceInfo(kind="run", path="x", metadata="x")
    silent = build_results(score_events([_hold("a"), _hold("b"), _hold("c")], variant),
                           variant, source, None)
    talker = build_results(score_events([_hold("a", (4.0, 6.0)), _hold("b", (5.0, 6.0)),
                                         _hold("c")], variant), variant, source, None)
    header, _, silent_row, talker_row = timing_table_lines([("silent", silent),
                                                            ("responder", talker)])
    columns = [c.header for c in TIMING_COLUMNS]
    assert all(c.endswith(("↑", "↓")) or "↑ (" in c or "↓ (" in c for c in columns)
    assert "HOLD lat s ↑ (official, 10 s if silent)" in header
    assert "HOLD lat s ↑ (responders)" in header
    # cells: intervals on their scale (TOR 0 of 3: Wilson [0, 56.1] %; latencies of 3 events:
    # the bootstrap, inside the values)
    assert "0.0 [0.0, 56.1]†" in silent_row and "10.00 [10.00, 10.00]†" in silent_row
    assert "(n=0)" in silent_row
    assert "5.00 [2.00, 10.00]†" in talker_row and "2.50 [2.00, 3.00]†(n=2)" in talker_row


def test_metadata_in_the_folder_and_plain_metadata_jsonl(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    shutil.copytree(FIXTURE, folder)
    (folder / "asr" / "metadata_mfa.jsonl").rename(folder / "metadata.jsonl")
    assert main(["score", "--m3", str(folder), "-o", str(tmp_path / "s")]) == 0
    assert len(json.loads((tmp_path / "s" / "aggregate.json").read_text())) == 17


def test_missing_transcript_names_the_file_and_line(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "out"
    shutil.copytree(FIXTURE, folder)
    (folder / "asr" / "mfa" / "d1_ch0_0002_pause_handling.mfa.json").unlink()
    (folder / "asr" / "mfa" / "d1_ch0_0003_pause_handling.mfa.json").write_text("{")
    assert main(["score", "--m3", str(folder), "-o", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.splitlines()
    meta = folder / "asr" / "metadata_mfa.jsonl"
    assert err == [f"duplexeval: {meta}:3: transcript not found: "  # one line: the first,
                   "asr/mfa/d1_ch0_0002_pause_handling.mfa.json (and 1 more problem(s) in "
                   "that input)"]  # and how many more (line 4's transcript is not JSON)
    assert not (tmp_path / "s").exists()  # nothing half-written


def test_folder_without_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--m3", str(tmp_path), "-o", str(tmp_path / "s")]) == 2
    assert "no metadata_mfa.jsonl or metadata.jsonl found" in capsys.readouterr().err
