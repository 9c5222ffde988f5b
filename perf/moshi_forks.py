"""Moshi in process: frames per second, and what shared prefixes and batched forks save.

The ``moshi`` system with random weights (no download) runs a dataset's plans under the three
protocols in three ways:

* ``replay``: every sample replays its prefix from the pass start (the official cost);
* ``shared``: one pass per (dialogue, user channel) with snapshots at the fork frames, then
  each sample's continuation alone (restore, reseed, step);
* ``batched``: the same pass, the continuations stepping together as batch rows
  (``--batch-size``; needs the executor's batched continuations, else it is skipped).

Printed per protocol and way: samples, frames stepped (one per row per step), wall seconds,
frames per second, the speed-up over ``replay`` and the frames ``replay`` steps per frame
stepped here (the work saved, free of timing noise); and whether every sample's output is
bit-identical to ``replay``'s (it is on CPU; on CUDA, batch rows may round differently).
On a CPU, batch rows run one after the other, so batching saves little there: its gain is a
GPU's (one LM call for all rows).

Sizes: ``tiny`` is the test checkpoint of ``tests_moshi/tiny.py`` (CPU, seconds); ``full`` is the
Moshi 7B architecture and Mimi with random weights (GPU: ``--device cuda``; bfloat16).
``--system personaplex`` runs PersonaPlex's shape instead (a depformer over all codebooks,
its prompt phase with a text prompt and no voice prompt, its one-frame output delay).

Data: ``--dataset`` (default: the official M3 toy chat set at ``../shared/m3_toy``, voiced with
the clip bank when it has no audio); ``--dialogues``, ``--max-samples`` (per dialogue and
channel) and ``--context`` (longest context, s) keep a CPU run short.

Usage (in the moshi environment, ``make venv-moshi``)::

    .venv-moshi/bin/python perf/moshi_forks.py --size tiny --dialogues 1 --max-samples 4
    .venv-moshi/bin/python perf/moshi_forks.py --size full --device cuda [--batch-codec]
"""

from __future__ import annotations

import argparse
import inspect
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
import torch

from duplexeval.data import Need, load_dataset
from duplexeval.data._voice_bursts import voice_bursts
from duplexeval.plan import EvalProtocol, PlanOptions, build_plan
from duplexeval.runs._driver import DialogueAudio, run_group
from duplexeval.systems import load_system

REPO = Path(__file__).resolve().parents[1]
TOY_CHAT = REPO.parent / "shared" / "m3_toy" / "ja" / "chat" / "magicdata_toy"
BATCHED = "batch_size" in inspect.signature(run_group).parameters


def _system_args(size: str, work: Path, device: str, batch_codec: bool,
                 name: str = "moshi") -> dict[str, str]:
    sys.path.insert(0, str(REPO / "tests_moshi"))
    from tiny import LM_CONFIG, PERSONAPLEX_CONFIG, write_checkpoint

    plex = name == "personaplex"
    args = write_checkpoint(work / "checkpoint", PERSONAPLEX_CONFIG if plex else LM_CONFIG)
    args["device"] = device
    args["batch_codec"] = str(int(batch_codec))
    if size == "full":  # moshi's built-in 7B and Mimi configurations; the tiny tokenizer
        args = {k: v for k, v in args.items() if k not in ("config", "mimi_config")}
        if plex:
            from duplexeval.systems.adapters.personaplex_inproc._settings import BUILTIN_CONFIG

            args["config"] = str(BUILTIN_CONFIG)
    return args


def _dataset(path: Path, work: Path, dialogues: int) -> Any:
    dataset, _ = load_dataset(path, alignment=Need.REQUIRE)
    if any(d.audio is None for d in dataset.dialogues):
        voiced = work / "voiced" / path.name
        voice_bursts(dataset, voiced)
        dataset, _ = load_dataset(voiced, audio=Need.REQUIRE)
    return dataset, dataset.dialogues[:dialogues]


def _groups(dialogues: list[Any], protocol: EvalProtocol, context: float | None,
            max_samples: int) -> list[tuple[Any, list[Any]]]:
    plan = build_plan(dialogues, PlanOptions(protocol=protocol, context_max_len=context))
    by_id = {d.id: d for d in dialogues}
    return [(by_id[did], members[:max_samples]) for (did, _), members in plan.groups().items()]


def _run(system: Any, groups: list[tuple[Any, list[Any]]], protocol: EvalProtocol, way: str,
         batch_size: int) -> tuple[dict[str, np.ndarray], int, float]:
    outputs: dict[str, np.ndarray] = {}
    frames = 0
    extra = {"batch_size": batch_size if way == "batched" else 1} if BATCHED else {}
    start = time.perf_counter()
    for dialogue, members in groups:
        x, sr = sf.read(str(dialogue.audio.path), dtype="float32", always_2d=True)
        outs, n = run_group(system, dialogue, DialogueAudio(x, sr), members, protocol, 7,
                            use_snapshot=way != "replay", **extra)
        frames += n
        for o in outs:
            outputs[o.sample.event_id] = np.concatenate(
                [o.context_system if o.context_system is not None else np.zeros(0), o.system])
    return outputs, frames, time.perf_counter() - start


def _protocol_rows(system: Any, groups: list[tuple[Any, list[Any]]], protocol: EvalProtocol,
                   batch_size: int) -> list[dict[str, Any]]:
    rows, base = [], None
    for way in ("replay", "shared", "batched"):
        if way == "batched" and not BATCHED:
            rows.append({"protocol": protocol.value, "way": way,
                         "note": "skipped: this executor has no batched continuations"})
            continue
        outputs, frames, seconds = _run(system, groups, protocol, way, batch_size)
        if base is None:
            base = (outputs, seconds, frames)
        same = outputs.keys() == base[0].keys() and all(
            np.array_equal(outputs[k], base[0][k]) for k in outputs)
        rows.append({"protocol": protocol.value, "way": way, "samples": len(outputs),
                     "frames": frames, "seconds": round(seconds, 2),
                     "frames_per_second": round(frames / seconds, 1),
                     "speedup_vs_replay": round(base[1] / seconds, 2),
                     "replay_frames_per_frame": round(base[2] / frames, 2),
                     "identical_to_replay": bool(same)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--system", choices=("moshi", "personaplex"), default="moshi")
    parser.add_argument("--size", choices=("tiny", "full"), default="tiny")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dataset", type=Path, default=TOY_CHAT)
    parser.add_argument("--dialogues", type=int, default=1)
    parser.add_argument("--max-samples", type=int, default=1000)
    parser.add_argument("--context", type=float, default=None)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-codec", action="store_true",
                        help="run the Mimi of batch rows as one batch (batch_codec=1)")
    parser.add_argument("--protocols", default="single,multi-gen,multi-ref")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        system = load_system(args.system, _system_args(args.size, work, args.device,
                                                        args.batch_codec, args.system))
        start = time.perf_counter()
        system.models()
        print(json.dumps({"system": args.system, "size": args.size, "device": args.device,
                          "load_seconds": round(time.perf_counter() - start, 1),
                          "torch": torch.__version__, "threads": args.threads,
                          "cpu": platform.processor() or platform.machine(),
                          "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
                          "batched_executor": BATCHED}), flush=True)
        _, dialogues = _dataset(args.dataset, work, args.dialogues)
        for name in args.protocols.split(","):
            protocol = EvalProtocol(name)
            groups = _groups(dialogues, protocol, args.context, args.max_samples)
            _protocol_rows(system, groups, protocol, args.batch_size)


if __name__ == "__main__":
    main()
