"""Cutting dialogues into ~120 s segments: no IPU split, in order, covering, near the target."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from duplexeval.data import Word
from duplexeval.data._segmentation import (
    cut_events,
    cut_words,
    plan_segments,
    segment_id,
    speech_blocks,
)
from duplexeval.events import Event, EventKind, annotate_spans
from duplexeval.timeline import Span

MARGIN = 0.1


@st.composite
def dialogues(draw: st.DrawFn) -> tuple[list[Span], float]:
    """IPUs of two channels: alternating silences and speech of random lengths."""
    ipus = []
    for _channel in (0, 1):
        t = draw(st.floats(0, 5))
        for _ in range(draw(st.integers(0, 60))):
            length = draw(st.floats(0.05, 40))
            ipus.append(Span(round(t, 3), round(t + length, 3)))
            t += length + draw(st.floats(0.51, 20))
    end = max((s.end for s in ipus), default=0.0)
    return ipus, end + draw(st.floats(0, 5))


def _silence_points(blocks: list[Span], duration: float) -> list[Span]:
    out, last = [], 0.0
    for b in blocks:
        if b.start > last:
            out.append(Span(last, b.start))
        last = max(last, b.end)
    return out  # the trailing silence is never cut


@settings(max_examples=300, deadline=None)
@given(dialogues(), st.sampled_from([30.0, 60.0, 120.0]))
def test_segments_never_split_an_ipu_and_cover_in_order(case: tuple[list[Span], float],
                                                         target: float) -> None:
    ipus, duration = case
    segments = plan_segments(ipus, duration, target, margin=MARGIN)
    assert segments[0].start == 0.0 and segments[-1].end == duration
    for a, b in itertools.pairwise(segments):
        assert a.end == b.start and a.start < a.end
    blocks = speech_blocks(ipus)
    for seg in segments[:-1]:
        cut = seg.end
        assert not any(ipu.start < cut < ipu.end for ipu in ipus), "an IPU is split"
        assert not any(b.start <= cut <= b.end for b in blocks), "cut touches speech"
        wanted = seg.start + target
        for silence in _silence_points(blocks, duration):
            q = min(max(wanted, silence.start), silence.end)
            if q > seg.start + MARGIN:
                assert abs(cut - wanted) <= abs(q - wanted) + MARGIN + 0.006, \
                    "a nearer silence was passed over"
    last = segments[-1]
    if last.duration > target + 1e-6:  # only when no silence is left to cut in
        assert all(s.end <= last.start + 0.01 for s in _silence_points(blocks, duration))


def test_a_wanted_end_in_a_silence_is_cut_exactly_there() -> None:
    ipus = [Span(1, 50), Span(52, 119), Span(121, 200), Span(205, 240)]
    segments = plan_segments(ipus, 250.0, 120.0)
    # 240 is inside speech up to the trailing silence: the silence before that block wins
    assert segments == [Span(0.0, 120.0), Span(120.0, 204.9), Span(204.9, 250.0)]
    assert segment_id("A0022_S0003", segments[0]) == "A0022_S0003.0.0-120.0"
    assert segment_id("x", Span(120.0, 238.73)) == "x.120.0-238.73"
    assert segment_id("x", Span(596.58, 602.347125)) == "x.596.58-602.347"


def test_inside_speech_the_nearer_silence_wins_and_min_last_merges() -> None:
    ipus = [Span(0.5, 110), Span(109, 135), Span(136, 150)]  # speech 0.5-135, silence to 136
    segments = plan_segments(ipus, 152.0, 120.0)
    assert segments[0].end == 135.1 and segments[-1].end == 152.0
    assert plan_segments(ipus, 152.0, 120.0, min_last=30) == [Span(0.0, 152.0)]
    assert plan_segments(ipus, 152.0, 0) == [Span(0.0, 152.0)]


def test_cut_events_equal_annotating_the_segment_alone() -> None:
    words = [Word(0, 0.0, 2.0, "a"), Word(1, 2.2, 4.0, "b"), Word(0, 4.9, 6.0, "c"),
             Word(1, 5.1, 5.4, "d"), Word(0, 6.3, 8.0, "e")]
    spans = {ch: [w.span for w in words if w.channel == ch] for ch in (0, 1)}
    events = annotate_spans(spans)
    segment = Span(4.5, 9.0)
    inside = cut_words(words, segment)
    alone = annotate_spans({ch: [w.span for w in inside if w.channel == ch] for ch in (0, 1)})
    assert sorted(cut_events(events, segment), key=repr) == sorted(alone, key=repr)
    assert Event(EventKind.BC, 1, 0.6, 0.9) in [
        Event(e.kind, e.channel, round(e.start, 6), round(e.end, 6)) for e in alone]


def test_data_segment_equals_importing_in_segments(tmp_path: Path) -> None:
    from duplexeval.cli import main
    from duplexeval.data import Need, check_dataset
    from recipe_fixtures import make_candor

    src = make_candor(tmp_path / "src")
    base = ["data", "import", "candor", str(src), "-o"]
    assert main([*base, str(tmp_path / "whole"), "--segment", "0"]) == 0
    assert main([*base, str(tmp_path / "direct"), "--segment", "3"]) == 0
    assert main(["data", "segment", str(tmp_path / "whole"), "-o", str(tmp_path / "cut"),
                 "--segment", "3"]) == 0
    direct, cut = (check_dataset(tmp_path / name, "test", audio=Need.REQUIRE,
                                 alignment=Need.REQUIRE) for name in ("direct", "cut"))
    assert direct.problems == [] and cut.problems == []
    for a, b in zip(direct.dataset.dialogues, cut.dataset.dialogues, strict=True):
        assert a.id == b.id and a.extra["source"] == b.extra["source"]
        assert [(w.channel, round(w.start, 4), round(w.end, 4), w.text) for w in a.words] == \
            [(w.channel, round(w.start, 4), round(w.end, 4), w.text) for w in b.words]
        assert sorted((e.kind, e.channel, round(e.start, 4), round(e.end, 4)) for e in a.events) \
            == sorted((e.kind, e.channel, round(e.start, 4), round(e.end, 4)) for e in b.events)
        assert a.audio.num_frames == b.audio.num_frames
