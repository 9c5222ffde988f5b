"""``data import fdb-v1``: a tiny copy of FDB's v1.0 data layout made here (silent or tone
wavs, hand-written annotations), imported into the M3 layout.

Timelines: ``u`` user speech (channel 0), ``S`` assumed system speech (channel 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.events import EventKind
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan

RATE = 16000


def _wav(path: Path, seconds: float, tones: list[tuple[float, float]] = ()) -> None:
    """Mono wav with a 440 Hz tone over each ``(start, end)`` (energy VAD finds them)."""
    x = np.zeros(int(seconds * RATE), dtype=np.float32)
    for a, b in tones:
        t = np.arange(int(a * RATE), int(b * RATE))
        x[t] = 0.5 * np.sin(2 * np.pi * 440 * t / RATE)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), x, RATE)


def _json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def _words(*items: tuple[str, float, float]) -> list[dict[str, object]]:
    return [{"text": t, "timestamp": [a, b]} for t, a, b in items]


def _source(tmp_path: Path) -> Path:
    """::

        candor_turn_taking/1     u 0.2 ---- 1.5 (speaker 1)     [TURN-TAKING] 2.0
                                 speaker 0 "yes" 2.0-2.5 is the reference responder
        synthetic_pause_handling/1  u 0.5 ---- 2.0   [PAUSE 2.1-2.9]   u 3.0-3.4 (a BC)
        synthetic_user_interruption/1  u 0.5 -- 2.0   S 2.0 ...... 6.6   u 5.0 -- 6.5
                                                       [interrupt 4.8-6.6]
        icc_backchannel/2        transcript only: the user's events, no FDB event
    """
    root = tmp_path / "fdb" / "v1_0"
    tt = root / "candor_turn_taking" / "1"
    _wav(tt / "input.wav", 4.0)
    _json(tt / "transcription.json", [
        {"speaker": 0, "item": _words(("yes", 2.0, 2.5))},
        {"speaker": 1, "item": _words(("is", 0.2, 0.6), ("this", 0.7, 1.5))}])
    _json(tt / "turn_taking.json", [{"text": "[TURN-TAKING]", "timestamp": [2.0, 2.4]}])
    pause = root / "synthetic_pause_handling" / "1"
    _wav(pause / "input.wav", 4.0, [(0.5, 2.0), (3.0, 3.4)])
    _json(pause / "pause.json", [{"text": "[PAUSE]", "timestamp": [2.1, 2.9]}])
    ui = root / "synthetic_user_interruption" / "1"
    _wav(ui / "input.wav", 8.0, [(0.5, 2.0), (5.0, 6.5)])
    _json(ui / "interrupt.json", [{"context": "c", "interrupt": "i", "timestamp": [4.8, 6.6]}])
    bc = root / "icc_backchannel" / "2"
    _wav(bc / "input.wav", 3.0)
    _json(bc / "transcription.json", [{"speaker": 0, "item": _words(("so", 0.5, 1.6))}])
    return tmp_path / "fdb"


def _events(dialogue, kind: EventKind, channel: int) -> list[tuple[float, float]]:
    return [(round(e.start, 3), round(e.end, 3)) for e in dialogue.events_of(kind, channel)]


def test_import_maps_each_task_onto_m3_events(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert main(["data", "import", "fdb-v1", str(_source(tmp_path)), "-o", str(out)]) == 0
    assert main(["validate", "--annotations-only", str(out)]) == 0
    dataset, _ = load_dataset(out, "test", alignment=Need.OPTIONAL)
    d = {x.id: x for x in dataset.dialogues}
    assert list(d) == ["candor_turn_taking_1", "icc_backchannel_2",
                       "synthetic_pause_handling_1", "synthetic_user_interruption_1"]
    tt = d["candor_turn_taking_1"]
    assert _events(tt, EventKind.TURN, 0) == [(0.2, 1.5)]
    assert _events(tt, EventKind.TURN_SHIFT, 1) == [(1.5, 2.0)]
    assert [(w.channel, w.text) for w in tt.words] == [(1, "yes"), (0, "is"), (0, "this")]
    assert tt.extra["fdb_event"] == [2.0, 2.4] and tt.extra["fdb_event_as"] == "TURN_SHIFT"
    pause = d["synthetic_pause_handling_1"]
    assert _events(pause, EventKind.TURN, 0) == [(0.5, 2.0)]
    assert _events(pause, EventKind.BC, 0) == [(3.0, 3.4)]
    assert _events(pause, EventKind.TURN_HOLD, 0) == [(2.0, 3.0)]
    ui = d["synthetic_user_interruption_1"]
    assert _events(ui, EventKind.TURN, 1) == [(2.0, 6.6)]
    assert _events(ui, EventKind.BARGE_IN, 0) == [(5.0, 6.6)]
    assert d["icc_backchannel_2"].extra == {"fdb_task": "backchannel", "fdb_event": None,
                                            "fdb_event_as": None}
    audio, rate = sf.read(str(out / "audio" / "synthetic_user_interruption_1.wav"))
    assert rate == RATE and audio.shape == (8 * RATE, 2) and not audio[:, 1].any()


def test_imported_events_are_planned(tmp_path: Path) -> None:
    """Each FDB event becomes an M3 sample (multi-gen: BARGE_IN needs context)."""
    out = tmp_path / "ds"
    assert main(["data", "import", "fdb-v1", str(_source(tmp_path)), "-o", str(out)]) == 0
    dataset, _ = load_dataset(out, "test", alignment=Need.OPTIONAL)
    plan = build_plan(dataset.dialogues, PlanOptions(protocol=EvalProtocol.MULTI_GEN))
    assert sorted(s.task for s in plan.samples) == ["barge_in", "pause_handling",
                                                    "smooth_turn_taking"]


def test_import_refuses_existing_split_and_bad_source(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    src, out = _source(tmp_path), tmp_path / "ds"
    assert main(["data", "import", "fdb-v1", str(src), "-o", str(out)]) == 0
    assert main(["data", "import", "fdb-v1", str(src), "-o", str(out)]) == 2
    assert main(["data", "import", "fdb-v1", str(src), "-o", str(out), "--force"]) == 0
    (src / "v1_0" / "icc_backchannel" / "2" / "input.wav").unlink()
    capsys.readouterr()
    assert main(["data", "import", "fdb-v1", str(src), "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "icc_backchannel/2/input.wav" in err[0]
    assert main(["data", "import", "fdb-v1", str(tmp_path / "nothing"), "-o",
                 str(tmp_path / "y")]) == 2


def test_eval_fdb_v1_runs_on_the_users_folders_and_verifies(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    """``eval fdb-v1 --data DIR`` on an imported FDB folder: one unmuted Multi (gen) cell
    scored by the fdb-v1 variant, its table, a bundle that verifies; without ``--data`` the
    evaluation is refused with how to give it (its one cell has no data), nothing written."""
    data = tmp_path / "ds"
    assert main(["data", "import", "fdb-v1", str(_source(tmp_path)), "-o", str(data)]) == 0
    out = tmp_path / "bundle"
    assert main(["eval", "fdb-v1", "--system", "silence", "--data", str(data),
                 "-o", str(out)]) == 0
    table = (out / "tables" / "fdb-v1" / "fdb-v1.md").read_text()
    assert "## silence (multi-gen, unmuted)" in table
    assert "smooth_turn_taking" in table and "fdb-v1 variant, official code" in table
    results = json.loads((out / "cells" / "fdb-v1" / "fdb-v1-multi-gen" / "scores" / "fdb-v1"
                          / "results.json").read_text())
    assert results["variant"]["name"] == "fdb-v1" and results["source"]["protocol"] == \
        "multi-gen"
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    assert main(["eval", "fdb-v1", "--system", "silence", "-o", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no bundled suite: pass --data DIR" in err[0], err
    assert not (tmp_path / "none").exists()
