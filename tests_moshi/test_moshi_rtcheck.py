"""``duplexeval rtcheck`` on the tiny random-weight Moshi: the compute table (unbatched and a
batch of two rows, 80 ms frames) printed and written as JSON, with a verdict that follows the
measured p99."""

from __future__ import annotations

import json
from pathlib import Path

from duplexeval.cli import main


def test_rtcheck_times_the_tiny_moshi(tiny_args: dict[str, str], tmp_path: Path,
                                      capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "rt.json"
    args = ["rtcheck", "--system", "moshi", "--seconds", "2", "--rows", "2", "--json", str(out)]
    for key, value in tiny_args.items():
        args += ["--system-arg", f"{key}={value}"]
    code = main(args)
    printed = capsys.readouterr().out
    record = json.loads(out.read_text())
    assert [m["mode"] for m in record["modes"]] == ["unbatched", "batch of 2"]
    unbatched = record["modes"][0]
    assert unbatched["frame_seconds"] == 0.08 and unbatched["frames"] == 25 - 5
    assert 0 < unbatched["step_seconds"]["p50"] <= unbatched["step_seconds"]["p99"]
    assert record["live"] == (unbatched["step_seconds"]["p99"] <= 0.08)
    assert code == (0 if record["live"] else 1)
    assert "rtcheck moshi: compute per frame" in printed and "batch of 2" in printed
