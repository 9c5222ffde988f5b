"""In process vs over the wire: the ``moshi`` system and ``moshi-ws`` against moshi's own server.

The tiny random checkpoint of ``tests_moshi/tiny.py`` is saved to the files ``moshi.server``
loads and served on loopback and the CPU (through ``tests_moshi/moshi_server_cpu.py`` and its
probe, which records what the server's Mimi and LM see and make); ``moshi-ws`` (lockstep) runs
one session on a seeded input of two voiced-like bursts, and the in-process ``moshi`` system,
loaded from the same files as the server runs them (bfloat16, greedy, one thread), runs on
three inputs:

* ``server PCM + reset``: the PCM the server's Mimi encoded (the client's Opus, decoded), with
  Mimi's state reset after frame 0 as the server does: must agree exactly;
* ``raw + reset``: the raw input with that reset: only Opus differs;
* ``raw``: the raw input, the encoder never reset: the system as it runs.

Printed per input, against the server's own steps: frames whose user codes, text tokens, audio
tokens, PCM (before Opus, bit for bit) and text pieces agree (``n/N``), the first frame whose
user codes differ, the text onset (first frame with a piece) and the audio onset (first sample
above 0.01) differences; then the Opus delay (an impulse) and SNR, whether each Opus direction
is exactly a fresh stream's coding, and whether ``moshi-ws`` traced exactly the server's
pieces.  Why each
difference arises: ``tests_moshi/wire_agreement.py``.

Usage (in the moshi environment, ``make venv-moshi``; about a minute on 2 cores)::

    .venv-moshi/bin/python perf/moshi_wire_agreement.py [--seconds 6] [--weights-seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests_moshi"))

from served import Server, save_checkpoint  # noqa: E402
from tiny import write_checkpoint  # noqa: E402
from wire_agreement import (  # noqa: E402
    FRAME,
    RATE,
    Frames,
    agreement,
    audio_onset,
    first_difference,
    in_process,
    lag,
    opus_delay,
    opus_round_trip,
    over_the_wire,
    probed,
    served_args,
    server_text,
    text_onset,
    user_input,
)

import duplexeval.speech  # noqa: E402, F401 - pins the CPU kernels before torch loads (main)
from duplexeval.systems.adapters.moshi_inproc import MoshiSystem  # noqa: E402


def _diff(a: int | None, b: int | None, unit: float) -> str:
    if a is None or b is None:
        return "-"
    return f"{a - b:+d} ({(a - b) * unit * 1000:+.1f} ms)"


def row(name: str, mine: Frames, server: Frames, sent: dict[int, str]) -> str:
    """One input's agreement with the server, as a table row."""
    codes = agreement(mine.codes, server.codes)
    text = agreement([t and t[0] for t in mine.tokens], [t and t[0] for t in server.tokens])
    audio = agreement([t and t[1:] for t in mine.tokens], [t and t[1:] for t in server.tokens])
    frames = len(server.tokens)
    clipped = np.clip(server.audio, -1.0, 1.0)  # the in-process system clamps its output
    pcm = agreement([mine.audio[t * FRAME:(t + 1) * FRAME].tobytes() for t in range(frames)],
                    [clipped[t * FRAME:(t + 1) * FRAME].tobytes() for t in range(frames)])
    pieces = agreement([mine.text.get(t) for t in range(frames)],
                       [sent.get(t) for t in range(frames)])
    first = first_difference(mine.codes, server.codes)
    return (f"{name:<22} {codes[0]:>3}/{codes[1]:<3} {text[0]:>3}/{text[1]:<3} "
            f"{audio[0]:>3}/{audio[1]:<3} {pcm[0]:>3}/{pcm[1]:<3} {pieces[0]:>3}/{pieces[1]:<3} "
            f"{'-' if first is None else first:>6}  "
            f"{_diff(text_onset(mine.text), text_onset(sent), FRAME / RATE):>16}  "
            f"{_diff(audio_onset(mine.audio), audio_onset(server.audio), 1 / RATE):>18}")


def measure(seconds: float, weights_seed: int, folder: Path) -> None:
    import torch

    torch_version = torch.__version__
    args = write_checkpoint(folder / "tiny")
    tiny = MoshiSystem(**{**args, "weights_seed": str(weights_seed)})
    checkpoint = save_checkpoint(tiny, folder / "served")
    x = user_input(seconds)
    frames = [x[k:k + FRAME] for k in range(0, len(x), FRAME)]
    server = Server(checkpoint, folder / "server.log", probe=folder / "probe.jsonl")
    try:
        wire = over_the_wire(server.url, frames)
    finally:
        server.stop()
    theirs = probed(folder / "probe.jsonl", len(frames))
    system = MoshiSystem(**served_args(checkpoint))
    models = system.models()
    sent = server_text(theirs, models.tokenizer, models.silent_tokens)
    print(f"input: {seconds:g} s, two voiced-like bursts, {len(frames)} frames; tiny checkpoint "
          f"(weights_seed {weights_seed}); LM bfloat16, greedy; torch {torch_version}, "
          f"1 thread; server text pieces on {len(sent)} frames")
    print(f"{'in process on':<22} {'codes':>7} {'text':>7} {'audio':>7} {'pcm':>7} {'pieces':>7} "
          f"{'1st dif':>7} {'text onset':>16}  {'audio onset':>18}")
    for name, heard, reset in (("server PCM + reset", theirs.heard, True),
                               ("raw + reset", frames, True), ("raw", frames, False)):
        print(row(name, in_process(system, heard, reset), theirs, sent))
    d_in, snr_in = lag(np.concatenate(frames), np.concatenate(theirs.heard))
    exact_in = np.array_equal(np.concatenate(theirs.heard), opus_round_trip(frames))
    exact_out = np.array_equal(wire.audio[FRAME:], opus_round_trip(theirs.sent))
    print(f"Opus: an impulse comes out {opus_delay()} samples later; the server heard the input "
          f"{d_in} samples ({d_in / RATE * 1000:.1f} ms) later at {snr_in:.1f} dB SNR, "
          f"{'exactly' if exact_in else 'NOT exactly'} its Opus round trip")
    print(f"moshi-ws: returned {'exactly' if exact_out else 'NOT exactly'} the Opus round trip "
          f"of the server's PCM; traced pieces {'==' if wire.text == sent else '!='} the "
          f"server's ({len(wire.text)} frames); audio onset (0.01) "
          f"{_diff(audio_onset(wire.audio), audio_onset(theirs.audio), 1 / RATE)} vs the "
          "server's PCM")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--weights-seed", type=int, default=0)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        measure(args.seconds, args.weights_seed, Path(tmp))


if __name__ == "__main__":
    main()
