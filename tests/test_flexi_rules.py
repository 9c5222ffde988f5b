"""FLEXI's metric rules (:mod:`duplexeval.metrics.timing._flexi_rules`) and the model-backchannel
segment reader (:mod:`duplexeval.peers.flexi._vad`) at their edges.  Expected values follow
``evaluate/eval_*.py`` of ``ChristineCHEN274/FLEXI`` @2247b0d as written."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from duplexeval.errors import DuplexevalError
from duplexeval.metrics.timing import _flexi_rules as rules
from duplexeval.metrics.timing._flexi_rules import Word
from duplexeval.peers.flexi import _vad as flexi_vad
from duplexeval.timeline import Span
from flexi_folders import silent_wav, vad_segments


def _w(*specs: tuple[str, float | None, float | None]) -> list[Word]:
    return [Word(*s) for s in specs]


def test_takeover_needs_one_second_or_more_than_three_words() -> None:
    assert not rules.takes_turn([])
    assert not rules.takes_turn(_w(("a", 1.0, 1.3), ("b", 1.4, 1.9), ("c", 1.9, 1.99)))
    assert rules.takes_turn(_w(("a", 1.0, 1.3), ("b", 1.4, 2.0)))  # exactly 1 s
    assert rules.takes_turn(_w(*[(str(i), 1 + i / 10, 1.05 + i / 10) for i in range(4)]))


def test_latency_levels() -> None:
    assert [rules.latency_level(t) for t in (0.1, 0.15, 0.399, 0.4, 2.0)] == [1, 2, 2, 3, 3]


def test_pause_window_lasts_the_longer_of_the_pause_and_the_latency() -> None:
    """``[5, 6]`` with L = 0.4: ends at 6.0; with L = 2.5: ends at 7.5."""
    assert rules.pause_window_end(5.0, 6.0, 0.4) == 6.0
    assert rules.pause_window_end(5.0, 6.0, 2.5) == 7.5
    assert rules.pause_takeover(6.0, 5.0, 6.0, 10.0) == 1  # closed at the end
    assert rules.pause_takeover(10.01, 5.0, 20.0, 10.0) == 0  # after the user's end


def test_interrupt_cluster_restarts_at_a_word_starting_at_zero() -> None:
    """The code tests ``Intertwined_start == 0`` as "no cluster yet" (l. 89)::

        user                 |== 10-14 ==|
        model  |a 0.0============|b====|       |c|
        code   cluster restarts at b: 10.6-12.0 (1.4 s) -> yields
        paper  cluster 0.0-12.0 (12 s)                  -> does not
    """
    words = _w(("a", 0.0, 10.5), ("b", 10.6, 12.0), ("c", 15.0, 15.5))
    code = rules.interrupt_outcome(words, 10.0, 14.0)
    assert code.tor == 0 and code.cluster == (10.6, 12.0)
    assert rules.interrupt_outcome(words, 10.0, 14.0, paper=True).tor == 1


def test_interrupt_gap_is_measured_from_the_cluster_end() -> None:
    """Later words are compared with the cluster's end, never with the previous word
    (l. 95-96: ``Intertwined_end`` moves only with overlapping words)::

        user    |== 10-14 ==|
        model  |a 10.5-13.2|  |b 14.0====20.0| |c 20.5|
        b: 14.0 - 13.2 = 0.8, no decision; c: 20.5 - 13.2 > 1 closes the 2.7 s cluster: TOR 0
        without c nothing closes it: TOR 1 (and the paper agrees: b is speech after it)
    """
    words = _w(("a", 10.5, 13.2), ("b", 14.0, 20.0), ("c", 20.5, 21.0))
    assert rules.interrupt_outcome(words, 10.0, 14.0) == rules.InterruptOutcome(0, (10.5, 13.2))
    for paper in (False, True):
        assert rules.interrupt_outcome(words[:2], 10.0, 14.0, paper=paper) == \
            rules.InterruptOutcome(1, None)


def test_new_response_starts_after_the_interruption_plus_eps() -> None:
    """Words from 14.15 s on; 14.1 does not count (l. 110)."""
    assert rules.new_response(_w(("a", 14.1, 16.0)), 14.0) == (False, None)
    responded, latency = rules.new_response(_w(("a", 14.15, 14.5), ("b", 14.6, 15.15)), 14.0)
    assert responded and latency == pytest.approx(0.15)


def test_model_interrupt_margin_is_strict() -> None:
    assert rules.model_interrupt_delay(8.0, 7.5) == (-0.5, False)
    assert rules.model_interrupt_delay(8.0, 7.4)[1]


def test_backchannel_split_first_gap_reads_the_last_word() -> None:
    """For the first gap the code's ``timestamps[i-1]`` is the last word (l. 112)::

        backchannel at 1.0
        model  |w0 5.0-6.0|  2.0  |w1 8.0-9.0|
        min(start of w0 = 5.0, end of last word = 9.0) = 5.0 > 1.0: not a yield
    """
    words = _w(("w0", 5.0, 6.0), ("w1", 8.0, 9.0))
    assert rules.backchannel_split(words, 1.0) is None
    assert rules.backchannel_split(words, 5.0) == 1
    assert rules.backchannel_split(words, 5.0, gap=2.0) is None  # "> gap", strictly


def test_backchannel_time_from_the_input_gap() -> None:
    words = _w(("a", 0.0, 1.0), ("b", 1.1, 2.0), ("ok", 3.6, 4.0))
    assert rules.backchannel_time_from_input(words) == 3.6
    assert rules.backchannel_time_from_input(words[:2]) is None


def test_words_in_segment_overlap_conditions_and_missing_times() -> None:
    """Segment [2, 3]::

        in     [2.2-2.8]        counted
        end      [2.9-3.5]      counted (start <= 3 < end)
        start  [1.5-2.1]        counted (start <= 2 < end)
        touch  [1.5-2.0]        not (ends at the start)
        null   start None       not; end None before 3: not; end None from 3: zero length
    """
    words = _w(("in", 2.2, 2.8), ("end", 2.9, 3.5), ("start", 1.5, 2.1), ("touch", 1.5, 2.0),
               ("nostart", None, 2.5), ("noend", 2.5, None), ("late", 3.0, None))
    assert rules.words_in_segment(words, 2.0, 3.0) == ["in", "end", "start", "late"]


def test_backchannel_classification_edges() -> None:
    """No segments: TOR 0.  A segment of exactly 3.0 s is not "> 3" but is a turn by its
    length (>= 1 s).  Three words under 1 s are a turn ("<= 2" is a backchannel)."""
    assert rules.classify_model_backchannels([], []) == rules.Backchannels(0, ())
    assert rules.classify_model_backchannels([(1.0, 4.0)], []).tor == 1
    three = _w(("a", 1.0, 1.1), ("b", 1.2, 1.3), ("c", 1.4, 1.5))
    assert rules.classify_model_backchannels([(1.0, 1.6)], three).tor == 1
    assert rules.classify_model_backchannels([(1.0, 1.6)], three[:2]) == \
        rules.Backchannels(0, ((1.0, 1.6),))


def test_jsd_distance_and_divergence_bounds() -> None:
    """Disjoint histograms: the code's distance is sqrt(ln 2) = 0.8326, the paper's base-2
    divergence is 1."""
    p, q = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    assert rules.jsd(p, q) == pytest.approx(math.sqrt(math.log(2)))
    assert rules.jsd(p, q, paper=True) == pytest.approx(1.0)
    assert rules.jsd(p, p) == 0.0


def test_reference_is_stretched_linearly() -> None:
    assert rules.resize_reference([0.0, 1.0], 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(ValueError, match="two bins"):
        rules.resize_reference([1.0], 3)


def test_interpolation_round_off_never_makes_the_jsd_infinite() -> None:
    """A reference of ten bins resized to ten: scipy's interp1d gives -4.3e-19 at bin 3 (a
    zero bin after 0.0036), and scipy's jensenshannon of a negative bin is ``inf`` (the demo's
    flexi-en reference run met it). Clipped to 0, both the code's distance and the paper's
    divergence stay finite and in range."""
    reference = [0.07904098768383606, 0.0273975498904098, 0.0036166919855332323] + [0.0] * 7
    resized = rules.resize_reference(reference, 10)
    assert resized.min() >= 0.0 and resized[:3].tolist() == pytest.approx(reference[:3])
    model = rules.backchannel_distribution([(0.2, 0.5)], 1.9)
    assert len(model) == 10
    assert 0.0 <= rules.jsd(model, resized) <= math.sqrt(math.log(2))
    assert 0.0 <= rules.jsd(model, resized, paper=True) <= 1.0


# -- speech segments and audio length ------------------------------------------------------------

def test_silero_padding_splits_short_silences_and_clips() -> None:
    """30 ms each side; the 40 ms silence between the first two is split in half; the ends
    are clipped to [0, duration]."""
    padded = flexi_vad.silero_padding([(0.01, 1.0), (1.04, 2.0), (3.0, 4.99)], 5.0)
    assert padded == [(0.0, pytest.approx(1.02)), (pytest.approx(1.02), 2.03),
                      (2.97, 5.0)]


def test_audio_length_is_torchaudio_resampled_count(tmp_path: Path) -> None:
    """22050 Hz, 22051 frames: ceil(320 * 22051 / 441) = 16001 samples at 16 kHz."""
    folder = tmp_path / "d"
    folder.mkdir()
    sf.write(str(folder / "output.wav"), np.zeros(22051, dtype=np.float32), 22050)
    assert flexi_vad.audio_seconds(folder) == 16001 / 16000
    (folder / "output.wav").unlink()
    vad_segments(folder, [(0, 16000)], unit="samples", num_samples=48000)
    assert flexi_vad.audio_seconds(folder) == 3.0


def test_segments_in_samples_round_like_return_seconds(tmp_path: Path) -> None:
    """16800 samples = 1.05 s, which ``round(16800 / 16000, 1)`` makes 1.1 under the code."""
    vad_segments(tmp_path, [(16800, 20800)], unit="samples")
    raw, source = flexi_vad.model_segments(tmp_path, 10.0)
    assert raw == [(1.05, 1.3)] and source == "vad_segments.json"
    assert round(raw[0][0], 1) == 1.1


def test_our_silero_mirrors_flexis_settings(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Without vad_segments.json our Silero runs with Silero's defaults (no refinement), then
    Silero's 30 ms padding."""
    from duplexeval.speech import _activity as activity

    seen = []

    def fake(x: np.ndarray, rate: int, options: activity.ActivityOptions) -> list[Span]:
        seen.append(options)
        return [Span(1.0, 1.5)]

    monkeypatch.setattr(activity, "detect_activity", fake)
    silent_wav(tmp_path / "output.wav", 2.0)
    raw, source = flexi_vad.model_segments(tmp_path, 2.0)
    assert source == "silero" and raw == [(0.97, 1.53)]
    opts = seen[0]
    assert (opts.engine, opts.silero_threshold, opts.silero_neg_threshold,
            opts.silero_min_silence_ms, opts.refine, opts.min_speech_ms) == \
        ("silero", 0.5, 0.35, 100.0, False, 250.0)
    sf.write(str(tmp_path / "output.wav"), np.zeros((100, 2), dtype=np.float32), 16000)
    with pytest.raises(DuplexevalError, match="expected one channel"):
        flexi_vad.model_segments(tmp_path, 2.0)
