"""``--no-mute``: the user channel plays as recorded through the window (MTR-style rounds)
instead of being zeroed after the event (M3's rule)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from duplexeval.cli import main
from duplexeval.runs import RunDir


def _user_after_event(run: Path) -> dict[str, float]:
    """Per sample: the peak of the fed user channel after its mute start (event start for a
    TURN_SHIFT / TURN_HOLD, event end for BC / BARGE_IN)."""
    rd = RunDir(run)
    out = {}
    for row in rd.read_metadata():
        x, rate = sf.read(str(rd.output_audio(row)), always_2d=True)
        cut = row.event_end if row.event_type in ("BC", "BARGE_IN") else row.event_start
        start = round((float(cut) - float(row.input_start)) * rate)
        out[row.event_id] = float(np.abs(x[start:, 0]).max(initial=0.0))
    return out


def test_unmuted_samples_keep_the_users_audio(sample_voiced: Path, tmp_path: Path) -> None:
    args = ["run", "--system", "silence", "--dataset", str(sample_voiced), "--protocol",
            "multi-ref"]
    assert main([*args, "--out", str(tmp_path / "muted")]) == 0
    assert main([*args, "--out", str(tmp_path / "unmuted"), "--no-mute"]) == 0
    muted, unmuted = _user_after_event(tmp_path / "muted"), _user_after_event(tmp_path / "unmuted")
    assert muted.keys() == unmuted.keys()
    assert all(v == 0.0 for v in muted.values())
    assert sum(v > 0.01 for v in unmuted.values()) >= len(unmuted) // 2  # the user goes on
    config = RunDir(tmp_path / "unmuted").read_config()
    assert config.config["plan"]["mute"] is False
