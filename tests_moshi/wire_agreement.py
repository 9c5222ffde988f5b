"""In process and over the wire: the ``moshi`` system and ``moshi-ws`` against moshi's own
``moshi.server`` (:mod:`served`, with the probe of :mod:`moshi_server_cpu`), on one tiny
random checkpoint, greedy, on the same input, frame by frame (80 ms, 1920 samples at 24 kHz).

What differs between the two paths, and where (frame ``t`` = the LM's step ``t``; both produce
nothing at step 0 and the text and audio of frame ``t`` at step ``t`` from step 1 on; the
lockstep client puts the server's step ``t`` output on its frame ``t``)::

    client PCM ─► Opus ─► server PCM (156 samples later, lossy) ─► Mimi encoder ─► user codes ─► LM
                                            the server resets Mimi after frame 0 ─┘
    LM tokens ─► Mimi decoder ─► server PCM ─► Opus ─► client PCM (156 samples later, lossy)

* **Opus, in**: the server hears the client's frame through Opus: coded (lossy) and delayed by
  the encoder's look-ahead, 156 samples (6.5 ms), as sphn's reader does not drop the pre-skip.
* **The first frame**: the server encodes input frame 0, then resets Mimi's streaming state
  (its comment: the first frame has "a specific structure" from the left padding), so frame 1
  is encoded as if it were the first; in process the encoder runs on without a reset.  Frame 0
  still feeds the LM's step 0 on both paths.
* **Opus, out**: the client hears the server's frame through Opus: lossy, 156 samples later.
  The tiny random Mimi decoder's output is mostly a constant offset (about 1.07), which Opus
  does not carry (it codes from 20 Hz up): the client hears the small rest (and the in-process
  system clamps its output to [-1, 1]).  Both Opus directions are deterministic: what the
  server heard is exactly the client's frames through a fresh writer and reader, and what the
  client heard exactly the server's PCM through them.
* **The acoustic delay** (1 frame: a frame's acoustic codes are sampled one step after its text
  and semantic code) is the LM's on both paths (the same token cache, the same step).
* **Warm-up**: the server runs 4 silent frames through Mimi and the LM at start and resets both
  per connection; the LM's reset zeroes its offsets, and every cache position is written before
  it is read (or replaced by the initial token), so nothing of the warm-up reaches a session.
* **CPU kernels**: oneDNN's instruction set is fixed when torch loads; duplexeval pins it
  (``ONEDNN_MAX_CPU_ISA=AVX2``, set when ``duplexeval.speech`` is imported) and a server started
  from a process inherits the variable, so a process whose torch loaded before that import
  runs other kernels than its server: Mimi's PCM then differs by one ulp on a few frames (the
  tokens did not).  The moshi tests and the perf script import it before torch.
* **dtype**: the server runs the LM in bfloat16 (no float32 option); the in-process system here
  is loaded from the same files with ``dtype=bfloat16`` and greedy (``use_sampling=0``), the
  server with ``lm_gen_config = {"use_sampling": false}``, both with one CPU thread.

So: fed the very PCM the server's Mimi encoded, with Mimi reset after frame 0 as the server
does, the in-process system must give the server's user codes, text and audio tokens and
(pre-Opus) PCM exactly; and ``moshi-ws`` must trace exactly the server's text pieces on their
frames.  On the raw input, the LM's inputs differ from the first frame whose user codes differ
(Opus, the reset); the text and audio tokens are identical on every frame before it (the LM is
causal) and may differ anywhere after (a random model amplifies any change).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FRAME = 1920
RATE = 24000
OPUS_LOOKAHEAD = 156
"""Samples (6.5 ms at 24 kHz) by which sphn's Opus delays audio, each way: where an impulse
comes out (312 samples at Opus's 48 kHz, its usual pre-skip)."""


def user_input(seconds: float = 6.0, seed: int = 0) -> np.ndarray:
    """The user channel both paths hear (24 kHz float32, whole frames): two voiced-like bursts
    (12 harmonics of 150 Hz, then 220 Hz, amplitude 1/h, in a little seeded noise)::

        0.0   0.5              2.0          3.5           4.5              6.0 s
        |     |== 150 Hz, 0.3 ==|            |== 220 Hz ==|                  |
    """
    rng = np.random.default_rng(seed)
    x = np.zeros(round(seconds * RATE) // FRAME * FRAME, dtype=np.float32)
    for start, end, f0 in ((0.5, 2.0, 150.0), (3.5, 4.5, 220.0)):
        a, b = round(start * RATE), round(min(end, seconds) * RATE)
        t = np.arange(b - a) / RATE
        tone = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 13))
        burst = 0.1 * tone + 0.01 * rng.standard_normal(b - a)
        x[a:b] = burst[:len(x[a:b])]
    return x


def opus_round_trip(frames: list[np.ndarray]) -> np.ndarray:
    """``frames`` through a fresh sphn Opus stream writer and reader at 24 kHz (what the server
    and the ``moshi-ws`` client make per connection), decoded and concatenated."""
    import sphn

    writer, reader = sphn.OpusStreamWriter(RATE), sphn.OpusStreamReader(RATE)
    return np.concatenate([np.asarray(reader.append_bytes(writer.append_pcm(frame)),
                                      dtype=np.float32).reshape(-1) for frame in frames])


def opus_delay() -> int:
    """Where an impulse comes out of :func:`opus_round_trip` (samples after it went in)."""
    x = np.zeros(10 * FRAME, dtype=np.float32)
    x[5 * FRAME] = 0.5
    y = opus_round_trip([x[k:k + FRAME] for k in range(0, len(x), FRAME)])
    return int(np.argmax(np.abs(y))) - 5 * FRAME


def served_args(checkpoint: list[str]) -> dict[str, str]:
    """``moshi`` system arguments that load the files the server was given (the same
    weights, config and tokenizer), as the server runs them: bfloat16, greedy, CPU."""
    flags = dict(zip(checkpoint[::2], checkpoint[1::2], strict=True))
    return {"moshi_weight": flags["--moshi-weight"], "mimi_weight": flags["--mimi-weight"],
            "tokenizer": flags["--tokenizer"], "config": flags["--config-path"],
            "dtype": "bfloat16", "use_sampling": "0", "device": "cpu"}


def _pcm(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)


@dataclass
class Frames:
    """One path's frames: the user codes the LM got, the text + audio tokens it returned
    (``None`` at step 0), the text shown per frame and the output audio."""

    codes: list[list[int]] = field(default_factory=list)
    tokens: list[list[int] | None] = field(default_factory=list)
    text: dict[int, str] = field(default_factory=dict)
    """Frame -> piece, for frames with a piece."""
    audio: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    heard: list[np.ndarray] = field(default_factory=list)
    """The input frames its Mimi encoded (server: decoded from Opus)."""
    sent: list[np.ndarray] = field(default_factory=list)
    """Server: the PCM frames it handed its Opus writer (steps 1 on, not clamped)."""


def probed(probe: Path, frames: int) -> Frames:
    """The server's side of the last connection in ``probe``: its first ``frames`` steps (the
    lockstep client's flush frame is left out)."""
    lines = [json.loads(x) for x in probe.read_text(encoding="utf-8").splitlines()]
    start = max(i for i, r in enumerate(lines) if r["call"] == "lm_reset")
    out = Frames()
    decoded = []
    for r in lines[start + 1:]:
        if r["call"] == "encode":
            out.heard.append(_pcm(r["pcm"]))
        elif r["call"] == "step":
            out.codes.append(r["codes"])
            out.tokens.append(r["tokens"])
        elif r["call"] == "decode":
            decoded.append(_pcm(r["pcm"]))
    out.heard, out.codes, out.tokens = out.heard[:frames], out.codes[:frames], out.tokens[:frames]
    out.sent = decoded[:frames - 1]
    out.audio = np.concatenate([np.zeros(FRAME, np.float32), *out.sent])
    return out


def server_text(server: Frames, tokenizer: Any, silent: tuple[int, ...]) -> dict[int, str]:
    """The pieces the server sends for its text tokens, by frame: each token but the padding
    ones (``silent``; the server skips ids 0 and 3, the tiny tokenizer's and Moshi's
    end-of-padding and padding ids) as its SentencePiece piece with "▁" as a space."""
    return {t: str(tokenizer.id_to_piece(tok[0])).replace("\u2581", " ")
            for t, tok in enumerate(server.tokens) if tok is not None and tok[0] not in silent}


def in_process(system: Any, frames: list[np.ndarray], reset_after_first: bool) -> Frames:
    """The ``moshi`` system's session on ``frames`` (its LM's user codes and tokens recorded
    from its stepper); ``reset_after_first``: reset its Mimi streaming state after frame 0, as
    the server does (``reset_streaming``)."""
    from duplexeval.systems import SessionSpec

    session = system.open(SessionSpec(sample_rate=RATE, seed=0))
    out = Frames(heard=list(frames))
    stepper = session.stepper
    original = stepper.step

    def recording(user_codes: Any) -> Any:
        result = original(user_codes)
        out.codes.append([int(c) for c in user_codes[0, :, 0]])
        out.tokens.append([int(c) for c in result.tokens[0]] if bool(result.valid[0]) else None)
        return result

    stepper.step = recording
    audio = []
    for t, frame in enumerate(frames):
        step = session.step(frame)
        audio.append(step.audio)
        if step.text:
            out.text[t] = step.text
        if t == 0 and reset_after_first:  # the server's own call, on the session's states
            session.codec.streams.bind()
            system.models().mimi.reset_streaming()
    session.close()
    out.audio = np.concatenate(audio)
    return out


def over_the_wire(url: str, frames: list[np.ndarray]) -> Frames:
    """``moshi-ws`` (lockstep) on ``frames``: its output audio and traced text by frame."""
    from duplexeval.systems import SessionSpec
    from duplexeval.systems.adapters.moshi_ws import MoshiWsSystem

    session = MoshiWsSystem(url=url).open(SessionSpec(sample_rate=RATE, seed=0))
    audio = [session.step(frame).audio for frame in frames]
    trace = session.trace()
    session.close()
    out = Frames(audio=np.concatenate(audio))
    for entry in trace["text"]:
        frame = int(entry["sample"]) // FRAME
        out.text[frame] = out.text.get(frame, "") + str(entry["text"])
    return out


def lag(a: np.ndarray, b: np.ndarray, most: int = 400) -> tuple[int, float]:
    """The delay (samples, ``0..most``) at which ``b`` best matches ``a`` and the SNR (dB) of
    ``b`` against ``a`` at that delay."""
    n = min(len(a), len(b)) - most
    scores = [float(np.dot(a[:n], b[d:d + n])) for d in range(most + 1)]
    d = int(np.argmax(scores))
    err = b[d:d + n] - a[:n]
    return d, 10 * np.log10(float(np.sum(a[:n] ** 2)) / max(float(np.sum(err ** 2)), 1e-30))


def agreement(a: list[Any], b: list[Any]) -> tuple[int, int]:
    """(frames equal, frames compared) of two per-frame lists."""
    n = min(len(a), len(b))
    return sum(a[t] == b[t] for t in range(n)), n


def first_difference(a: list[Any], b: list[Any]) -> int | None:
    """The first frame where two per-frame lists differ (``None``: nowhere)."""
    return next((t for t in range(min(len(a), len(b))) if a[t] != b[t]), None)


def text_onset(text: dict[int, str]) -> int | None:
    """The first frame with a piece."""
    return min(text) if text else None


def audio_onset(x: np.ndarray, level: float = 0.01) -> int | None:
    """The first sample louder than ``level``."""
    loud = np.flatnonzero(np.abs(x) > level)
    return int(loud[0]) if len(loud) else None
