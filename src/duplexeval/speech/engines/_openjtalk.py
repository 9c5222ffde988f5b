"""Japanese TTS with pyopenjtalk-plus: OpenJTalk front end + HTS engine, Mei voice, 48 kHz.

Voices: the package ships one HTS voice (``mei_normal``); pitch-shifted copies make distinct
speakers for a dialogue: ``mei`` (as is), ``mei-low`` (3 semitones down), ``mei-high`` (3 up).
A pitch shift leaves durations, and so word timing, unchanged.

Word timing
-----------
The text goes through the front end once (``run_frontend``: NJD word nodes), the full-context
labels are made from those nodes (``make_label``) and synthesized (``synthesize``), so audio and
words come from the same analysis.  Phoneme durations are the HTS engine's own state durations
for these labels, read through the HTS C API that pyopenjtalk's extension exports
(``HTS_Engine_generate_state_sequence_from_strings``, which skips parameter generation and
vocoding): frames per phoneme times the frame period (240 samples = 5 ms).  They add up to the
audio length exactly; when they do not (or the C API is not reachable), words are left empty.

Phonemes are grouped into morae (a mora ends with a vowel, ``N`` or ``cl``), morae into NJD
nodes by their ``mora_size``; ``pau`` / ``sil`` belong to no word.  The words are those of
:func:`duplexeval.speech._japanese.word_spans` (NJD words, kanji numerals regrouped, substrings of
the input, punctuation dropped); each is timed by the nodes that cover its characters.
"""

from __future__ import annotations

import ctypes
import threading
import warnings
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from duplexeval.speech._japanese import is_ignorable, normalized, normalized_key, word_spans
from duplexeval.speech._tts import TimedWord, TtsEngine, Utterance

__all__ = ["VOICES", "OpenJTalkEngine"]

VOICES: dict[str, float] = {"mei": 0.0, "mei-low": -3.0, "mei-high": 3.0}
"""Voice name -> pitch shift in semitones (``half_tone``) of the Mei voice."""
_VOWELS = frozenset("aiueoAIUEO") | {"N", "cl"}  # the phonemes that end a mora
_SILENT = frozenset({"sil", "pau"})
_ENGINE_BYTES = 1 << 16  # more than sizeof(HTS_Engine) (under 1 KiB in HTS engine API 1.10)
_LOOKAHEAD = 8  # NJD nodes searched to re-align text and nodes after a rewritten stretch


class OpenJTalkEngine(TtsEngine):
    """pyopenjtalk-plus (HTS, Mei voice); Japanese; 48 kHz; word timing from HTS durations."""

    name = "openjtalk"
    language = "ja"
    modules = ("pyopenjtalk",)
    distributions = ("pyopenjtalk-plus",)
    install_hint = "pip install 'duplexeval[tts]'"

    def __init__(self) -> None:
        self._require()
        self._timer: _HtsTimer | None = None
        self._timer_failed = False
        self._lock = threading.Lock()

    def voices(self) -> list[str]:
        return list(VOICES)

    def load(self) -> None:
        import pyopenjtalk

        pyopenjtalk.run_frontend("あ")  # loads the dictionary and the HTS voice
        self._durations_timer()

    def _parameters(self) -> dict[str, Any]:
        return {"half_tones": dict(VOICES), "voice_file": "mei_normal.htsvoice"}

    def _synthesize(self, text: str, voice: str, speed: float) -> Utterance:
        import pyopenjtalk

        nodes = pyopenjtalk.run_frontend(text)
        labels = pyopenjtalk.make_label(nodes)
        raw, rate = pyopenjtalk.synthesize(labels, speed=speed, half_tone=VOICES[voice])
        audio = np.clip(np.asarray(raw, dtype=np.float64) / 32768.0, -1.0, 1.0)
        audio = audio.astype(np.float32)
        words: tuple[TimedWord, ...] = ()
        timer = self._durations_timer()
        if timer is not None and labels:
            frames = timer.phoneme_frames(labels, speed)
            if frames is not None and sum(frames) * timer.frame_period == len(audio):
                bounds = np.concatenate([[0], np.cumsum(frames)]) * timer.frame_period
                words = _timed_words(text, nodes, labels, bounds / int(rate))
            else:
                warnings.warn("openjtalk: HTS durations do not match the audio; no word timing",
                              RuntimeWarning, stacklevel=3)
        return Utterance(audio=audio, sample_rate=int(rate), words=words)

    def _durations_timer(self) -> _HtsTimer | None:
        with self._lock:
            if self._timer is None and not self._timer_failed:
                try:
                    self._timer = _HtsTimer()
                except (OSError, AttributeError, RuntimeError) as exc:
                    self._timer_failed = True
                    warnings.warn(f"openjtalk: HTS durations unavailable ({exc}); "
                                  "utterances will have no word timing", RuntimeWarning,
                                  stacklevel=4)
            return self._timer


class _HtsTimer:
    """Phoneme durations (frames) from a private HTS engine loaded with pyopenjtalk's voice,
    through the C functions that ``pyopenjtalk.htsengine`` exports."""

    def __init__(self) -> None:
        import pyopenjtalk
        from pyopenjtalk import htsengine

        lib = ctypes.CDLL(htsengine.__file__)
        size_t, ptr = ctypes.c_size_t, ctypes.c_void_p
        for fn, restype, argtypes in [
            ("HTS_Engine_initialize", None, [ptr]),
            ("HTS_Engine_load", ctypes.c_char, [ptr, ctypes.POINTER(ctypes.c_char_p), size_t]),
            ("HTS_Engine_set_speed", None, [ptr, ctypes.c_double]),
            ("HTS_Engine_generate_state_sequence_from_strings", ctypes.c_char,
             [ptr, ctypes.POINTER(ctypes.c_char_p), size_t]),
            ("HTS_Engine_get_total_state", size_t, [ptr]),
            ("HTS_Engine_get_nstate", size_t, [ptr]),
            ("HTS_Engine_get_state_duration", size_t, [ptr, size_t]),
            ("HTS_Engine_get_fperiod", size_t, [ptr]),
            ("HTS_Engine_refresh", None, [ptr]),
            ("HTS_Engine_clear", None, [ptr]),
        ]:
            getattr(lib, fn).restype = restype
            getattr(lib, fn).argtypes = argtypes
        self._lib = lib
        self._engine = ctypes.create_string_buffer(_ENGINE_BYTES)
        lib.HTS_Engine_initialize(self._engine)
        voice = pyopenjtalk.DEFAULT_HTS_VOICE
        voice = voice if isinstance(voice, bytes) else str(voice).encode()
        if lib.HTS_Engine_load(self._engine, (ctypes.c_char_p * 1)(voice), 1) != b"\x01":
            lib.HTS_Engine_clear(self._engine)
            raise RuntimeError(f"HTS_Engine_load failed for {voice!r}")
        weakref.finalize(self, lib.HTS_Engine_clear, self._engine)
        self.frame_period = int(lib.HTS_Engine_get_fperiod(self._engine))  # samples per frame
        self._nstate = int(lib.HTS_Engine_get_nstate(self._engine))
        self._lock = threading.Lock()

    def phoneme_frames(self, labels: list[str], speed: float) -> list[int] | None:
        """Frames of each label's phoneme at ``speed``; ``None`` if the engine fails."""
        lib, engine = self._lib, self._engine
        encoded = (ctypes.c_char_p * len(labels))(*[label.encode() for label in labels])
        with self._lock:
            lib.HTS_Engine_set_speed(engine, speed)
            try:
                if lib.HTS_Engine_generate_state_sequence_from_strings(
                        engine, encoded, len(labels)) != b"\x01":
                    return None
                total = int(lib.HTS_Engine_get_total_state(engine))
                states = [int(lib.HTS_Engine_get_state_duration(engine, i)) for i in range(total)]
            finally:
                lib.HTS_Engine_refresh(engine)
        if total != self._nstate * len(labels):
            return None
        return [sum(states[i:i + self._nstate]) for i in range(0, total, self._nstate)]


def _phoneme(label: str) -> str:
    """The current phoneme (p3) of a full-context label ``p1^p2-p3+p4=p5/A:...``."""
    return label.split("-", 1)[1].split("+", 1)[0]


def _node_times(nodes: Sequence[Mapping[str, Any]], labels: list[str],
                bounds: np.ndarray) -> list[tuple[float, float] | None] | None:
    """(start, end) seconds of each NJD node's morae, ``None`` for nodes without morae; ``None``
    overall when the labels' morae do not add up to the nodes' ``mora_size``."""
    morae: list[tuple[float, float]] = []
    mora_start: float | None = None
    for index, label in enumerate(labels):
        phoneme = _phoneme(label)
        if phoneme in _SILENT:
            if mora_start is not None:
                return None  # a consonant without its vowel
            continue
        if mora_start is None:
            mora_start = float(bounds[index])
        if phoneme in _VOWELS:
            morae.append((mora_start, float(bounds[index + 1])))
            mora_start = None
    sizes = [int(node.get("mora_size", 0)) for node in nodes]
    if mora_start is not None or sum(sizes) != len(morae):
        return None
    out: list[tuple[float, float] | None] = []
    position = 0
    for size in sizes:
        if size <= 0:
            out.append(None)
            continue
        out.append((morae[position][0], morae[position + size - 1][1]))
        position += size
    return out


def _timed_words(text: str, nodes: Sequence[Mapping[str, Any]], labels: list[str],
                 bounds: np.ndarray) -> tuple[TimedWord, ...]:
    """The words of ``text`` (:func:`word_spans`) timed by the NJD nodes covering them;
    ``bounds``: label boundaries in seconds (one more than the labels)."""
    times = _node_times(nodes, labels, bounds)
    if times is None:
        warnings.warn("openjtalk: label morae do not match the NJD nodes; no word timing",
                      RuntimeWarning, stacklevel=4)
        return ()
    node_spans = _node_char_spans(text, [str(node["string"]) for node in nodes])
    words: list[TimedWord] = []
    last_end = 0.0
    for a, b in word_spans(text):
        covering = [t for span, t in zip(node_spans, times, strict=True)
                    if t is not None and span is not None and span[0] < b and span[1] > a]
        if not covering:
            continue
        start = max(min(t[0] for t in covering), last_end)
        end = max(t[1] for t in covering)
        if end > start:
            words.append(TimedWord(start, end, text[a:b]))
            last_end = end
    return tuple(words)


def _node_char_spans(text: str, surfaces: list[str]) -> list[tuple[int, int] | None]:
    """Character offsets ``[start, end)`` in ``text`` of each NJD node surface (``None`` for
    symbol-only nodes).  Surfaces are compared after NFKC + casefold; nodes whose surface the
    front end rewrote (``3`` -> ``三``) share the text stretch up to the next matching node."""
    norm, index = normalized(text)
    keys = [normalized_key(s) for s in surfaces]
    spans: list[tuple[int, int] | None] = [None] * len(keys)
    n = len(norm)
    i = k = 0
    while k < len(keys):
        if not keys[k] or all(is_ignorable(c) for c in keys[k]):
            k += 1
            continue
        while i < n and is_ignorable(norm[i]):
            i += 1
        if i >= n:
            break
        if norm.startswith(keys[k], i):
            spans[k] = (i, i + len(keys[k]))
            i += len(keys[k])
            k += 1
            continue
        best: tuple[int, int] | None = None  # (position, node) where the text matches again
        for k2 in range(k + 1, min(len(keys), k + 1 + _LOOKAHEAD)):
            if not keys[k2] or all(is_ignorable(c) for c in keys[k2]):
                continue
            j = norm.find(keys[k2], i + 1)
            if j != -1 and (best is None or j < best[0]):
                best = (j, k2)
        stop, resume = best if best is not None else (n, len(keys))
        for k3 in range(k, resume):
            if keys[k3] and not all(is_ignorable(c) for c in keys[k3]):
                spans[k3] = (i, stop)
        i, k = stop, resume
    out: list[tuple[int, int] | None] = []
    for span in spans:
        if span is None or span[0] >= span[1]:
            out.append(None)
        else:
            out.append((index[span[0]], index[span[1] - 1] + 1))
    return out
