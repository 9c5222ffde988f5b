"""Full-Duplex-Bench (FDB) v1/v1.5 timing rules, as pure functions over words and segments.

Source: ``DanielLin94144/Full-Duplex-Bench`` at d7336bd, folder ``v1_v1.5/evaluation``:
``eval_smooth_turn_taking.py``, ``eval_pause_handling.py``, ``eval_user_interruption.py``,
``eval_backchannel.py`` and ``get_timing.py``.  Re-implemented from the behaviour of that code
(not copied); every float comparison and rounding is kept as written, so the values equal the
released code's on any input.  Nothing here knows FDB's folder format: the inputs are
:class:`Word` (ASR word chunks) and :class:`~duplexeval.timeline.Span` speech segments, all in
seconds from the start of the output wav, so the same rules can score our own runs.

Diagrams: ``u`` user speech, ``w`` model ASR words, ``M`` model speech segments (VAD),
``|`` reference times.

Takeover rule (TOR; all v1 tasks but backchannel)::

    model   w w  w    www       words: first start .. last end = span
            |<--- span --->|    TOR = 1 if span >= 1.0 s, or more than 3 words
                                TOR = 0 for no words at all

Latency (smooth turn-taking, user interruption; takeovers only)::

    user    uuuuuuuu|               reference: turn_taking.json's event *start*
    model           |  wwww wwww    (smooth turn-taking) or interrupt.json's *end*
                    |<>| latency = first word start - reference, clamped at 0 (kept in the mean)

Backchannel (model as listener; VAD segments, ``eval_backchannel.py``)::

    model   MM      MMMMMMM     M        each segment in order:
            bc      turn       bc         > 3 s: TOR = 1 and stop (the segment is not listed);
                                          else classify by its words (< 1 s and <= 2 words:
                                          backchannel, else turn), set TOR from *this*
                                          segment, list it as a backchannel either way

  So the code's TOR is the last short segment's class ("last segment wins": ``turn, bc`` gives
  TOR 0) unless a segment over 3 s came first, and turns shorter than 3 s are counted as
  backchannels.  :func:`backchannels_paper` is the paper's reading: TOR 1 when any segment is a
  turn, only backchannel-class segments listed.

Frequency = backchannels / output duration (s).  JSD: a 0.2 s histogram of the backchannels
against the per-item reference distribution (:func:`backchannel_jsd`); the code computes
scipy's Jensen-Shannon *distance* (natural log, at most sqrt(ln 2) ~ 0.833) although the paper
names the divergence; with no backchannel the value is 1.

v1.5 stop and response latency (``get_timing.py``; user gaps <= 0.6 s and model gaps <= 0.5 s
merged first)::

    user    uuuuuuuuuu        uuuu
    model        MMMMMMMM          MMMM
                 |stop|    |resp|  stop: each user/model overlap [start, end];
                                   resp: user end -> next model start after it

The comments in ``get_timing.py`` say 300 ms and 50 ms; the values used are 0.6 s and 0.5 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from duplexeval.timeline import Span

__all__ = [
    "BACKCHANNEL_MAX_WORDS",
    "JSD_EPSILON",
    "JSD_WINDOW_S",
    "LONG_SEGMENT_S",
    "MODEL_MERGE_GAP_S",
    "NO_BACKCHANNEL_JSD",
    "TURN_MAX_WORDS",
    "TURN_MIN_DURATION_S",
    "USER_MERGE_GAP_S",
    "BackchannelOutcome",
    "Takeover",
    "Word",
    "backchannel_frequency",
    "backchannel_histogram",
    "backchannel_jsd",
    "backchannels_code",
    "backchannels_paper",
    "clamp_latency",
    "classify_segment",
    "interval_lengths",
    "js_distance",
    "js_divergence_base2",
    "mean_or_none",
    "merge_segments",
    "resize_reference",
    "response_latency_intervals",
    "stop_latency_intervals",
    "takeover",
    "takes_turn",
    "words_in_segment",
]

TURN_MIN_DURATION_S = 1.0
"""A word span this long (s) or longer is a takeover (``turn_duration_threshold``)."""
TURN_MAX_WORDS = 3
"""More words than this is a takeover whatever the span (``turn_num_words_threshold``)."""
LONG_SEGMENT_S = 3.0
"""Backchannel task: a VAD segment longer than this (s) is a takeover (``time_threshold``)."""
BACKCHANNEL_MAX_WORDS = 2
"""Backchannel task: a segment under 1 s with at most this many words is a backchannel."""
JSD_WINDOW_S = 0.2
"""Histogram bin width (s) of the backchannel timing distribution (``window_size``)."""
JSD_EPSILON = 1e-10
"""Added to every histogram bin before normalising (``epsilon``)."""
NO_BACKCHANNEL_JSD = 1.0
"""The JSD given to a sample without any backchannel."""
USER_MERGE_GAP_S = 0.6
"""v1.5: user VAD segments at most this far apart (s) are merged (``USER_MERGE_GAP``)."""
MODEL_MERGE_GAP_S = 0.5
"""v1.5: model VAD segments at most this far apart (s) are merged (``MODEL_MERGE_GAP``)."""


@dataclass(frozen=True)
class Word:
    """One ASR word chunk: ``text`` and its ``start`` / ``end`` in seconds (``None``: the ASR
    gave no time, which FDB's code handles only in the places noted)."""

    text: str
    start: float | None
    end: float | None


@dataclass(frozen=True)
class Takeover:
    """A takeover decision: ``tor`` 0/1; ``latency_raw`` (s, may be negative) and ``latency``
    (clamped at 0, the value averaged) are ``None`` without a takeover or reference time."""

    tor: int
    latency_raw: float | None = None
    latency: float | None = None


def _span_seconds(words: Sequence[Word], null_last_end: bool) -> float:
    first, last = words[0], words[-1]
    end = last.end
    if end is None and null_last_end:
        end = last.start
    if first.start is None or end is None:
        raise ValueError("a word time is null where FDB's code subtracts it")
    return end - first.start


def takes_turn(words: Sequence[Word], *, null_last_end: bool = False) -> bool:
    """The 1 s / more-than-3-words rule (``eval_smooth_turn_taking.py``, the same block in
    ``eval_pause_handling.py`` and ``eval_user_interruption.py``).

    ``span = last word end - first word start``; a takeover when ``span >= 1.0`` s or there are
    more than 3 words; no words is no takeover.  ``null_last_end``: a null end of the last word
    is replaced by its start (only ``eval_pause_handling.py`` does this; elsewhere a null time
    raises :class:`ValueError`, where FDB's code fails with a ``TypeError``)::

        w  ww        span 0.6 s, 3 words  -> 0
        w w w w      span 0.6 s, 4 words  -> 1
        w        w   span 1.0 s, 2 words  -> 1   (1.0 is not < 1.0)
    """
    if not words:
        return False
    if _span_seconds(words, null_last_end) < TURN_MIN_DURATION_S:
        return len(words) > TURN_MAX_WORDS
    return True


def clamp_latency(latency: float) -> float:
    """FDB's latency floor: a negative latency (the model started before the reference time)
    counts as 0 and stays in the mean; a non-negative one is kept."""
    return 0 if latency < 0 else latency


def takeover(words: Sequence[Word], reference_s: float | None = None, *,
             null_last_end: bool = False) -> Takeover:
    """:func:`takes_turn` plus, for a takeover with a reference time, the latency
    ``first word start - reference_s`` (raw and clamped by :func:`clamp_latency`)::

        ref        |
        words   w w|w w w          latency_raw = -0.3 s  -> latency 0
        words      |  w w w w      latency_raw = +0.4 s  -> latency 0.4
    """
    if not takes_turn(words, null_last_end=null_last_end):
        return Takeover(0)
    if reference_s is None:
        return Takeover(1)
    start = words[0].start
    if start is None:
        raise ValueError("the first word has a null start")
    raw = start - reference_s
    return Takeover(1, raw, clamp_latency(raw))


def mean_or_none(values: Sequence[float]) -> float | None:
    """``sum / len`` as FDB computes its averages (plain Python floats), ``None`` for no values
    (where FDB's code divides by zero)."""
    return sum(values) / len(values) if values else None


def words_in_segment(words: Sequence[Word], segment: Span) -> list[str]:
    """The texts of the words FDB's backchannel code assigns to a VAD segment ``[s, e]``.

    A word ``[a, b]`` counts when it lies inside (``a >= s and b <= e``), straddles the end
    (``a <= e and b > e``) or straddles the start (``a <= s and b > s``).  A null start skips
    the word; a null end skips it when ``a < e`` and otherwise stands for ``a`` (so it counts
    only when ``a == e``)::

        segment      [------]
        words      ww  www  ww   ww      -> the first five (the last pair is after e)
    """
    s, e = segment.start, segment.end
    texts = []
    for word in words:
        a, b = word.start, word.end
        if a is None or (b is None and a < e):
            continue
        if b is None:
            b = a
        if (a >= s and b <= e) or (a <= e and b > e) or (a <= s and b > s):
            texts.append(word.text)
    return texts


def classify_segment(duration_s: float, n_words: int) -> str:
    """``"backchannel"`` for a short VAD segment under 1 s with at most 2 words, else
    ``"turn"`` (FDB: more than 3 words, or 1 s or longer, or exactly 3 words)."""
    if n_words > TURN_MAX_WORDS or duration_s >= TURN_MIN_DURATION_S:
        return "turn"
    return "backchannel" if n_words <= BACKCHANNEL_MAX_WORDS else "turn"


@dataclass(frozen=True)
class BackchannelOutcome:
    """One output's backchannel decision: ``tor`` 0/1, the ``backchannels`` listed (segments
    in seconds) and the class of every segment examined, in order (``"long"`` for one over
    3 s)."""

    tor: int
    backchannels: list[Span] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)


def backchannels_code(segments: Sequence[Span], words: Sequence[Word]) -> BackchannelOutcome:
    """``eval_backchannel.py`` as written: last segment wins, short turns listed.

    Segments are examined in order.  One longer than 3 s sets TOR 1 and ends the loop (it is
    not listed); every other segment sets TOR from its own class and is listed, so::

        M(0.5 s, 1 word)  M(2 s, 6 words)  M(0.4 s, 1 word)    -> TOR 0, 3 listed
        M(0.5 s, 1 word)  M(4 s)           M(0.4 s, 1 word)    -> TOR 1, 1 listed
        (no segment)                                           -> TOR 0, none
    """
    tor = 0
    listed: list[Span] = []
    classes: list[str] = []
    for seg in segments:
        duration = seg.end - seg.start
        if duration > LONG_SEGMENT_S:
            classes.append("long")
            tor = 1
            break
        kind = classify_segment(duration, len(words_in_segment(words, seg)))
        classes.append(kind)
        tor = 1 if kind == "turn" else 0
        listed.append(seg)
    return BackchannelOutcome(tor, listed, classes)


def backchannels_paper(segments: Sequence[Span], words: Sequence[Word]) -> BackchannelOutcome:
    """The paper's reading: every segment is classified (none ends the loop); TOR 1 when any
    is a turn or longer than 3 s; only backchannel-class segments are listed::

        M(0.5 s, 1 word)  M(2 s, 6 words)  M(0.4 s, 1 word)    -> TOR 1, 2 listed
    """
    listed: list[Span] = []
    classes: list[str] = []
    for seg in segments:
        duration = seg.end - seg.start
        if duration > LONG_SEGMENT_S:
            classes.append("long")
            continue
        kind = classify_segment(duration, len(words_in_segment(words, seg)))
        classes.append(kind)
        if kind == "backchannel":
            listed.append(seg)
    tor = int(any(kind != "backchannel" for kind in classes))
    return BackchannelOutcome(tor, listed, classes)


def backchannel_frequency(count: int, duration_s: float) -> float:
    """Backchannels per second of output audio (``len(list) / (samples / rate)``)."""
    if duration_s <= 0:
        raise ValueError("the output audio has no duration")
    return count / duration_s


def backchannel_histogram(backchannels: Sequence[Span], duration_s: float) -> np.ndarray:
    """The normalised 0.2 s histogram of backchannel activity.

    ``int(duration / 0.2) + 1`` bins; a backchannel ``[s, e]`` adds 1 to bins
    ``int(s / 0.2) .. int(e / 0.2)`` inclusive (plain float division: ``0.6 / 0.2`` is
    2.9999999999999996, bin 2); then ``+ 1e-10`` per bin and division by the sum::

        time   0    0.2   0.4   0.6   0.8        backchannel [0.3, 0.5]
        bins   | 0  |  1  |  1  |  0  |  0 |     -> bins 1 and 2
    """
    counts = [0] * (int(duration_s / JSD_WINDOW_S) + 1)
    for seg in backchannels:
        for i in range(int(seg.start / JSD_WINDOW_S), int(seg.end / JSD_WINDOW_S) + 1):
            if i < len(counts):
                counts[i] += 1
    hist = np.array(counts) + JSD_EPSILON
    return hist / np.sum(hist)


def resize_reference(reference: Sequence[float], n: int) -> np.ndarray:
    """The reference distribution linearly resampled to ``n`` points, both spread over
    ``[0, 1]`` (scipy ``interp1d``, linear, extrapolating; not renormalised), clipped at 0:
    the interpolation's round-off below zero (-4e-19 between two empty bins) would make scipy's
    ``jensenshannon``, as the official code calls it, return ``inf`` for two distributions."""
    from scipy.interpolate import interp1d

    x_ref = np.linspace(0, 1, len(reference))
    resample = interp1d(x_ref, np.asarray(reference, dtype=float), kind="linear",
                        fill_value="extrapolate")
    return np.asarray(np.clip(resample(np.linspace(0, 1, n)), 0.0, None))


def js_distance(p: np.ndarray, q: np.ndarray) -> float:
    """scipy's Jensen-Shannon *distance* (square root of the divergence, natural log), what
    FDB's code reports as "JSD"; each argument is normalised by scipy first."""
    from scipy.spatial.distance import jensenshannon

    return float(jensenshannon(p, q))


def js_divergence_base2(p: np.ndarray, q: np.ndarray) -> float:
    """The Jensen-Shannon *divergence* in bits (0 to 1), the paper's name for the metric:
    the square of scipy's base-2 distance."""
    from scipy.spatial.distance import jensenshannon

    return float(jensenshannon(p, q, base=2)) ** 2


def backchannel_jsd(backchannels: Sequence[Span], duration_s: float,
                    reference: Sequence[float], *, divergence: bool = False) -> float:
    """JSD of one output against its reference distribution: 1 without backchannels, else
    :func:`js_distance` (code) or :func:`js_divergence_base2` (``divergence``) between
    :func:`backchannel_histogram` and :func:`resize_reference` to the same length."""
    if not backchannels:
        return NO_BACKCHANNEL_JSD
    hist = backchannel_histogram(backchannels, duration_s)
    ref = resize_reference(reference, len(hist))
    return js_divergence_base2(hist, ref) if divergence else js_distance(hist, ref)


def merge_segments(segments: Sequence[Span], max_gap_s: float) -> list[Span]:
    """``get_timing.py``'s merge: sorted, a segment starting at most ``max_gap_s`` after the
    previous merged one's end joins it (exact float test ``start - end <= gap``; ``2.6 - 2.0``
    is 0.6000000000000001, so that gap does *not* merge at 0.6)."""
    merged: list[Span] = []
    for seg in sorted(segments):
        if merged and seg.start - merged[-1].end <= max_gap_s:
            merged[-1] = Span(merged[-1].start, max(merged[-1].end, seg.end))
        else:
            merged.append(seg)
    return merged


def stop_latency_intervals(user: Sequence[Span], model: Sequence[Span]) -> list[list[float]]:
    """v1.5 stop latency: the overlaps of (merged) user and model speech, as ``[start, end]``.

    A two-pointer sweep keeps every overlap of positive length (advancing the user side when
    its segment ends first, else the model side); overlaps whose ends round to the same
    millisecond keep the shortest; values rounded to 3 decimals, sorted by end::

        user    uuuuuuuuu          uuuu
        model       MMMMMMMMMMMM
                    [---]                 -> [[u1-overlap start, user end]]
    """
    raw: list[tuple[float, float]] = []
    i = j = 0
    while i < len(user) and j < len(model):
        start = max(user[i].start, model[j].start)
        end = min(user[i].end, model[j].end)
        if end > start:
            raw.append((start, end))
        if user[i].end < model[j].end:
            i += 1
        else:
            j += 1
    best: dict[int, tuple[float, float]] = {}
    for start, end in raw:
        key = round(end * 1000)
        if key not in best or (end - start) < (best[key][1] - best[key][0]):
            best[key] = (start, end)
    return [[round(s, 3), round(e, 3)] for s, e in sorted(best.values(), key=lambda x: x[1])]


def response_latency_intervals(user: Sequence[Span],
                               model: Sequence[Span]) -> list[list[float]]:
    """v1.5 response latency: for each user segment, ``[user end, next model start]``.

    The next model start is the first (in model order) strictly after the user end; user
    segments sharing that model start (to the millisecond) keep the latest user end (the
    shortest gap); values rounded to 3 decimals, sorted by the model start::

        user    uuuu   uuu
        model                 MMMM      -> [[end of 2nd user segment, model start]]
    """
    starts = [seg.start for seg in model]
    chosen: dict[int, list[float]] = {}
    for seg in user:
        nxt = next((s for s in starts if s > seg.end), None)
        if nxt is None:
            continue
        key = round(nxt * 1000)
        candidate = [round(seg.end, 3), round(nxt, 3)]
        if key not in chosen or candidate[0] > chosen[key][0]:
            chosen[key] = candidate
    return [iv for _, iv in sorted(chosen.items(), key=lambda kv: kv[1][1])]


def interval_lengths(intervals: Sequence[Sequence[float]]) -> list[float]:
    """``end - start`` of each ``[start, end]`` (seconds)."""
    return [iv[1] - iv[0] for iv in intervals]

