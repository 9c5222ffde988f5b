"""The dialogue synthesizer: spec validation, placement rules, determinism, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.cli import main
from duplexeval.data import Need, load_dataset
from duplexeval.events import EventKind
from duplexeval.speech._tts import engine_class
from duplexeval.synth._build import Synthesizer, SynthSettings, reference_gaps
from duplexeval.synth._quality import gap_distance, normalize_en
from duplexeval.synth._spec import DialogueSpec, load_spec

needs_piper = pytest.mark.skipif(engine_class("piper").unavailable_reason() is not None,
                                 reason="piper (duplexeval[tts-en]) not installed")
needs_openjtalk = pytest.mark.skipif(engine_class("openjtalk").unavailable_reason() is not None,
                                     reason="pyopenjtalk (duplexeval[tts]) not installed")

SPEAKERS = [{"id": "user", "channel": 0}, {"id": "system", "channel": 1}]


def spec(turns: list[dict], language: str = "en", **extra: object) -> dict:
    return {"id": "t1", "language": language, "domain": "task", "speakers": SPEAKERS,
            "turns": turns, **extra}


EN = spec([
    {"speaker": "user", "text": "Who wrote the novel Frankenstein?", "answer": "Mary Shelley"},
    {"speaker": "system", "text": "It was written by Mary Shelley and published in 1818.",
     "backchannels": [{"after_word": 5, "text": "mm-hm"}]},
    {"speaker": "user", "text": "How old was Mary Shelley when the book first came out?",
     "pause": {"after_word": 5, "seconds": 1.2}, "interrupted_after_word": 8},
    {"speaker": "system", "text": "She was twenty years old at the time."},
])


def write(tmp: Path, obj: dict, name: str = "t1.json") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / name).write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return tmp / name


@pytest.mark.parametrize(("change", "message"), [
    ({"turns": [{"speaker": "bob", "text": "hi"}]}, "unknown speaker 'bob'"),
    ({"turns": [{"speaker": "user", "text": "one two", "pause": {"after_word": 2,
                                                                "seconds": 1}}]},
     "after_word 2 must be below the turn's 2 words"),
    ({"turns": [{"speaker": "user", "text": "one two three", "interrupted_after_word": 1}]},
     "the next turn is not by the other speaker"),
    ({"turns": [{"speaker": "user", "text": "hi", "tone": "happy"}]}, "turns.0.tone"),
    ({"turns": [{"speaker": "user", "text": "a b c", "pause": {"seconds": 1}}]},
     "exactly one of after_word and after_char"),
])
def test_spec_errors_name_the_file_and_field(tmp_path: Path, change: dict, message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "specs", {**spec([]), **change})
    assert main(["synth", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and message in err
    assert not (tmp_path / "out").exists()


def test_malformed_yaml_gives_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: x\nturns: [\n  - speaker: user\n", encoding="utf-8")
    with pytest.raises(Exception) as info:
        load_spec(path)
    assert f"{path}:" in str(info.value)


def test_stratified_gap_draws_follow_the_reference() -> None:
    synth = Synthesizer()
    ref = reference_gaps("chat")
    draws = synth._draw(ref, 60, np.random.default_rng(0))
    assert set(draws) <= {round(g, 3) for g in ref}
    assert gap_distance(draws, ref)["ks"] <= 0.1


def test_english_number_normalisation() -> None:
    assert normalize_en("She was 20 in 1818, mm-hm.") == "she was twenty in eighteen eighteen"
    assert normalize_en("Uh, m m h m") == ""


@needs_piper
def test_placement_rules_and_determinism(tmp_path: Path) -> None:
    """Turn 3 (user) pauses 1.2 s after "Shelley" and is interrupted after "book":

    user   Who wrote..? |mm-hm|   How old was Mary Shelley ..1.2 s.. when the book first came out
    system      It was written by Mary Shelley and ...                    |She was twenty ...
                (mm-hm: the user's backchannel after word 5, "Mary")       BARGE_IN
    """
    synth = Synthesizer(SynthSettings(seed=3))
    built = synth.build(DialogueSpec.model_validate(EN))
    again = Synthesizer(SynthSettings(seed=3), cache_utterances=False).build(
        DialogueSpec.model_validate(EN))  # synthesized again, not read from the cache
    assert np.array_equal(built.audio, again.audio) and built.words == again.words
    words = {(w.channel, w.text): w for w in built.words}
    # the pause lasts exactly its 1.2 s (to the word rounding of 1 ms)
    assert words[(0, "when")].start - words[(0, "Shelley")].end == pytest.approx(1.2, abs=2e-3)
    # the backchannel: the other channel, after word 5 ("Mary"), at most 0.8 s
    bc = words[(0, "mm-hm")]
    assert bc.start > words[(1, "Mary")].end and bc.end - bc.start <= 0.8
    # the interruption starts after "book" while the user is still speaking
    she = words[(1, "She")]
    assert words[(0, "book")].end < she.start < words[(0, "first")].end
    events = built.dialogue().events
    kinds = {e.kind for e in events}
    assert {EventKind.TURN_SHIFT, EventKind.TURN_HOLD, EventKind.BC,
            EventKind.BARGE_IN} <= kinds
    # the first turn shift's gap is one of the reference gaps drawn
    shift = next(e for e in events if e.kind == EventKind.TURN_SHIFT and e.channel == 1)
    assert round(shift.end - shift.start, 3) == pytest.approx(built.turn_shift_gaps[0], abs=2e-3)
    assert built.turn_shift_gaps[0] in {round(g, 3) for g in reference_gaps()}
    # another seed draws other gaps
    other = Synthesizer(SynthSettings(seed=4)).build(DialogueSpec.model_validate(EN))
    assert other.turn_shift_gaps != built.turn_shift_gaps


@needs_piper
def test_synth_cli_writes_a_valid_dataset_with_quality(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "specs", EN)
    out = tmp_path / "out"
    assert main(["synth", str(path), "-o", str(out), "--no-asr"]) == 0
    dataset, _ = load_dataset(out, audio=Need.REQUIRE, alignment=Need.REQUIRE)
    d = dataset.dialogues[0]
    assert dataset.language == "en" and d.extra["qa_references"][0]["answer"] == "Mary Shelley"
    x, rate = sf.read(str(d.audio.path))
    assert rate == 16000 and x.shape[1] == 2
    quality = json.loads((out / "quality.json").read_text())
    assert quality["timing"]["n"] >= 1 and quality["events"]["BARGE_IN"] == 1
    assert main(["synth", str(path), "-o", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err


@needs_openjtalk
def test_japanese_positions_by_character(tmp_path: Path) -> None:
    ja = spec([
        {"speaker": "user", "text": "その本を書いたのは、誰ですか？",
         "pause": {"after_char": 10, "seconds": 0.9}},
        {"speaker": "system", "text": "メアリー・シェリーが書きました。"},
    ], language="ja")
    built = Synthesizer().build(DialogueSpec.model_validate(ja))
    user = [w for w in built.words if w.channel == 0]
    texts = [w.text for w in user]
    i = texts.index("は")  # the last word before the comma (character 10)
    assert user[i + 1].start - user[i].end == pytest.approx(0.9, abs=2e-3)
    voices = {Synthesizer().voice(DialogueSpec.model_validate(ja), s) for s in ("user", "system")}
    assert len(voices) == 2  # distinct voices per speaker


class _WordlessEngine:
    """A TTS stand-in without word timing: clip-bank speech for a known English sentence."""

    name = "wordless"
    language = "en"

    def voices(self) -> list[str]:
        return ["clip"]

    def resolve_voice(self, voice: str | None) -> str:
        return "clip"

    def synthesize(self, text: str, voice: str | None = None, speed: float = 1.0):
        from duplexeval.speech._clipbank import ClipBank
        from duplexeval.speech._tts import Utterance

        clip = next(c for c in ClipBank.load().clips("en") if c.text.strip() == text.strip())
        audio = np.concatenate([np.zeros(3200, np.float32), clip.audio,
                                np.zeros(3200, np.float32)])
        return Utterance(audio, clip.sample_rate, ())


def test_engines_without_word_timing_are_aligned_with_asr() -> None:
    from duplexeval.speech._clipbank import ClipBank

    clip = max(ClipBank.load().clips("en", "utterance"), key=lambda c: len(c.text.split()))
    synth = Synthesizer(cache_utterances=False)  # the stand-in engine has no settings to key
    synth._engines["en"] = _WordlessEngine()  # type: ignore[assignment]
    built = synth.build(DialogueSpec.model_validate(
        spec([{"speaker": "user", "text": clip.text}])))
    got = [normalize_en(w.text) for w in built.words]
    assert " ".join(got) == normalize_en(clip.text)
    assert built.words[0].start == pytest.approx(0.5, abs=0.01)  # the lead-in, speech trimmed
    assert all(a.end <= b.start for a, b in zip(built.words, built.words[1:], strict=False))


@needs_openjtalk
def test_background_speech_is_mixed_quietly_and_not_aligned() -> None:
    turns = [{"speaker": "user", "text": "今日はいい天気ですね。散歩に行きませんか。"},
             {"speaker": "system", "text": "いいですね、行きましょう。"}]
    plain = Synthesizer().build(DialogueSpec.model_validate(spec(turns, language="ja")))
    noisy = Synthesizer().build(DialogueSpec.model_validate(spec(
        turns, language="ja", background=[{"channel": 1, "text": "テレビの音です。",
                                           "at_turn": 0, "offset": 0.3, "gain_db": -20}])))
    assert noisy.words == plain.words  # not aligned, and the dialogue's timing is unchanged
    (b,) = noisy.background
    assert b["channel"] == 1 and b["start"] == pytest.approx(0.8, abs=1e-3)
    rate = noisy.sample_rate
    span = slice(round(b["start"] * rate), round(b["end"] * rate))
    added = noisy.audio[span, 1] - plain.audio[span, 1]
    loud = np.sqrt(np.mean(plain.audio[plain.audio[:, 1] != 0, 1] ** 2))
    level = 20 * np.log10(np.sqrt(np.mean(added**2)) / loud)
    assert -26 < level < -14  # about gain_db below the voices
    assert noisy.dialogue().extra["background_speech"][0]["text"] == "テレビの音です。"
    with pytest.raises(Exception, match="at_turn 5"):
        DialogueSpec.model_validate(spec(turns, language="ja",
                                         background=[{"channel": 0, "text": "x", "at_turn": 5}]))


def test_engine_pauses_longer_than_the_cap_are_shortened() -> None:
    """Audio (16 kHz)::

        |==w1==|      0.6 s silent      |==w2==|   0.3 s   |==w3==|
        0      0.5                      1.1    1.6         1.9    2.4

    The 0.6 s pause is cut to 0.4 s from its middle (w2 and w3 move back 0.2 s); the 0.3 s one
    stays; the words keep their lengths."""
    from duplexeval.speech._tts import TimedWord
    from duplexeval.synth._word_timing import cap_natural_pauses

    rate = 16_000
    t = np.arange(round(2.4 * rate)) / rate
    tone = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    audio = np.zeros_like(tone)
    spans = [(0.0, 0.5), (1.1, 1.6), (1.9, 2.4)]
    for a, b in spans:
        audio[round(a * rate):round(b * rate)] = tone[round(a * rate):round(b * rate)]
    words = [TimedWord(a, b, f"w{i}") for i, (a, b) in enumerate(spans, 1)]
    out_audio, out_words = cap_natural_pauses(audio, words, rate, 0.4)
    assert len(out_audio) == len(audio) - round(0.2 * rate)
    assert [(round(w.start, 3), round(w.end, 3)) for w in out_words] == [
        (0.0, 0.5), (0.9, 1.4), (1.7, 2.2)]
    loud = np.flatnonzero(np.abs(out_audio) > 0.01)
    gaps = np.diff(loud)
    assert sorted(gaps[gaps > 1])[-2:] == pytest.approx(
        [round(0.3 * rate), round(0.4 * rate)], abs=rate // 100)
    # nothing longer than the cap: unchanged
    same_audio, same_words = cap_natural_pauses(audio, words, rate, 0.7)
    assert same_audio is audio and same_words == words


def test_a_short_first_word_is_joined_to_the_next() -> None:
    """Audio (16 kHz), a 0.15 s first word (Japanese あ、) then 0.3 s of silence::

        |w1|   0.3 s silent   |=====w2=====|          ->   |w1|=====w2=====|
        0  0.15               0.45         1.2              0  0.15        0.9

    The silence goes (LONE_WORD_GAP_S = 0), w2 moves back 0.3 s and keeps its length; a first
    word as long as LONE_WORD_MAX_S is left alone by the synthesizer's rule."""
    from duplexeval.speech._tts import TimedWord
    from duplexeval.synth._word_timing import (
        LONE_WORD_GAP_S,
        LONE_WORD_MAX_S,
        join_lone_first_word,
    )

    assert LONE_WORD_GAP_S == 0.0 and LONE_WORD_MAX_S == 0.2
    rate = 16_000
    t = np.arange(round(1.2 * rate)) / rate
    tone = (0.5 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    audio = np.zeros_like(tone)
    spans = [(0.0, 0.15), (0.45, 1.2)]
    for a, b in spans:
        audio[round(a * rate):round(b * rate)] = tone[round(a * rate):round(b * rate)]
    words = [TimedWord(0.0, 0.45, "w1"), TimedWord(0.45, 1.2, "w2")]  # joined as engines are
    out_audio, out_words = join_lone_first_word(audio, words, rate)
    assert len(out_audio) == len(audio) - round(0.3 * rate)
    assert [(round(w.start, 3), round(w.end, 3)) for w in out_words] == [(0.0, 0.15),
                                                                          (0.15, 0.9)]
    loud = np.flatnonzero(np.abs(out_audio) > 0.01)
    assert np.diff(loud).max() < rate // 100  # no silence left between them


def _voiced(rate: int, length: float, parts: list[tuple[float, float, float]]) -> np.ndarray:
    """``length`` s of silence with a 220 Hz tone of amplitude ``level`` on each
    ``(start, end, level)``."""
    t = np.arange(round(length * rate)) / rate
    audio = np.zeros(len(t), dtype=np.float32)
    for a, b, level in parts:
        sl = slice(round(a * rate), round(b * rate))
        audio[sl] = (level * np.sin(2 * np.pi * 220 * t[sl])).astype(np.float32)
    return audio


@pytest.mark.parametrize(("parts", "aligned", "snapped"), [
    # a comma, then a stop whose closure is silent: the pause runs to the audio's onset
    #   audio    |####in####|.........................|##but##|
    #   aligned  |in--------|pause    |but--------------------|
    #   snapped  |in--------|pause                    |but----|
    ([(0.0, 0.3, 0.5), (0.8, 1.0, 0.5)], [(0.0, 0.3), (0.45, 1.0)], [(0.0, 0.3), (0.8, 1.0)]),
    # a gap the audio fills: closed, the previous word takes it
    #   audio    |######################################|
    #   aligned  |a----------|gap|b---------------------|
    ([(0.0, 1.0, 0.5)], [(0.0, 0.4), (0.5, 1.0)], [(0.0, 0.5), (0.5, 1.0)]),
    # silence of 0.05 s (< JOIN_GAP_S) inside a 0.2 s aligned gap: joined at its end
    ([(0.0, 0.4, 0.5), (0.45, 1.0, 0.5)], [(0.0, 0.3), (0.5, 1.0)], [(0.0, 0.45), (0.45, 1.0)]),
    # a tail 44 dB down is audible (SNAP_DB = 50), so the pause starts after it
    ([(0.0, 0.3, 0.5), (0.3, 0.4, 0.003), (0.7, 1.0, 0.5)], [(0.0, 0.3), (0.55, 1.0)],
     [(0.0, 0.4), (0.7, 1.0)]),
    # words that touch are not looked at, even over silence
    ([(0.0, 0.3, 0.5), (0.6, 1.0, 0.5)], [(0.0, 0.5), (0.5, 1.0)], [(0.0, 0.5), (0.5, 1.0)]),
])
def test_pauses_snap_to_the_audios_silence(parts: list[tuple[float, float, float]],
                                           aligned: list[tuple[float, float]],
                                           snapped: list[tuple[float, float]]) -> None:
    """The pauses of the word alignment move onto the silence the audio has (16 kHz, 5 ms
    frames, ``.`` silent, ``#`` audible), and the audio is not changed."""
    from duplexeval.speech._tts import TimedWord
    from duplexeval.synth._word_timing import SNAP_DB, snap_pauses_to_audio

    assert SNAP_DB == 50.0
    rate = 16_000
    audio = _voiced(rate, 1.0, parts)
    words = [TimedWord(a, b, f"w{i}") for i, (a, b) in enumerate(aligned)]
    out = snap_pauses_to_audio(audio, words, rate)
    assert [(round(w.start, 3), round(w.end, 3)) for w in out] == snapped
    assert [w.text for w in out] == [w.text for w in words]


def test_a_pause_that_would_swallow_a_word_keeps_its_alignment() -> None:
    """A silent word (no audible frame in it) beside a pause: snapping would leave it no time,
    so that pause keeps its aligned bounds."""
    from duplexeval.speech._tts import TimedWord
    from duplexeval.synth._word_timing import snap_pauses_to_audio

    rate = 16_000
    audio = _voiced(rate, 1.0, [(0.0, 0.3, 0.5)])
    words = [TimedWord(0.0, 0.3, "a"), TimedWord(0.5, 1.0, "b")]
    assert snap_pauses_to_audio(audio, words, rate) == words
