"""The utterance cache (:mod:`duplexeval.synth._utterance_cache`): a text spoken once is read
back, bit for bit, by any later synthesizer on the same cache, and only an identical request
(engine settings, voice, text, speed, engine code) finds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import needs_extra
from duplexeval.speech._tts import TimedWord, TtsEngine, Utterance
from duplexeval.synth import _utterance_cache
from duplexeval.synth._build import Synthesizer, SynthSettings
from duplexeval.synth._spec import DialogueSpec
from duplexeval.synth._utterance_cache import UtteranceCache


class CountingEngine(TtsEngine):
    """A deterministic engine that counts its syntheses: one 0.1-s tone per word, 16 kHz."""

    name = "counting"
    language = "en"

    def __init__(self, pitch: float = 1.0) -> None:
        self.pitch = pitch
        self.calls = 0

    def voices(self) -> list[str]:
        return ["low", "high"]

    def _parameters(self) -> dict[str, Any]:
        return {"pitch": self.pitch}

    def _synthesize(self, text: str, voice: str, speed: float) -> Utterance:
        self.calls += 1
        words = text.split()
        step = 0.1 / speed
        t = np.arange(round(step * 16000 * len(words))) / 16000
        hz = 200.0 * self.pitch * (2 if voice == "high" else 1)
        audio = (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32)
        return Utterance(audio, 16000, tuple(TimedWord(k * step, (k + 1) * step, w)
                                             for k, w in enumerate(words)))


def _same(a: Utterance, b: Utterance) -> bool:
    return (a.audio.tobytes() == b.audio.tobytes() and a.sample_rate == b.sample_rate
            and a.words == b.words)


def test_a_spoken_text_is_read_back_by_another_cache_on_the_folder(tmp_path: Path) -> None:
    engine = CountingEngine()
    first = UtteranceCache(tmp_path).synthesize(engine, "hello there", "low")
    assert engine.calls == 1 and len(list(tmp_path.rglob("*.npz"))) == 1
    again = UtteranceCache(tmp_path).synthesize(engine, "hello there", "low")
    assert engine.calls == 1 and _same(first, again)
    assert _same(again, engine.synthesize("hello there", "low"))  # what the engine says


@pytest.mark.parametrize("change", ["text", "voice", "speed", "settings"])
def test_only_the_same_request_finds_the_entry(tmp_path: Path, change: str) -> None:
    engine = CountingEngine()
    cache = UtteranceCache(tmp_path)
    cache.synthesize(engine, "hello there", "low", 1.0)
    args: dict[str, Any] = {"text": "hello there", "voice": "low", "speed": 1.0}
    other = engine
    if change == "settings":
        other = CountingEngine(pitch=1.5)
    else:
        args[change] = {"text": "hello you", "voice": "high", "speed": 1.25}[change]
    got = cache.synthesize(other, args["text"], args["voice"], args["speed"])
    assert other.calls == 1 + (other is engine)  # synthesized, not read back
    assert _same(got, other.synthesize(args["text"], args["voice"], args["speed"]))
    assert len(list(tmp_path.rglob("*.npz"))) == 2


def test_other_engine_code_is_another_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    engine = CountingEngine()
    UtteranceCache(tmp_path).synthesize(engine, "hello", "low")
    monkeypatch.setattr(_utterance_cache, "sources_digest", lambda *_: "other engine code")
    UtteranceCache(tmp_path).synthesize(engine, "hello", "low")
    assert engine.calls == 2


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "words-mismatch"])
def test_a_damaged_entry_is_synthesized_again_and_replaced(tmp_path: Path, damage: str) -> None:
    engine = CountingEngine()
    cache = UtteranceCache(tmp_path)
    first = cache.synthesize(engine, "one two three", "low")
    (entry,) = tmp_path.rglob("*.npz")
    data = entry.read_bytes()
    if damage == "words-mismatch":  # a valid file whose word times and texts disagree
        np.savez(entry, audio=first.audio, sample_rate=np.int64(16000),
                 times=np.zeros((2, 2)), texts=np.array(["one", "two", "three"]))
    else:
        entry.write_bytes({"truncated": data[:len(data) // 2], "garbage": b"not a zip",
                           "empty": b""}[damage])
    again = cache.synthesize(engine, "one two three", "low")
    assert engine.calls == 2 and _same(first, again)
    assert entry.read_bytes() == data  # replaced by a good entry
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p != entry]  # no temporaries


SPEC = {"id": "cache-1", "language": "en",
        "speakers": [{"id": "user", "channel": 0}, {"id": "system", "channel": 1}],
        "turns": [{"speaker": "user", "text": "Could you tell me about owls?"},
                  {"speaker": "system", "text": "Owls hunt at night, mostly small animals."},
                  {"speaker": "user", "text": "Thanks, that is helpful."}]}


@needs_extra("tts-en")
def test_a_build_from_the_cache_is_the_build_that_synthesizes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """piper (with the WORLD voice shift of the user's voice): a dialogue built with an empty
    cache, again from the cache it filled, and again without any cache give the same audio
    and words, bit for bit; the second build synthesizes nothing."""
    monkeypatch.setenv("DUPLEXEVAL_CACHE", str(tmp_path))
    spec = DialogueSpec.model_validate(SPEC)
    fresh = Synthesizer(SynthSettings()).build(spec)
    entries = sorted(tmp_path.rglob("*.npz"))
    assert len(entries) == 3  # one per turn
    cached_synth = Synthesizer(SynthSettings())
    engine = cached_synth.engine("en")
    calls: list[str] = []
    original = engine._synthesize

    def counted(text: str, voice: str, speed: float) -> Utterance:
        calls.append(text)
        return original(text, voice, speed)

    monkeypatch.setattr(engine, "_synthesize", counted)
    cached = cached_synth.build(spec)
    assert calls == []
    uncached = Synthesizer(SynthSettings(), cache_utterances=False).build(spec)
    for other in (cached, uncached):
        assert other.audio.tobytes() == fresh.audio.tobytes() and other.words == fresh.words
    assert sorted(tmp_path.rglob("*.npz")) == entries
