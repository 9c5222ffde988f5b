"""The clip bank: short recorded (synthesized) utterances that the ``scripted`` system speaks.

The bank ships as package data in ``duplexeval/speech/clips/``: 16 kHz mono 16-bit FLAC files
and a manifest ``clips.json`` (made once by ``scripts/make_clip_bank.py``).  Every file is
checked against the SHA-256 in the manifest when the bank is loaded.  Nothing here needs a TTS
engine or the network.

Units: durations in seconds, lengths in samples, sample rates in Hz; audio is float32 mono in
[-1, 1].
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np
import soxr

from duplexeval._audio import read_audio
from duplexeval.errors import DuplexevalError

__all__ = ["KINDS", "Clip", "ClipBank", "ClipBankInvalid", "fill_span"]

KINDS = ("utterance", "backchannel")
MANIFEST = "clips.json"
FADE_S = 0.005  # fade-in/out length of fill_span, seconds
SPEECH_FRAME_S = 0.005  # frame of the speech-interval rule, seconds
SPEECH_THRESHOLD_DB = 40.0  # a frame is speech within this many dB of the clip's loudest frame
SPEECH_BRIDGE_S = 0.05  # silences shorter than this inside a clip are part of the speech


class ClipBankInvalid(DuplexevalError):
    """The clip folder is unusable: manifest missing or malformed, a file missing or altered."""


@dataclass(frozen=True, eq=False)
class Clip:
    """One clip: ``audio`` is float32 mono in [-1, 1] at ``sample_rate`` Hz (read-only)."""

    id: str
    language: str
    text: str
    kind: str
    audio: np.ndarray
    sample_rate: int
    _resampled: dict[int, np.ndarray] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _speech: dict[int, tuple[tuple[int, int], ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return len(self.audio) / self.sample_rate

    def speech_samples(self, sample_rate: int | None = None) -> tuple[tuple[int, int], ...]:
        """Where the clip's speech is: ``[start, end)`` sample intervals at ``sample_rate``
        (default the clip's own rate), sorted and disjoint.

        The rule, on the clean clip itself: 5 ms frames whose RMS is within 40 dB of the clip's
        loudest frame are speech; silences under 50 ms between them are bridged.  It depends
        only on the clip, so a system that plays clips can log its true speech exactly.
        """
        rate = sample_rate or self.sample_rate
        cached = self._speech.get(rate)
        if cached is None:
            hop = max(1, round(SPEECH_FRAME_S * self.sample_rate))
            n = len(self.audio) // hop
            frames = self.audio[:n * hop].reshape(n, hop).astype(np.float64)
            rms = np.sqrt(np.mean(frames**2, axis=1))
            active = rms > rms.max() * 10 ** (-SPEECH_THRESHOLD_DB / 20) if n else rms > 0
            bounds = np.flatnonzero(np.diff(np.concatenate([[0], active.astype(np.int8), [0]])))
            runs: list[list[int]] = []
            bridge = round(SPEECH_BRIDGE_S * self.sample_rate)
            for a, b in zip(bounds[::2] * hop, bounds[1::2] * hop, strict=True):
                if runs and a - runs[-1][1] < bridge:
                    runs[-1][1] = int(b)
                else:
                    runs.append([int(a), int(b)])
            scale = rate / self.sample_rate
            cached = tuple((round(a * scale), round(b * scale)) for a, b in runs)
            self._speech[rate] = cached
        return cached

    def resampled(self, sample_rate: int) -> np.ndarray:
        """The audio at ``sample_rate`` Hz (float32, read-only; computed once per rate).

        Its length is ``round(len(audio) * sample_rate / self.sample_rate)`` samples, within one.
        """
        if sample_rate <= 0:
            raise ValueError(f"sample_rate must be positive, got {sample_rate}")
        if sample_rate == self.sample_rate:
            return self.audio
        cached = self._resampled.get(sample_rate)
        if cached is None:
            cached = soxr.resample(self.audio, self.sample_rate, sample_rate).astype(np.float32)
            cached.setflags(write=False)
            self._resampled[sample_rate] = cached
        return cached


class ClipBank:
    """The clips of one folder, by language and kind; build it with :meth:`ClipBank.load`."""

    def __init__(self, clips: list[Clip], sample_rate: int, generator: dict[str, Any]) -> None:
        self.sample_rate = sample_rate  # Hz, of every clip
        self.generator = generator  # the TTS packages that made the clips (from the manifest)
        self._by_id = {clip.id: clip for clip in sorted(clips, key=lambda c: c.id)}

    @classmethod
    def load(cls, folder: Path | None = None) -> ClipBank:
        """Load and verify the bank in ``folder`` (default: the packaged one, loaded once).

        Raises :class:`ClipBankInvalid` naming the file when a file is missing, does not match
        its SHA-256 or sample count, or the manifest is malformed.
        """
        if folder is None:
            return _default_bank()
        return _load_folder(folder, str(folder))

    def __len__(self) -> int:
        return len(self._by_id)

    def languages(self) -> list[str]:
        """The language codes present, sorted (e.g. ``["en", "ja"]``)."""
        return sorted({clip.language for clip in self._by_id.values()})

    def clips(self, language: str, kind: str | None = None) -> list[Clip]:
        """The clips of ``language`` (of ``kind`` if given), sorted by id."""
        self._check_language(language)
        if kind is not None and kind not in KINDS:
            raise ValueError(f"unknown clip kind {kind!r}; kinds: {', '.join(KINDS)}")
        return [c for c in self._by_id.values()
                if c.language == language and (kind is None or c.kind == kind)]

    def get(self, clip_id: str) -> Clip:
        """The clip with id ``clip_id``; KeyError if there is none."""
        try:
            return self._by_id[clip_id]
        except KeyError:
            raise KeyError(f"no clip {clip_id!r} in the clip bank") from None

    def pick(self, language: str, index: int, kind: str = "utterance") -> Clip:
        """Clip number ``index`` (modulo their count) of ``language`` and ``kind``, by id order.

        Deterministic: a caller drawing ``index`` from a seeded generator picks reproducibly.
        """
        candidates = self.clips(language, kind)
        if not candidates:
            raise ValueError(f"the clip bank has no {kind!r} clips for language {language!r}")
        return candidates[index % len(candidates)]

    def _check_language(self, language: str) -> None:
        available = self.languages()
        if language not in available:
            raise ValueError(
                f"no clips for language {language!r}; available: {', '.join(available)}")


def fill_span(clip_audio: np.ndarray, num_samples: int, sample_rate: int = 16_000) -> np.ndarray:
    """Speech exactly ``num_samples`` samples long, cut from the start of ``clip_audio``.

    A clip shorter than the span is repeated back to back (no gap).  The result fades in and out
    over 5 ms (and each repetition too) so that it starts and ends without a click;
    ``sample_rate`` (Hz) only sets the fade length.  Returns float32.
    """
    if num_samples < 0:
        raise ValueError(f"num_samples must be >= 0, got {num_samples}")
    audio = np.asarray(clip_audio, dtype=np.float32)
    if audio.ndim != 1 or len(audio) == 0:
        raise ValueError("clip_audio must be a non-empty 1-D array")
    if num_samples == 0:
        return np.zeros(0, dtype=np.float32)
    fade = round(FADE_S * sample_rate)
    if num_samples > len(audio):
        audio = _faded(audio, fade)
        audio = np.tile(audio, -(-num_samples // len(audio)))
    return _faded(audio[:num_samples], fade)


def _faded(audio: np.ndarray, fade: int) -> np.ndarray:
    """A copy of ``audio`` with linear fades of ``fade`` samples (at most half its length).

    The first and last samples become exactly 0.
    """
    out = np.array(audio, dtype=np.float32)
    n = min(fade, len(out) // 2)
    if n > 0:
        ramp = np.linspace(0.0, 1.0, n, endpoint=False, dtype=np.float32)
        out[:n] *= ramp
        out[-n:] *= ramp[::-1]
    return out


@functools.lru_cache(maxsize=1)
def _default_bank() -> ClipBank:
    folder = resources.files("duplexeval.speech").joinpath("clips")
    return _load_folder(folder, "duplexeval/speech/clips")


def _load_folder(folder: Traversable | Path, where: str) -> ClipBank:
    manifest = _read_manifest(folder, where)
    rate = manifest["sample_rate"]
    clips = [_load_clip(folder, where, entry, rate) for entry in manifest["clips"]]
    return ClipBank(clips, rate, manifest.get("generator", {}))


def _read_manifest(folder: Traversable | Path, where: str) -> dict[str, Any]:
    path = f"{where}/{MANIFEST}"
    try:
        manifest = json.loads(folder.joinpath(MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ClipBankInvalid(f"{path}: cannot read the clip manifest ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("version") != 1:
        raise ClipBankInvalid(f"{path}: not a version 1 clip manifest")
    if not isinstance(manifest.get("sample_rate"), int) or not isinstance(
            manifest.get("clips"), list):
        raise ClipBankInvalid(f"{path}: needs an integer 'sample_rate' and a list 'clips'")
    return manifest


def _load_clip(folder: Traversable | Path, where: str, entry: dict[str, Any], rate: int) -> Clip:
    try:
        name, digest = entry["file"], entry["sha256"]
        meta = (entry["id"], entry["language"], entry["text"], entry["kind"])
        expected_len = int(entry["num_samples"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ClipBankInvalid(f"{where}/{MANIFEST}: malformed clip entry {entry!r}") from exc
    path = f"{where}/{name}"
    try:
        data = folder.joinpath(name).read_bytes()
    except OSError as exc:
        raise ClipBankInvalid(f"{path}: clip file missing or unreadable ({exc})") from exc
    if hashlib.sha256(data).hexdigest() != digest:
        raise ClipBankInvalid(f"{path}: SHA-256 does not match the manifest (file altered)")
    audio, file_rate = read_audio(io.BytesIO(data))
    if file_rate != rate or audio.shape[1] != 1 or len(audio) != expected_len:
        raise ClipBankInvalid(f"{path}: expected mono {rate} Hz, {expected_len} samples; "
                              f"got {audio.shape[1]} channel(s), {file_rate} Hz, {len(audio)}")
    mono = np.ascontiguousarray(audio[:, 0])
    mono.setflags(write=False)
    return Clip(*meta, audio=mono, sample_rate=rate)
