"""Are the speaker roles of a voiced dataset different voices?  Profiles per role and their
distances (``perf/voice_distinctness.py`` prints them for every English suite).

Roles and their speech
----------------------
Every bundled suite puts the ``user`` on channel 0 and the ``system`` on channel 1
(:data:`ROLE_CHANNELS`); a role's speech is its channel inside its aligned words' spans.  The
``background`` speaker's speech is each ``background_speech`` span of a record (channel, start,
end: :mod:`duplexeval.synth._build`) on its channel, less that channel's own words; it is scaled
to the level of the loudest role before measuring, since it is mixed in quieter.  Each role's
speech is pooled over the dialogues, at most :data:`MAX_ROLE_S` seconds.

Distinctness
------------
Per pair of roles: how far apart their median F0s are (semitones), the ratio of their median F2
(a formant, so the vocal tract) and the distance of their MFCC means
(:mod:`duplexeval.speech._voice_features`).  The MFCC distance is read against the *within-role*
distance: each role's speech split into its first and second half (the same voice saying
different things; a mean over half the speech varies more than one over all of it, so this
errs on the side of "not distinct").  Two roles count as distinct voices when they are
:data:`MIN_SEMITONES` or more apart in F0 and their MFCC distance is at least
:data:`MIN_MFCC_RATIO` times the larger within-role distance of the two: they differ more
than either voice differs from itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from duplexeval._audio import read_audio
from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.speech._voice_features import (
    VoiceProfile,
    mfcc_distance,
    mfcc_mean,
    semitones_apart,
    voice_profile,
)

__all__ = ["MAX_ROLE_S", "MIN_MFCC_RATIO", "MIN_SEMITONES", "ROLE_CHANNELS", "PairDistance",
           "RoleVoices", "dialogue_role_audio", "role_voices"]

ROLE_CHANNELS: dict[str, int] = {"user": 0, "system": 1}
MAX_ROLE_S = 120.0
MIN_SEMITONES = 2.0
"""Median F0s at least this far apart (semitones) tell two voices apart by pitch."""
MIN_MFCC_RATIO = 1.0
"""Between-role MFCC distance at least this many times the larger within-role distance."""


def _spans_audio(x: np.ndarray, rate: int, spans: Iterable[tuple[float, float]]) -> np.ndarray:
    pieces = [x[max(0, round(a * rate)):round(b * rate)] for a, b in spans if b > a]
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)


def _minus(span: tuple[float, float], holes: list[tuple[float, float]]
           ) -> list[tuple[float, float]]:
    """``span`` less every hole (sorted, possibly overlapping)."""
    out, start = [], span[0]
    for a, b in holes:
        if b <= start or a >= span[1]:
            continue
        if a > start:
            out.append((start, a))
        start = max(start, b)
    if start < span[1]:
        out.append((start, span[1]))
    return out


def dialogue_role_audio(dialogue: Dialogue, audio: np.ndarray, rate: int
                        ) -> dict[str, np.ndarray]:
    """Each role's speech in one dialogue (see the module docstring); ``audio`` is
    ``(samples, channels)``.  A role without speech is left out."""
    out: dict[str, np.ndarray] = {}
    for role, channel in ROLE_CHANNELS.items():
        spans = [(w.start, w.end) for w in dialogue.words_on(channel)]
        speech = _spans_audio(audio[:, channel], rate, spans)
        if len(speech):
            out[role] = speech
    pieces = []
    for b in dialogue.extra.get("background_speech") or []:
        channel = int(b["channel"])
        words = [(w.start, w.end) for w in dialogue.words_on(channel)]
        kept = _minus((float(b["start"]), float(b["end"])), words)
        pieces.append(_spans_audio(audio[:, channel], rate, kept))
    if pieces and sum(len(p) for p in pieces):
        out["background"] = np.concatenate(pieces)
    return out


@dataclass(frozen=True)
class PairDistance:
    """Two roles compared: F0 semitones apart, F2 ratio (first / second), MFCC distance."""

    roles: tuple[str, str]
    semitones: float | None
    f2_ratio: float | None
    mfcc: float
    distinct: bool

    def to_json(self) -> dict[str, Any]:
        return {"roles": list(self.roles),
                "semitones": None if self.semitones is None else round(self.semitones, 2),
                "f2_ratio": None if self.f2_ratio is None else round(self.f2_ratio, 3),
                "mfcc": round(self.mfcc, 3), "distinct": self.distinct}


@dataclass(frozen=True)
class RoleVoices:
    """Per role its profile and within-role MFCC distance; per pair of roles its distance."""

    profiles: Mapping[str, VoiceProfile]
    within: Mapping[str, float]
    pairs: tuple[PairDistance, ...]

    @property
    def all_distinct(self) -> bool:
        """Every pair of roles is distinct (see the module docstring)."""
        return all(p.distinct for p in self.pairs)

    def to_json(self) -> dict[str, Any]:
        return {"profiles": {r: p.to_json() for r, p in self.profiles.items()},
                "within_mfcc": {r: round(d, 3) for r, d in self.within.items()},
                "pairs": [p.to_json() for p in self.pairs], "all_distinct": self.all_distinct}


def _pooled(dataset: Dataset) -> tuple[dict[str, np.ndarray], int]:
    pooled: dict[str, list[np.ndarray]] = {}
    rate = 0
    for dialogue in dataset.dialogues:
        if dialogue.audio is None:
            continue
        x, rate = read_audio(dialogue.audio.path)
        for role, speech in dialogue_role_audio(dialogue, x, rate).items():
            have = sum(len(p) for p in pooled.get(role, []))
            if have < MAX_ROLE_S * rate:
                pooled.setdefault(role, []).append(speech)
    return {r: np.concatenate(p)[:round(MAX_ROLE_S * rate)] for r, p in pooled.items()}, rate


def role_voices(dataset: Dataset) -> RoleVoices:
    """The roles of a voiced, aligned dataset measured and compared (module docstring)."""
    speech, rate = _pooled(dataset)
    loudest = max((float(np.max(np.abs(s))) for s in speech.values()), default=0.0)
    if "background" in speech and np.max(np.abs(speech["background"])) > 0:
        speech["background"] = speech["background"] * (
            loudest / float(np.max(np.abs(speech["background"]))))
    profiles = {r: voice_profile(s, rate) for r, s in speech.items()}
    within = {}
    for role, s in speech.items():
        half = len(s) // 2
        within[role] = mfcc_distance(mfcc_mean(s[:half], rate), mfcc_mean(s[half:], rate))
    pairs = []
    for a, b in itertools.combinations(profiles, 2):
        pa, pb = profiles[a], profiles[b]
        tones = (semitones_apart(pa.f0_hz, pb.f0_hz)
                 if pa.f0_hz is not None and pb.f0_hz is not None else None)
        f2a, f2b = pa.formants_hz[1], pb.formants_hz[1]
        ratio = f2a / f2b if f2a is not None and f2b is not None else None
        mfcc = mfcc_distance(pa.mfcc, pb.mfcc)
        bar = MIN_MFCC_RATIO * max(within[a], within[b])
        distinct = tones is not None and tones >= MIN_SEMITONES and mfcc >= bar
        pairs.append(PairDistance((a, b), tones, ratio, mfcc, distinct))
    return RoleVoices(profiles, within, tuple(pairs))
