"""What a session is fed, frame by frame: the frame grid of a pass, its native-rate input
streams, and what it heard under the run's online conditions.

Frame ``k`` of a pass starting at dialogue time ``T0`` covers ``[T0 + k*F/sr, T0 +
(k+1)*F/sr)`` at the system's native rate ``sr`` (:class:`Grid`; see
:mod:`duplexeval.runs._driver`).  The acoustic conditions of the channel stage are already in
the dialogue audio (:func:`duplexeval.runs._units.conditioned_audio`); two act here, online:

* ``echo``: the session hears at frame ``k`` its own output from ``delay`` before, scaled
  (:class:`~duplexeval.conditions._echo.Mic`), then the mic-side gain and clip;
* ``network``: a wall-clock session's real-time driver loses and delays frames
  (:mod:`duplexeval.conditions._network`); the frames it lost are silence in what it heard.

With either, the sample wav's user channel is what the session heard (:meth:`Feed.stream`),
resampled to the dataset rate, instead of the dataset's (conditioned) user channel.

A sample's user input ends at its :class:`Cut`: silence from there (M3's muting, a silent
counterfactual twin); a twin whose act is replaced by noise hears, over the act's span, the
user's own audio with a random sign per sample (:func:`signal_correlated_noise`, made at the
dataset rate and resampled like the channel itself, so the saved user channel is what the
session heard).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import soxr

from duplexeval.conditions import Condition
from duplexeval.conditions._apply import mic_stage, only
from duplexeval.conditions._echo import EchoLine, Mic, echo_problem
from duplexeval.data._dialogue import Dialogue, Word
from duplexeval.systems._base import Capabilities, ClockKind, Forced

__all__ = ["Conditions", "Cut", "DialogueAudio", "Feed", "Grid", "Inputs", "concat",
           "conditions_problem", "signal_correlated_noise", "slice_padded", "words_by_frame"]

Conditions = tuple[Condition, ...]
"""The run's acoustic conditions (echo and network act here; the rest are in the audio)."""


def conditions_problem(conditions: Conditions, capabilities: Capabilities) -> str | None:
    """Why a system with ``capabilities`` cannot run under ``conditions`` (``None``: it can):
    more than one ``echo`` or ``network``; an echo on a whole-file system (it is handed its
    input before it plays anything) or shorter than one frame
    (:func:`~duplexeval.conditions._echo.echo_problem`); a network on a system that is not
    wall-clock (only the real-time driver sends frames over one)."""
    for kind in ("echo", "network"):
        if sum(c.kind == kind for c in conditions) > 1:
            return f"at most one {kind} condition"
    echo = only(conditions, "echo")
    if echo is not None:
        if capabilities.clock is ClockKind.FILE:
            return "an echo acts frame by frame, and a whole-file system (clock file) is " \
                   "handed its whole input first"
        problem = echo_problem(echo, capabilities.sample_rate, capabilities.frame_size)
        if problem is not None:
            return problem
    if only(conditions, "network") is not None and capabilities.clock is not ClockKind.WALL:
        return f"a network condition acts in the real-time driver, and this system's clock " \
               f"is {capabilities.clock.value} (only wall-clock systems send over a network)"
    return None


def signal_correlated_noise(x: np.ndarray, seed: int) -> np.ndarray:
    """``x`` with a random sign per sample (Schroeder's signal-correlated noise, seeded): the
    same sample-wise energy envelope, onsets and level as ``x``, a flat spectrum, no speech."""
    signs = np.random.default_rng(seed).integers(0, 2, size=len(x), dtype=np.int8) * 2 - 1
    return (np.asarray(x, dtype=np.float32) * signs).astype(np.float32)


@dataclass(frozen=True)
class Cut:
    """How a sample's user input differs from the dialogue's: silent from native sample
    ``sample`` of its pass (frame 0 = sample 0) on; with a ``noise_seed``, the user's audio
    over the dialogue time span ``noise`` (onset, end; seconds), native samples
    ``noise_samples`` of the pass, is its :func:`signal_correlated_noise` with that seed."""

    sample: int
    noise_seed: int | None = None
    noise: tuple[float, float] = (0.0, 0.0)
    noise_samples: tuple[int, int] = (0, 0)


@dataclass
class DialogueAudio:
    """A dialogue's stereo audio at the dataset rate, with native-rate channels cached."""

    audio: np.ndarray
    """float32, shape (samples, 2)."""
    sample_rate: int
    _native: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    _noisy: dict[tuple[Any, ...], np.ndarray] = field(default_factory=dict)

    def channel(self, channel: int, rate: int) -> np.ndarray:
        """One channel resampled once (soxr) to ``rate``."""
        key = (channel, rate)
        if key not in self._native:
            x = np.ascontiguousarray(self.audio[:, channel], dtype=np.float32)
            if rate != self.sample_rate:
                x = soxr.resample(x, self.sample_rate, rate).astype(np.float32)
            self._native[key] = x
        return self._native[key]

    def noisy_channel(self, channel: int, rate: int, span: tuple[float, float],
                      seed: int) -> np.ndarray:
        """One channel with its samples over ``span`` (onset, end; s) replaced by their
        :func:`signal_correlated_noise` (``seed``), at the dataset rate, resampled (soxr) to
        ``rate``; cached per channel, rate, span and seed."""
        key = ("noise", channel, rate, span, seed)
        if key not in self._noisy:
            x = np.array(self.audio[:, channel], dtype=np.float32)
            a, b = (min(len(x), max(0, round(t * self.sample_rate))) for t in span)
            x[a:b] = signal_correlated_noise(x[a:b], seed)
            if rate != self.sample_rate:
                x = soxr.resample(x, self.sample_rate, rate).astype(np.float32)
            self._noisy[key] = x
        return self._noisy[key]


def slice_padded(x: np.ndarray, start: int, stop: int) -> np.ndarray:
    """``x[start:stop]`` zero-padded outside the array."""
    out = np.zeros(max(0, stop - start), dtype=np.float32)
    a, b = max(start, 0), min(stop, len(x))
    if b > a:
        out[a - start:b - start] = x[a:b]
    return out


class Grid:
    """The frame grid of a pass: start ``t0`` (s), native ``rate`` (Hz), ``frame`` samples."""

    def __init__(self, t0: float, rate: int, frame: int) -> None:
        self.t0, self.rate, self.frame = t0, rate, frame

    def floor_frame(self, t: float) -> int:
        return max(0, math.floor((t - self.t0) * self.rate / self.frame + 1e-9))

    def ceil_frame(self, t: float) -> int:
        return max(0, math.ceil((t - self.t0) * self.rate / self.frame - 1e-9))

    def sample(self, t: float) -> int:
        return round((t - self.t0) * self.rate)


def words_by_frame(words: Iterable[Word], channel: int, grid: Grid) -> dict[int, str]:
    out: dict[int, list[str]] = {}
    for w in words:
        if w.channel == channel and w.start >= grid.t0:
            out.setdefault(grid.floor_frame(w.start), []).append(w.text)
    return {k: " ".join(v) for k, v in out.items()}


class Inputs:
    """Native-rate input streams of one pass, and the run's microphone (echo) when it has
    one and its network (wall-clock systems) when it has one."""

    def __init__(self, audio: DialogueAudio, dialogue: Dialogue, user: int, grid: Grid,
                 conditions: Conditions = ()) -> None:
        self.grid = grid
        self.audio, self.user_channel = audio, user
        self.user = audio.channel(user, grid.rate)
        self.reference = audio.channel(1 - user, grid.rate)
        self.offset = round(grid.t0 * grid.rate)
        self.words = words_by_frame(dialogue.words or (), 1 - user, grid)
        echo = only(conditions, "echo")
        self.mic = None if echo is None else Mic(echo, mic_stage(conditions), grid.rate)
        network = only(conditions, "network")
        self.network = network
        self.keeps_heard = echo is not None or network is not None
        """The saved user channel is what the session was fed (:class:`Feed`), not the
        dataset's conditioned channel: an echo or lost frames changed it."""

    def user_frame(self, k: int, cut: Cut | int | None = None) -> np.ndarray:
        """The user input of frame ``k``, ending at ``cut`` (a :class:`Cut`, or a native
        sample of the pass from which it is silent; ``None``: the dialogue's throughout)."""
        f = self.grid.frame
        start = self.offset + k * f
        x = slice_padded(self.user, start, start + f)
        if cut is None:
            return x
        if isinstance(cut, int):
            cut = Cut(cut)
        if cut.noise_seed is not None:
            a, b = (min(f, max(0, self.offset + n - start)) for n in cut.noise_samples)
            if b > a:
                noisy = self.audio.noisy_channel(self.user_channel, self.grid.rate, cut.noise,
                                                 cut.noise_seed)
                x[a:b] = slice_padded(noisy, start, start + f)[a:b]
        at = self.offset + cut.sample - start
        if at < f:
            x[max(0, at):] = 0.0
        return x

    def forced(self, k: int) -> Forced:
        f = self.grid.frame
        start = self.offset + k * f
        return Forced(slice_padded(self.reference, start, start + f), self.words.get(k, ""))


class Feed:
    """What one session stream hears, frame by frame from the pass's frame 0: the user input
    plus, with an echo, what it played delayed (:class:`~duplexeval.conditions._echo.Mic`);
    the heard frames are kept for the sample wav."""

    def __init__(self, inputs: Inputs, played: Iterable[np.ndarray] = (),
                 heard: Iterable[np.ndarray] = ()) -> None:
        self.inputs = inputs
        self.line = EchoLine(played) if inputs.mic is not None else None
        self.heard = list(heard)

    def frame(self, k: int, cut: Cut | int | None = None) -> np.ndarray:
        """The input of frame ``k`` (the user's ending at ``cut``, the echo never)."""
        x = self.inputs.user_frame(k, cut)
        if self.inputs.mic is not None and self.line is not None:
            x = self.inputs.mic.heard(x, k * self.inputs.grid.frame, self.line)
        self.heard.append(x)
        return x

    def played(self, out: np.ndarray) -> np.ndarray:
        """Record output frame ``out`` as played (the echo's source); returns it."""
        if self.line is not None:
            f = self.inputs.grid.frame
            self.line.append(slice_padded(np.asarray(out, dtype=np.float32), 0, f))
        return out

    def fork(self, k: int, played: list[np.ndarray]) -> Feed:
        """The feed of a continuation from frame ``k``: what this one heard and played
        before it."""
        return Feed(self.inputs, played[:k], self.heard[:k])

    def stream(self, trace: dict[str, Any]) -> np.ndarray | None:
        """The heard native-rate stream from frame 0 (``None`` when the saved user channel
        stays the dataset's), the frames a network lost (``trace``'s
        ``realtime.network.lost_frames``) zeroed: the session never received them."""
        if not self.inputs.keeps_heard:
            return None
        stream = concat(self.heard).copy()
        f = self.inputs.grid.frame
        lost = (trace.get("realtime") or {}).get("network", {}).get("lost_frames", [])
        for k in lost:
            stream[k * f:(k + 1) * f] = 0.0
        return stream


def concat(frames: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(frames) if frames else np.zeros(0, np.float32)


