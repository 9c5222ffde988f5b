"""The user, the system and the background speaker of every English suite are different voices:
assigned so by the synthesizer, and measurably so in the built audio (median F0, formants, MFCC
means against the within-role spread; ``perf/voice_distinctness.py`` prints the suites' own)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import needs_extra
from duplexeval.data import Dialogue, Need, Word, load_dataset
from duplexeval.suites import SUITES
from duplexeval.synth._build import Synthesizer
from duplexeval.synth._spec import DialogueSpec, load_specs
from duplexeval.synth._voice_distinctness import dialogue_role_audio, role_voices

pytestmark = needs_extra("tts-en")
ENGLISH = [s.name for s in SUITES.all().values() if s.language == "en" and not s.from_toy]


def test_every_english_suite_gives_each_role_its_own_voice() -> None:
    assert sorted(ENGLISH) == ["flexi-en", "m3-chat-en", "m3-qa-en", "mtr-en"]
    synth = Synthesizer()
    backgrounds = 0
    for name in ENGLISH:
        for spec in load_specs(SUITES[name].spec_folder()):
            voices = {s.id: synth.voice(spec, s.id) for s in spec.speakers}
            assert voices == {"user": "joe-high", "system": "joe"}, spec.id
            for b in spec.background:
                backgrounds += 1
                assert synth._background_voice(spec, b.voice) == "joe-low", spec.id
    assert backgrounds > 0  # mtr-en has background speech


def test_role_audio_cuts_words_and_background_out_of_their_channels() -> None:
    # time (s)  0    1    2    3    4    5
    # channel 0 |user|         |bg=====|
    #                               |u|        user word 4.0-4.5 inside the background span
    # channel 1      |system===|
    rate = 100
    audio = np.zeros((600, 2), np.float32)
    audio[0:100, 0], audio[300:500, 0], audio[100:300, 1] = 0.1, 0.2, 0.3
    dialogue = Dialogue(id="d", events=(), words=(
        Word(0, 0.0, 1.0, "hi"), Word(0, 4.0, 4.5, "uh"), Word(1, 1.0, 3.0, "hello")),
        extra={"background_speech": [{"channel": 0, "start": 3.0, "end": 5.0}]})
    roles = dialogue_role_audio(dialogue, audio, rate)
    assert set(roles) == {"user", "system", "background"}
    assert len(roles["user"]) == 150 and len(roles["system"]) == 200
    assert len(roles["background"]) == 150  # 3.0-4.0 and 4.5-5.0
    assert np.all(roles["background"] == np.float32(0.2))


SPEC = {
    "id": "voices", "language": "en", "domain": "chat",
    "speakers": [{"id": "user", "channel": 0}, {"id": "system", "channel": 1}],
    "turns": [
        {"speaker": "user", "text": "I would like to plan a weekend trip to the seaside with "
                                    "my two children, somewhere with a sandy beach."},
        {"speaker": "system", "text": "That sounds lovely. A town with a long sandy beach and "
                                      "a few cafes nearby would suit a family very well."},
        {"speaker": "user", "text": "We will travel by train, so it should not be too far "
                                    "from the station, and we need a cheap hotel."},
        {"speaker": "system", "text": "Then look for a guest house within walking distance of "
                                      "the station. Many of them offer family rooms at a "
                                      "reasonable price, especially outside the summer."},
        {"speaker": "user", "text": "What should we pack if the weather turns cold and windy "
                                    "on the second day?"},
        {"speaker": "system", "text": "Bring warm jumpers, waterproof jackets and a spare pair "
                                      "of shoes for each child, and a flask of hot chocolate."},
    ],
    "background": [
        {"channel": 0, "at_turn": 1, "offset": 0.3, "gain_db": -12,
         "text": "The next train to the city centre leaves from platform four in ten minutes."},
        {"channel": 0, "at_turn": 3, "offset": 0.3, "gain_db": -12,
         "text": "Please remember to take all your belongings with you when you leave."},
        {"channel": 0, "at_turn": 5, "offset": 0.3, "gain_db": -12,
         "text": "Tickets and refreshments are available at the counter near the entrance."},
    ],
}


@pytest.mark.slow
def test_the_built_roles_are_measurably_different_voices(tmp_path: Path) -> None:
    synth = Synthesizer()
    built = synth.build(DialogueSpec.model_validate(SPEC))
    assert len(built.background) == 3
    synth.write([built], tmp_path / "ds")
    dataset, _ = load_dataset(tmp_path / "ds", audio=Need.REQUIRE)
    voices = role_voices(dataset)
    p = voices.profiles
    assert set(p) == {"user", "system", "background"}
    f0 = {role: p[role].f0_hz for role in p}
    assert all(v is not None for v in f0.values())
    # joe-high (x1.6) over joe over joe-low (x0.8), each pair at least 2 semitones apart
    assert f0["user"] > f0["system"] > f0["background"], f0  # type: ignore[operator]
    assert voices.all_distinct, voices.to_json()["pairs"]
    pair = {frozenset(x.roles): x for x in voices.pairs}[frozenset({"user", "system"})]
    assert pair.semitones is not None and pair.semitones > 6
    assert pair.f2_ratio is not None and pair.f2_ratio > 1.05  # user's formants higher


@pytest.mark.slow
@needs_extra("asr")
def test_the_user_voice_keeps_the_asr_round_trip_within_budget() -> None:
    """The derived user voice is as intelligible to Whisper as joe itself, within the budget
    that perf/voice_distinctness.py prints (WER 0.08; piper's joe measured 0.036 in the
    dependency study)."""
    import jiwer
    import soxr

    from duplexeval.speech._asr import Transcriber
    from duplexeval.speech._tts import load_engine
    from duplexeval.synth._quality import normalize_en

    specs = load_specs(SUITES["m3-qa-en"].spec_folder())
    said = [t.text for s in specs for t in s.turns if t.speaker == "user"][:12]
    engine, transcriber = load_engine("piper"), Transcriber()
    wer = {}
    for voice in ("joe", "joe-high"):
        refs, hyps = [], []
        for text in said:
            utt = engine.synthesize(text, voice)
            words = transcriber.transcribe(soxr.resample(utt.audio, utt.sample_rate, 16000),
                                           16000, "en")
            refs.append(normalize_en(text))
            hyps.append(normalize_en(" ".join(w.text for w in words)))
        wer[voice] = float(jiwer.wer(refs, hyps))
    assert wer["joe-high"] <= 0.08 and wer["joe-high"] <= wer["joe"] + 0.05, wer
