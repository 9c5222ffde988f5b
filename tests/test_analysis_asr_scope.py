"""The analysis transcribes only what the M3 metrics read: system-channel segments shorter than
the model-backchannel bound (1.0 s), and nothing at all for a channel without such speech."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from duplexeval.analysis import _pipeline as pipeline
from duplexeval.analysis._pipeline import AnalysisOptions, analyze_channel
from duplexeval.speech._activity import ActivityOptions, VadEngine
from duplexeval.speech._asr import AsrWord
from duplexeval.timeline import Span

SR = 16000


class FakeTranscriber:
    """Records the regions it is asked for; says one word per region."""

    def __init__(self) -> None:
        self.calls: list[list[Span]] = []

    def settings(self) -> dict[str, str]:
        return {"model": "fake"}

    def transcribe_many(self, items: Sequence[tuple[np.ndarray, int, Sequence[Span]]],
                        language: str | None) -> list[list[AsrWord]]:
        out = []
        for _audio, _rate, regions in items:
            self.calls.append(list(regions))
            out.append([AsrWord(r.start, r.end, "word") for r in regions])
        return out


def _bursts(spans: list[tuple[float, float]], seconds: float = 6.0) -> np.ndarray:
    """Noise bursts at ``spans`` (seconds) on digital silence."""
    x = np.zeros(int(seconds * SR), np.float32)
    rng = np.random.default_rng(0)
    for a, b in spans:
        x[int(a * SR):int(b * SR)] = 0.3 * rng.standard_normal(int(b * SR) - int(a * SR))
    return x


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeTranscriber:
    fake = FakeTranscriber()
    monkeypatch.setattr(pipeline, "_transcriber", lambda model, processes=None: fake)
    return fake


ENERGY = ActivityOptions(engine=VadEngine.ENERGY)


def test_only_segments_shorter_than_the_backchannel_bound_are_transcribed(
        fake: FakeTranscriber) -> None:
    #   0    1    2    3    4    5    6 s
    #   |..SS......LLLLLLLLLLL.........|   S = 0.6 s segment, L = 2.2 s segment
    x = _bursts([(0.5, 1.1), (2.0, 4.2)])
    segments = analyze_channel(x, SR, 1, AnalysisOptions(vad=ENERGY))
    assert [(round(s.start, 1), round(s.end, 1)) for s in segments] == [(0.5, 1.1), (2.0, 4.2)]
    assert len(fake.calls) == 1 and len(fake.calls[0]) == 1
    assert abs(fake.calls[0][0].start - 0.5) < 0.05 and abs(fake.calls[0][0].end - 1.1) < 0.05
    assert [len(s.chunks) for s in segments] == [1, 0]
    # None: every segment, as before
    fake.calls.clear()
    segments = analyze_channel(x, SR, 1, AnalysisOptions(vad=ENERGY, asr_max_segment=None))
    assert len(fake.calls[0]) == 2 and [len(s.chunks) for s in segments] == [1, 1]


def test_the_user_channel_and_a_silent_or_long_only_channel_cost_no_asr(
        fake: FakeTranscriber) -> None:
    options = AnalysisOptions(vad=ENERGY)
    analyze_channel(_bursts([(0.5, 1.1)]), SR, 0, options)  # user channel: not in asr_channels
    analyze_channel(np.zeros(6 * SR, np.float32), SR, 1, options)  # a system that never spoke
    analyze_channel(_bursts([(1.0, 3.0)]), SR, 1, options)  # only a long segment
    assert fake.calls == []


def test_the_scope_is_part_of_the_settings(tmp_path: Path) -> None:
    assert AnalysisOptions().settings()["asr_max_segment_s"] == 1.0
    assert AnalysisOptions().settings()["asr_channels"] == [1]
    assert AnalysisOptions(asr_max_segment=None).settings()["asr_max_segment_s"] is None
    assert AnalysisOptions().settings()["asr_shared_samples"] == 64
    with pytest.raises(ValueError):
        AnalysisOptions(asr_shared_samples=0)
    with pytest.raises(ValueError):
        AnalysisOptions(asr_max_segment=0.0)


def test_a_content_sample_transcribes_in_full_only_its_content_channels(
        fake: FakeTranscriber) -> None:
    #   0    1    2    3    4    5    6 s
    #   |.....LLLLLLLLLLLLLLLL.........|   L = 3 s of speech on either channel
    x = _bursts([(1.0, 4.0)])
    both = AnalysisOptions(vad=ENERGY)  # the default: a judge reads the user's words too
    assert [len(s.chunks) for s in analyze_channel(x, SR, 0, both, full=True)] == [1]
    assert [len(s.chunks) for s in analyze_channel(x, SR, 1, both, full=True)] == [1]
    fake.calls.clear()
    system = AnalysisOptions(vad=ENERGY, content_channels=(1,))  # eval without a judge
    assert [len(s.chunks) for s in analyze_channel(x, SR, 0, system, full=True)] == [0]
    assert fake.calls == []  # the user channel cost no ASR
    assert [len(s.chunks) for s in analyze_channel(x, SR, 1, system, full=True)] == [1]
    assert system.settings()["content_channels"] == [1]
    with pytest.raises(ValueError):
        AnalysisOptions(content_channels=())
    with pytest.raises(ValueError):
        AnalysisOptions(content_channels=(2,))


def test_variants_add_the_channels_their_word_rules_read() -> None:
    """Without a judge a cell transcribes the system channel in full; FLEXI's word rules read
    nothing else, MTR's read the user's words too, so its analysis adds channel 0."""
    from duplexeval.metrics._score_run import shared_analysis

    base = AnalysisOptions(content_event_types=(), content_channels=(1,))
    flexi = shared_analysis(base, ["flexi"], None)
    assert flexi.content_channels == (1,) and "BARGE_IN" in flexi.content_event_types
    assert shared_analysis(base, ["mtr"], None).content_channels == (0, 1)
    assert shared_analysis(base, ["m3"], None) == base  # M3's rules ask for nothing more
