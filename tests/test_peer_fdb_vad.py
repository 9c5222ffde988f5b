"""``score --peer fdb-v1`` on the VAD-based tasks (backchannel, v1.5 timing) and through the
command line.  Speech segments come from ``vad_segments.json`` (seconds), so no VAD model
runs; the wavs are short silent files whose length sets the frequency and histogram.

Expected values are worked out by hand from ``eval_backchannel.py`` / ``get_timing.py``; the
Jensen-Shannon value is computed here with the scipy calls FDB makes, from histograms whose
bins are written out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.interpolate import interp1d
from scipy.spatial.distance import jensenshannon

from duplexeval.cli import main
from duplexeval.errors import DuplexevalError
from duplexeval.peers import PeerOptions
from duplexeval.peers.fdb import _io as fdb_io
from duplexeval.peers.fdb._scorer import score_fdb
from duplexeval.timeline import Span
from fdb_folders import chunks as _chunks
from fdb_folders import score as _score
from fdb_folders import vad as _vad
from fdb_folders import wav as _wav
from fdb_folders import write_json as _json

REF_0 = [0.0, 0.05, 0.1, 0.2, 0.1, 0.05, 0.1, 0.2, 0.1, 0.05, 0.05]
REF_2 = [0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1]


def _fdb_jsd(bins: list[int], n: int, ref: list[float], paper: bool = False) -> float:
    """FDB's JSD from bin indices written by hand: counts + 1e-10, normalised, against the
    reference interpolated to ``n`` points."""
    counts = np.zeros(n)
    for i in bins:
        counts[i] += 1
    hist = (counts + 1e-10) / np.sum(counts + 1e-10)
    resized = interp1d(np.linspace(0, 1, len(ref)), ref, kind="linear",
                       fill_value="extrapolate")(np.linspace(0, 1, n))
    if paper:
        return float(jensenshannon(hist, resized, base=2)) ** 2
    return float(jensenshannon(hist, resized))


def _backchannel_root(tmp_path: Path) -> tuple[Path, Path]:
    """Three 10 s outputs at 16 kHz::

        0  M 1.0-1.4 (1 word)   M 3.0-5.0 (6 words)   M 7.0-7.4 (1 word)
           code: TOR 0 (last segment wins), 3 listed, freq 0.3
           bins 5-6 (1.4/0.2 = 6.9999..), 15-25, 35-37 of 51
        1  no speech: TOR 0, freq 0, JSD 1
        2  M 0.5-0.8 (1 word)   M 2.0-6.0 (4 s: TOR 1, stop)   M 8.0-8.3
           code: TOR 1, 1 listed (bins 2-4), freq 0.1
    """
    root = tmp_path / "bc"
    for name in ("0", "1", "2"):
        _wav(root / name / "output.wav", 10.0)
    _vad(root / "0", output=[(1.0, 1.4), (3.0, 5.0), (7.0, 7.4)])
    _chunks(root / "0", (1.1, 1.3), *[(3.1 + 0.3 * i, 3.3 + 0.3 * i) for i in range(6)],
            (7.1, 7.3))
    _vad(root / "1", output=[])
    _chunks(root / "1")
    _vad(root / "2", output=[(0.5, 0.8), (2.0, 6.0), (8.0, 8.3)])
    _chunks(root / "2", (0.55, 0.7), (8.1, 8.2))
    (root / "notes").mkdir()  # not digit-named: ignored
    ref = tmp_path / "icc_gt_distribution.json"
    _json(ref, {"0": REF_0, "1": [0.5, 0.5], "2": REF_2})
    return root, ref


def test_backchannel_compat(tmp_path: Path) -> None:
    root, ref = _backchannel_root(tmp_path)
    aggregate, rows = _score("backchannel", root, tmp_path / "out", reference_distribution=ref)
    jsd0 = _fdb_jsd([5, 6, *range(15, 26), 35, 36, 37], 51, REF_0)
    jsd2 = _fdb_jsd([2, 3, 4], 51, REF_2)
    assert [(r["sample"], r["TOR"]) for r in rows] == [("0", 0), ("1", 0), ("2", 1)]
    assert [r["freq"] for r in rows] == [0.3, 0.0, 0.1]
    assert rows[0]["JSD"] == pytest.approx(jsd0, abs=1e-12)
    assert rows[1]["JSD"] == 1
    assert rows[2]["JSD"] == pytest.approx(jsd2, abs=1e-12)
    assert rows[0]["segment_classes"] == ["backchannel", "turn", "backchannel"]
    assert aggregate["TOR - Mean"] == pytest.approx(1 / 3)
    assert aggregate["TOR - Std"] == pytest.approx(float(np.std([0, 0, 1])))
    assert aggregate["Frequency - Mean"] == pytest.approx(0.4 / 3)
    assert aggregate["JSD - Mean"] == pytest.approx((jsd0 + 1 + jsd2) / 3)
    assert aggregate["Number of samples"] == 3


def test_backchannel_paper_and_its_differences(tmp_path: Path) -> None:
    """Paper: sample 0 has TOR 1 (a turn occurred) and 2 backchannels (bins 5-6, 35-37);
    sample 2 has both short segments (bins 2-4, 40-41); JSD is the base-2 divergence."""
    root, ref = _backchannel_root(tmp_path)
    aggregate, rows = _score("backchannel", root, tmp_path / "out",
                             reference_distribution=ref, compat=False)
    assert [r["TOR"] for r in rows] == [1, 0, 1]
    assert [r["freq"] for r in rows] == [0.2, 0.0, 0.2]
    assert rows[0]["JSD"] == pytest.approx(_fdb_jsd([5, 6, 35, 36, 37], 51, REF_0, True))
    assert rows[2]["JSD"] == pytest.approx(_fdb_jsd([2, 3, 4, 40, 41], 51, REF_2, True))
    changed = {(c["sample"], c["field"]) for c in aggregate["changed"]["values"]}
    assert changed == {("0", "TOR"), ("0", "freq"), ("0", "JSD"), ("2", "freq"), ("2", "JSD")}
    assert aggregate["compat"]["TOR - Mean"] == pytest.approx(1 / 3)
    assert "last_segment_wins" in {d["rule"] for d in aggregate["differences"]}


def test_backchannel_silero_assumes_16k_and_rounds_to_tenths(tmp_path: Path) -> None:
    """A 24 kHz output: FDB's call gives no rate, so speech at 1.0-1.4 s comes out at
    1.5-2.1 s (x 1.5, rounded); the word at 1.1-1.3 s then misses it (0 words: backchannel).
    At 16 kHz, 1.04-1.46 s is rounded to 1.0-1.5 s."""
    root = tmp_path / "bc"
    _wav(root / "1" / "output.wav", 4.0, rate=24000)
    _vad(root / "1", output=[(1.0, 1.4)])
    _chunks(root / "1", (1.1, 1.3))
    _wav(root / "2" / "output.wav", 4.0)
    _vad(root / "2", output=[(1.04, 1.46)])
    _chunks(root / "2", (1.1, 1.3))
    ref = tmp_path / "ref.json"
    _json(ref, {"1": [1, 1], "2": [1, 1]})
    _, rows = _score("backchannel", root, tmp_path / "c", reference_distribution=ref)
    assert rows[0]["backchannels"] == [[1.5, 2.1]] and "24000 Hz" in rows[0]["notes"][0]
    assert rows[1]["backchannels"] == [[1.0, 1.5]]
    _, rows = _score("backchannel", root, tmp_path / "p", reference_distribution=ref,
                     compat=False)
    assert rows[0]["backchannels"] == [[1.0, 1.4]]


def test_backchannel_missing_output_json_carries_tor(tmp_path: Path) -> None:
    """Sample 1 takes the turn (a 4 s segment); sample 2 has no output.json: FDB keeps TOR 1
    from sample 1, freq 0 and JSD 1.  As the first sample it is FDB's NameError."""
    root = tmp_path / "bc"
    _wav(root / "1" / "output.wav", 5.0)
    _vad(root / "1", output=[(0.5, 4.6)])
    _chunks(root / "1", (0.6, 4.5))
    _wav(root / "2" / "output.wav", 5.0)
    _vad(root / "2", output=[(0.5, 0.7)])
    ref = tmp_path / "ref.json"
    _json(ref, {})
    _, rows = _score("backchannel", root, tmp_path / "c", reference_distribution=ref)
    assert (rows[1]["TOR"], rows[1]["freq"], rows[1]["JSD"]) == (1, 0.0, 1)
    assert "carried over" in rows[1]["notes"][0]
    (root / "1" / "output.json").unlink()
    with pytest.raises(DuplexevalError, match=r"1/output\.json: not found.*NameError"):
        score_fdb("backchannel", root, tmp_path / "e", PeerOptions(reference_distribution=ref))


def test_backchannel_reference_problems(tmp_path: Path) -> None:
    root, ref = _backchannel_root(tmp_path)
    with pytest.raises(DuplexevalError, match="--reference-distribution"):
        score_fdb("backchannel", root, tmp_path / "o", PeerOptions())
    _json(ref, {"0": REF_0})
    with pytest.raises(DuplexevalError, match=r"ref|icc.*sample '2'"):
        score_fdb("backchannel", root, tmp_path / "o", PeerOptions(reference_distribution=ref))


def test_backchannel_without_vad_segments_runs_our_vad(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Our VAD's span 1.0-1.4 s is padded by Silero's 30 ms (0.97-1.43 s), then rounded."""
    monkeypatch.setattr(fdb_io, "detect_activity", lambda x, sr, opts: [Span(1.0, 1.4)])
    root = tmp_path / "bc"
    _wav(root / "1" / "output.wav", 3.0)
    _chunks(root / "1", (1.1, 1.3))
    ref = tmp_path / "ref.json"
    _json(ref, {"1": [1, 1]})
    _, rows = _score("backchannel", root, tmp_path / "o", reference_distribution=ref)
    assert rows[0]["backchannels"] == [[1.0, 1.4]]
    assert "our Silero" in rows[0]["notes"][0]


def _timing_root(tmp_path: Path) -> Path:
    """Sample 1 (merges: user gap 0.3 s <= 0.6, model gap 0.4 s <= 0.5)::

        user   1.0-2.0 2.3-3.0 -> [1.0, 3.0]            [5.0, 6.0]
        model            [2.5 ------- 4.0] 4.4-4.8 -> [2.5, 4.8]     [6.5, 7.0]
        stop   [[2.5, 3.0]]       resp  [[6.0, 6.5]] (3.0 -> 6.5 loses to 6.0 -> 6.5)

    Sample 2 has no input.wav: skipped, as get_timing.py skips it.
    """
    root = tmp_path / "v15"
    for name in ("1", "2"):
        _wav(root / name / "output.wav", 0.1)
    _wav(root / "1" / "input.wav", 0.1)
    _vad(root / "1", input=[(1.0, 2.0), (2.3, 3.0), (5.0, 6.0)],
         output=[(2.5, 4.0), (4.4, 4.8), (6.5, 7.0)])
    return root


def test_v1_5_timing(tmp_path: Path) -> None:
    aggregate, rows = _score("v1_5_timing", _timing_root(tmp_path), tmp_path / "out")
    assert rows[0] == {"sample": "1", "latency_stop_list": [[2.5, 3.0]],
                       "latency_resp_list": [[6.0, 6.5]]}
    assert "skipped" in rows[1]
    assert aggregate["Stop latency - Mean"] == 0.5
    assert aggregate["Response latency - Mean"] == 0.5
    assert aggregate["Number of samples"] == 1
    assert any("behaviour tags" in n for n in aggregate["not_computed"])


def test_v1_5_timing_uses_fdb_sample_arithmetic(tmp_path: Path) -> None:
    """Segments in samples at 16 kHz.  User [0, 1440] and [11040, 16000] are 9600 samples
    apart: FDB divides, ``11040/16000 - 1440/16000`` = 0.6 exactly, which merges (<= 0.6);
    multiplying by ``1/16000`` would give 0.6000000000000001 and no merge::

        user   [0 -- 0.09]      [0.69 ---- 1.0]   -> merged [0, 1.0]
        model               [0.625 - 0.75]          [1.5 - 2.0]
        stop   [[0.625, 0.75]]   (unmerged: [[0.69, 0.75]])
        resp   [[1.0, 1.5]]
    """
    root = tmp_path / "v15"
    _wav(root / "1" / "input.wav", 0.1)
    _wav(root / "1" / "output.wav", 0.1)
    _json(root / "1" / "vad_segments.json", {"sampling_rate": 16000, "input.wav": {
        "num_samples": 32000, "unit": "samples",
        "speech_timestamps": [{"start": 0, "end": 1440}, {"start": 11040, "end": 16000}]},
        "output.wav": {"num_samples": 32000, "unit": "samples",
                       "speech_timestamps": [{"start": 10000, "end": 12000},
                                             {"start": 24000, "end": 32000}]}})
    _, rows = _score("v1_5_timing", root, tmp_path / "out")
    assert rows[0]["latency_stop_list"] == [[0.625, 0.75]]
    assert rows[0]["latency_resp_list"] == [[1.0, 1.5]]


def test_cli_writes_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, out = _timing_root(tmp_path), tmp_path / "out"
    assert main(["score", "--peer", "fdb-v1", "--task", "v1_5_timing", str(root),
                 "-o", str(out)]) == 0
    assert (out / "per_sample.jsonl").is_file() and (out / "aggregate.json").is_file()
    assert "Stop latency - Mean: 0.5" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["{not json", json.dumps({"chunks": [{"text": "a"}]}),
                                     json.dumps([1, 2])])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, content: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "pause"
    (root / "1").mkdir(parents=True)
    (root / "1" / "output.json").write_text(content)
    args: list[Any] = ["score", "--peer", "fdb-v1", "--task", "pause_handling", str(root),
                       "-o", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1/output.json" in err[0]
    assert not (tmp_path / "out" / "aggregate.json").exists()


def test_cli_missing_reference_distribution(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = _backchannel_root(tmp_path)
    assert main(["score", "--peer", "fdb-v1", "--task", "backchannel", str(root),
                 "-o", str(tmp_path / "o")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_cli_paper_reports_differences(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    root, ref = _backchannel_root(tmp_path)
    out = tmp_path / "paper"
    assert main(["score", "--peer", "fdb-v1", "--task", "backchannel", str(root), "-o",
                 str(out), "--paper", "--reference-distribution", str(ref)]) == 0
    aggregate = json.loads((out / "aggregate.json").read_text())
    assert aggregate["mode"] == "paper" and aggregate["changed"]["values"]
    assert "distance_named_divergence" in {d["rule"] for d in aggregate["differences"]}
    assert "TOR - Mean: " in capsys.readouterr().out
