"""``duplexeval run --system moshi`` end to end on the tiny random-weight checkpoint and a tiny
synthetic dataset, under the three protocols; batched continuations through the executor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from tiny import write_dataset

from duplexeval._audio import read_audio
from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs._driver import DialogueAudio, run_group


@pytest.mark.parametrize("protocol", ["single", "multi-gen", "multi-ref"])
def test_run_moshi_under_each_protocol(tiny_args: dict[str, str], tmp_path: Path,
                                       protocol: str) -> None:
    dataset = write_dataset(tmp_path / "data")
    out = tmp_path / "run"
    args = ["run", "--system", "moshi", "--dataset", str(dataset), "--protocol", protocol,
            "--out", str(out), "--seed", "5"]
    for key, value in tiny_args.items():
        args += ["--system-arg", f"{key}={value}"]
    assert main(args) == 0
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["samples"] >= 3 and summary["failed"] == 0
    config = json.loads((out / "config.json").read_text())
    assert config["system"]["name"] == "moshi"
    meta = [json.loads(line) for line in (out / "metadata.jsonl").read_text().splitlines()]
    assert len(meta) == summary["samples"]
    for row in meta:
        wav, _ = sf.read(str(out / row["output_audio_path"]), dtype="float32")
        assert wav.shape[1] == 2 and np.abs(wav[:, 1]).max() > 0  # the model spoke


@pytest.mark.parametrize("protocol", ["multi-gen", "multi-ref"])
def test_batched_continuations_equal_per_sample_replay(tiny_system: Any, tmp_path: Path,
                                                       protocol: str,
                                                       fork_batches: list[int]) -> None:
    """Through the executor: per-sample replay from the pass start (no snapshots) and a shared
    prefix whose continuations step as batch rows give bit-identical outputs."""
    dataset, _ = load_dataset(write_dataset(tmp_path / "data"), audio=Need.REQUIRE)
    dialogue = dataset.dialogues[0]
    plan = build_plan([dialogue], PlanOptions(protocol=EvalProtocol(protocol)))
    x, sr = read_audio(dialogue.audio.path)
    outputs = []
    for snapshot, batch in ((False, 1), (True, 8)):
        run = {}
        for members in plan.groups().values():
            outs, _ = run_group(tiny_system, dialogue, DialogueAudio(x, sr), members,
                                EvalProtocol(protocol), 5, use_snapshot=snapshot, batch_size=batch)
            run.update({o.sample.event_id: o.system for o in outs})
        outputs.append(run)
    replay, batched = outputs
    # replay forks nothing; the shared pass stepped its continuations as rows of batches
    assert fork_batches and max(fork_batches) >= 2 and sum(fork_batches) == len(batched)
    assert len(replay) >= 3 and replay.keys() == batched.keys()
    assert all(np.array_equal(replay[k], batched[k]) for k in replay)
