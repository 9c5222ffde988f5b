"""Applying conditions to what a system hears, in a fixed order, seeded.

Order (whatever the order on the command line), from the talker to the system::

    speed -> reverb -> noise -> babble -> echo -> gain -> clip -> network
    talker   room      at the microphone  self-   mic     con-    transport
                                          bleed   level   verter

``speed`` changes the talker, ``reverb`` is the room between talker and microphone, ``noise``
and ``babble`` are added at the microphone (not reverberated), ``echo`` adds the system's own
output, delayed (online, in the run's frame loop: :mod:`duplexeval.conditions._echo`),
``gain`` sets the level of all of it and ``clip`` clips at the converter's full scale;
``network`` loses and delays the frames on their way (the real-time driver:
:mod:`duplexeval.conditions._network`).  Conditions of the same kind apply in the order given.

Stages: :func:`apply_conditions` applies the *channel stage* to a whole user channel: every
kind but ``echo`` and ``network`` when there is no echo, else only the kinds before ``echo``
(:func:`channel_stage`); with an echo the kinds after it (:func:`mic_stage`) apply frame by
frame to what the system hears (:func:`mic_chain`), which for ``gain`` and ``clip`` (sample by
sample) is the same as applying them to the whole channel.

Seeds: the random draws of a dialogue's user channel (noise, babble) come from one
``numpy.random.default_rng(seed)`` with the seed the caller derives (the run derives it from
the run seed and the dialogue and channel), so a rerun hears the same input.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from duplexeval.conditions._spec import Condition

__all__ = ["APPLY_ORDER", "apply_conditions", "channel_stage", "colored_noise", "mic_chain",
           "mic_stage", "only", "ordered"]

APPLY_ORDER = ("speed", "reverb", "noise", "babble", "echo", "gain", "clip", "network")
"""The order conditions compose in (module docstring)."""


def ordered(conditions: Sequence[Condition]) -> list[Condition]:
    """``conditions`` in :data:`APPLY_ORDER` (stable within a kind)."""
    return sorted(conditions, key=lambda c: APPLY_ORDER.index(c.kind))


def only(conditions: Sequence[Condition], kind: str) -> Condition | None:
    """The condition of ``kind`` (``echo``, ``network``: at most one each), else ``None``."""
    found = [c for c in conditions if c.kind == kind]
    return found[0] if found else None


def channel_stage(conditions: Sequence[Condition]) -> list[Condition]:
    """What applies to a whole user channel before the run (module docstring), in order."""
    chosen = ordered(conditions)
    if only(chosen, "echo") is not None:
        return chosen[:[c.kind for c in chosen].index("echo")]
    return [c for c in chosen if c.kind != "network"]


def mic_stage(conditions: Sequence[Condition]) -> tuple[Condition, ...]:
    """With an echo: the conditions after it (gain, clip) that apply to each heard frame;
    without one, none (they are in the channel stage)."""
    chosen = ordered(conditions)
    if only(chosen, "echo") is None:
        return ()
    after = chosen[[c.kind for c in chosen].index("echo") + 1:]
    return tuple(c for c in after if c.kind != "network")


def colored_noise(n: int, color: str, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of zero-mean noise whose power spectral density falls as 1/f**e
    (white e=0, pink e=1, brown e=2), shaped in the frequency domain; unit RMS (float64)."""
    if n == 0:
        return np.zeros(0)
    exponent = {"white": 0.0, "pink": 1.0, "brown": 2.0}[color]
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n)
    f[0] = f[1] if n > 1 else 1.0
    spectrum *= f ** (-exponent / 2)
    spectrum[0] = 0.0
    x = np.fft.irfft(spectrum, n)
    rms = float(np.sqrt(np.mean(x ** 2)))
    return x / rms if rms > 0 else x


def _at_snr(x: np.ndarray, noise: np.ndarray, snr: float) -> np.ndarray:
    """``x`` plus unit-RMS ``noise`` scaled so that 10*log10(P(x) / P(noise)) = ``snr``, the
    powers over the whole of ``x``; a silent ``x`` has no SNR to set and stays silent."""
    power = float(np.mean(x.astype(np.float64) ** 2)) if len(x) else 0.0
    if power == 0.0:
        return x
    scale = np.sqrt(power / 10 ** (snr / 10))
    return (x + scale * noise).astype(np.float32)


def _needs_rate(c: Condition, rate: int | None) -> int:
    if rate is None:
        raise ValueError(f"the {c.kind} condition needs the sample rate")
    return rate


def _one(y: np.ndarray, c: Condition, rng: np.random.Generator, rate: int | None,
         segments: Sequence[tuple[int, int]] | None) -> np.ndarray:
    if c.kind in ("noise", "babble") and not np.any(y):
        return y  # silent: no SNR to set, and no draw spent on it
    if c.kind == "noise":
        return _at_snr(y, colored_noise(len(y), str(c.get("color")), rng), c.number("snr"))
    if c.kind == "babble":
        from duplexeval.conditions._babble import babble

        noise = babble(len(y), _needs_rate(c, rate), int(c.number("talkers")), rng)
        return _at_snr(y, noise, c.number("snr"))
    if c.kind == "reverb":
        from duplexeval.conditions._reverb import reverberate

        return reverberate(y, c.number("rt60"), _needs_rate(c, rate))
    if c.kind == "speed":
        from duplexeval.conditions._speed import speed_perturb

        return speed_perturb(y, c.number("factor"), segments)
    return mic_chain(y, (c,))


def mic_chain(x: np.ndarray, conditions: Sequence[Condition]) -> np.ndarray:
    """``x`` under the sample-by-sample conditions ``gain`` and ``clip``, in the order given
    (other kinds are not sample by sample and are left out); float32."""
    y = np.asarray(x, dtype=np.float32)
    for c in conditions:
        if c.kind == "gain":
            y = (y * 10 ** (c.number("db") / 20)).astype(np.float32)
        elif c.kind == "clip":
            level = c.number("level")
            y = np.clip(y, -level, level).astype(np.float32)
    return y


def apply_conditions(x: np.ndarray, conditions: Sequence[Condition], seed: int, *,
                     rate: int | None = None,
                     segments: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
    """``x`` (mono float32 at ``rate`` Hz) under the channel stage of ``conditions``
    (:func:`channel_stage`, in :data:`APPLY_ORDER`); a new array.  ``rate`` is needed by
    babble and reverb; ``segments`` (``[start, end)`` samples) are the speech that ``speed``
    perturbs (default the whole channel)."""
    rng = np.random.default_rng(seed)
    y = np.asarray(x, dtype=np.float32).copy()
    for c in channel_stage(conditions):
        y = _one(y, c, rng, rate, segments)
    return y
