"""Voices for synthesized dialogues chosen after reference speakers (``duplexeval data voices``).

The M3 paper (sec. 3.2.1, step 3) conditions a voice-cloning TTS on reference speech drawn at
random from the reference dialogues (CANDOR for English, MagicData for Japanese).  Offline,
without a cloning engine, each spec speaker gets a reference speaker and, from the voices of
the synthesizer's engine for the spec's language, the one closest to that speaker:

* **Reference speakers**: per channel of every dialogue of a reference dataset, the speaker
  named by the record's ``source.speakers`` (``corpus:speaker``, as the split uses; else
  ``source-id:channel``); their speech is the channel inside the aligned words' spans (the
  whole channel without words), at most :data:`MAX_SPEECH_S` seconds per speaker.
* **Profiles**: median F0 in Hz and the gender guessed from it
  (:mod:`duplexeval.speech._pitch`); a voice's profile comes from synthesizing
  :data:`SAMPLE_TEXT` of its language.
* **Draw**: spec speaker ``s`` of spec ``d`` takes reference speaker number
  ``sha256("d:s") mod n`` in sorted order (the second speaker of a spec the next one if it
  would repeat the first): random-looking, the same on every machine.
* **Closest voice**: among the voices of the same guessed gender (all voices when there is
  none), the one nearest in log F0 (semitones); the second speaker of a spec avoids the first
  one's voice when another voice is left.

English has one bundled voice (piper ``joe``) and two derived from it (``joe-high``,
``joe-low``: :mod:`duplexeval.speech.engines._piper`); Japanese has openjtalk's ``mei``,
``mei-low`` and ``mei-high``.  A voice-cloning engine is a TTS backend like
any other (:data:`duplexeval.speech._tts.ENGINES`): one that takes reference audio replaces this
choice.
"""

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from duplexeval._audio import read_audio
from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.speech._pitch import gender_of, median_f0
from duplexeval.speech._tts import TtsEngine

__all__ = ["MAX_SPEECH_S", "SAMPLE_TEXT", "Profile", "assign_voices", "closest_voice",
           "speaker_profiles", "voice_profiles"]

MAX_SPEECH_S = 120.0
SAMPLE_TEXT = {
    "en": "It is a lovely day today. Shall we go for a walk in the park after lunch?",
    "ja": "今日はとても良い天気ですね。お昼ご飯のあとで、公園に散歩に行きましょうか。",
}
"""What a voice says to measure its F0."""


@dataclass(frozen=True)
class Profile:
    """A speaker's or a voice's median F0 (Hz) and guessed gender."""

    name: str
    f0_hz: float
    gender: str

    def to_json(self) -> dict[str, Any]:
        """``{"name", "f0_hz" (0.1 Hz), "gender"}``."""
        return {"name": self.name, "f0_hz": round(self.f0_hz, 1), "gender": self.gender}


def voice_profiles(engine: TtsEngine) -> list[Profile]:
    """Every voice of ``engine`` measured on :data:`SAMPLE_TEXT` of its language."""
    text = SAMPLE_TEXT.get(engine.language, SAMPLE_TEXT["en"])
    out = []
    for voice in engine.voices():
        utt = engine.synthesize(text, voice)
        f0 = median_f0(utt.audio, utt.sample_rate)
        if f0 is not None:
            out.append(Profile(voice, f0, gender_of(f0)))
    return out


def _channel_speaker(dialogue: Dialogue, channel: int) -> str:
    source = dialogue.extra.get("source")
    source = source if isinstance(source, Mapping) else {}
    speakers = source.get("speakers")
    if isinstance(speakers, Sequence) and not isinstance(speakers, str) and \
            len(speakers) > channel:
        return f"{source.get('corpus', '')}:{speakers[channel]}"
    return f"{source.get('id', dialogue.id)}:{channel}"


def _speech(dialogue: Dialogue, x: np.ndarray, rate: int, channel: int) -> np.ndarray:
    words = dialogue.words_on(channel) if dialogue.words else []
    if not words:
        return x[:, channel]
    return np.concatenate([x[int(w.start * rate): int(w.end * rate), channel] for w in words])


def speaker_profiles(dataset: Dataset) -> list[Profile]:
    """The reference speakers of ``dataset`` (see the module docstring), sorted by name; a
    speaker without voiced speech is left out."""
    pooled: dict[str, list[np.ndarray]] = {}
    rates: dict[str, int] = {}
    for dialogue in dataset.dialogues:
        if dialogue.audio is None:
            continue
        x, rate = read_audio(dialogue.audio.path)
        for channel in range(min(2, x.shape[1])):
            name = _channel_speaker(dialogue, channel)
            have = sum(len(a) for a in pooled.get(name, [])) / rate
            if have < MAX_SPEECH_S and rates.setdefault(name, rate) == rate:
                pooled.setdefault(name, []).append(_speech(dialogue, x, rate, channel))
    out = []
    for name in sorted(pooled):
        audio = np.concatenate(pooled[name])[: int(MAX_SPEECH_S * rates[name])]
        f0 = median_f0(audio, rates[name])
        if f0 is not None:
            out.append(Profile(name, f0, gender_of(f0)))
    return out


def closest_voice(f0: float, voices: Sequence[Profile], avoid: str | None = None) -> Profile:
    """The voice of the same guessed gender nearest in log F0 (see the module docstring)."""
    if not voices:
        raise ValueError("no voice to choose from")
    same = [v for v in voices if v.gender == gender_of(f0)] or list(voices)
    other = [v for v in same if v.name != avoid] or same
    return min(other, key=lambda v: (abs(math.log2(v.f0_hz / f0)), v.name))


def _draw(spec_id: str, speaker_id: str, count: int) -> int:
    digest = hashlib.sha256(f"{spec_id}:{speaker_id}".encode()).hexdigest()
    return int(digest, 16) % count


def assign_voices(specs: Sequence[dict[str, Any]], speakers: Sequence[Profile],
                  voices: Sequence[Profile]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Specs with each speaker's ``voice`` set, and one record per spec speaker (spec, speaker,
    reference speaker and F0, voice and F0); the input specs are not modified."""
    if not speakers:
        raise ValueError("no reference speaker with voiced speech")
    out, records = [], []
    for spec in specs:
        new = copy.deepcopy(spec)
        taken: list[int] = []
        used: str | None = None
        for speaker in sorted(new["speakers"], key=lambda s: s["channel"]):
            k = _draw(spec["id"], speaker["id"], len(speakers))
            if k in taken and len(speakers) > 1:
                k = (k + 1) % len(speakers)
            taken.append(k)
            ref = speakers[k]
            voice = closest_voice(ref.f0_hz, voices, avoid=used)
            used = voice.name
            speaker["voice"] = voice.name
            records.append({"spec": spec["id"], "speaker": speaker["id"],
                            "reference": ref.to_json(), "voice": voice.to_json()})
        out.append(new)
    return out, records
