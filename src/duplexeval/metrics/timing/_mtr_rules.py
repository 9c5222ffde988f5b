"""MTR-DuplexBench's timing rules, as pure functions over speech segments with words.

Source: ``ZhangHe0918/MTR-DuplexBench`` at 6d7c125, ``Eval/eval_1_scenario.py``,
``eval_2_scenarios.py``, ``eval_single_scenario_pause_handling.py`` and
``eval_single_scenario_background.py``; re-implemented from their behaviour.  Times are seconds
on one clock; a segment is the system's speech segment with its words (ASR chunks).

"Speaking" in a window ``[a, b]`` (``check_if_speak_at_the_same_time``)::

    window            [a ................ b]
    segment  MMMMMMMMMMMMMMM     MMMMMMMMMMMMMMMMMM
    words    w  w  w  w  w       w w w w w w w
                      ^^ ^^      ^ ^ ^ ^ ^            words wholly inside [a, b] count
    speaking = some segment overlapping the window has, among its words wholly inside it,
               a summed duration >= 1 s, or more than 3 of them (judged per segment, not
               summed over segments)

A segment overlaps when ``start < b and end > a`` (or lies strictly inside).

Latency (``calculate_latency``): the first-starting segment among those ending after the user's
end, its start minus the user's end, floored at 0; 0 when there is none (so silence has latency
0, as the code returns).

Backchannel frequency (``calculate_frequency``): segments shorter than 3 s with at most 2 words,
divided by the system's total speech seconds (0 without speech)::

    M    MMMMMMMMMMMM  M      2 backchannel-like segments / 2.9 s of speech

Background speech (``check_time_range_in_ipu``, tolerance 0.1 s): success when
``[bg_start + 0.3, bg_end]`` lies inside one segment (``seg_start <= a`` and ``b <= seg_end -
0.1``) and is continuously covered by its words (first touching word starts by ``a``, last ends
by ``b - 0.1``, no gap between them over 2 s); a window outside every segment scores 0 (the
docstring says 1 for that case; the code returns 0, and so do we).
"""

from __future__ import annotations

from collections.abc import Sequence

from duplexeval.analysis._segments import SpeechSegment

__all__ = ["BACKGROUND_ONSET_S", "backchannel_frequency", "background_success", "latency",
           "speaking"]

SPEAK_MIN_SECONDS = 1.0
SPEAK_MAX_WORDS = 3
BC_MAX_SECONDS = 3.0
BC_MAX_WORDS = 2
BACKGROUND_ONSET_S = 0.3
"""The background window starts this long after the background speech starts."""
TOLERANCE = 0.1
GAP_FACTOR = 20


def _overlaps(seg: SpeechSegment, a: float, b: float) -> bool:
    return (seg.start < b and seg.end > a) or (seg.end < b and seg.start > a)


def speaking(segments: Sequence[SpeechSegment], a: float, b: float) -> bool:
    """Whether the system is speaking in ``[a, b]`` by MTR's rule (module docstring)."""
    for seg in segments:
        if not _overlaps(seg, a, b):
            continue
        inside = [w for w in seg.chunks if w.start >= a and w.end <= b]
        duration = sum(w.end - w.start for w in inside)
        if duration >= SPEAK_MIN_SECONDS or len(inside) > SPEAK_MAX_WORDS:
            return True
    return False


def latency(segments: Sequence[SpeechSegment], user_end: float) -> float:
    """Start of the first-starting segment that ends after ``user_end``, minus ``user_end``,
    floored at 0; 0 when no segment ends after it."""
    after = [s for s in segments if s.end > user_end]
    if not after:
        return 0.0
    return max(0.0, min(s.start for s in after) - user_end)


def backchannel_frequency(segments: Sequence[SpeechSegment]) -> float:
    """Backchannel-like segments (< 3 s, <= 2 words) per second of the system's speech."""
    total = sum(s.end - s.start for s in segments)
    if total == 0:
        return 0.0
    count = sum(1 for s in segments
                if s.end - s.start < BC_MAX_SECONDS and len(s.chunks) <= BC_MAX_WORDS)
    return count / total


def background_success(segments: Sequence[SpeechSegment], bg_start: float,
                       bg_end: float) -> bool:
    """Whether the system kept talking through the background speech (module docstring)."""
    a, b = bg_start + BACKGROUND_ONSET_S, bg_end
    if not segments or a >= b:
        return False
    for seg in segments:
        if not (seg.start <= a and b <= seg.end - TOLERANCE):
            continue
        words = sorted((w for w in seg.chunks if w.end > a and w.start < b + TOLERANCE),
                       key=lambda w: w.start)
        if not words or words[0].start > a or words[-1].end < b - TOLERANCE:
            continue
        if all(words[i + 1].start - words[i].end <= GAP_FACTOR * TOLERANCE
               for i in range(len(words) - 1)):
            return True
    return False
