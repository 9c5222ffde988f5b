"""FLEXI's metric rules as pure functions over words and speech segments (seconds).

FLEXI (Ge et al. 2025, ``../shared/seeds/003_055ce2539501aabf.txt``) scores six scenarios;
its released evaluators are ``evaluate/eval_*.py`` in ``ChristineCHEN274/FLEXI`` @2247b0d.
Each function here is one rule of those evaluators, independent of FLEXI's folder format, so
that the ``flexi`` timing variant over our own runs and ``duplexeval score --peer flexi``
share them.  Where the code and the paper differ, the function takes the convention as an
argument and its docstring says which is which.

Inputs
------
* a :class:`Word` is one ASR word (``text``, ``start``, ``end`` in seconds; FLEXI's
  ``output.json`` chunk ``{"text", "timestamp": [start, end]}``); ``start``/``end`` may be
  ``None`` only where a rule says how it treats them;
* a segment is a ``(start, end)`` pair of seconds (a VAD region, FLEXI's Silero output).

Every time is in seconds on the input's timeline; every comparison is the plain float
comparison the code makes (no tolerance), so values at a threshold fall as the code puts them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from duplexeval.metrics.timing import _fdb_rules as fdb_rules
from duplexeval.metrics.timing._fdb_rules import Word
from duplexeval.timeline import Span

__all__ = [
    "BACKCHANNEL_GAP_CODE", "BACKCHANNEL_GAP_PAPER", "BC_WINDOW", "HOLD_CLUSTER", "JSD_EPSILON",
    "MODEL_INTERRUPT_MARGIN", "RESPONSE_EPS", "Backchannels", "InterruptOutcome", "TurnTaking",
    "Word", "backchannel_distribution", "backchannel_split", "backchannel_time_from_input",
    "classify_model_backchannels", "interrupt_outcome", "jsd", "latency_level",
    "model_interrupt_delay", "new_response", "pause_takeover", "pause_window_end",
    "resize_reference", "takes_turn", "turn_taking", "words_in_segment",
]

TURN_SECONDS = 1.0
"""A takeover lasts at least this long (seconds) ... (``eval_turn_taking.py`` l. 7)."""
TURN_WORDS = 3
"""... or has more than this many words (l. 8)."""
HOLD_CLUSTER = 3.0
"""User interrupt: an overlap cluster this long (seconds) or longer means the model did not
yield (``eval_user_interrupt.py`` l. 99)."""
CLUSTER_GAP = 1.0
"""User interrupt: a later word more than this far (seconds) after the cluster closes it
(l. 96)."""
RESPONSE_EPS = 0.15
"""User interrupt: a new response starts at least this long after the interruption (l. 8)."""
MODEL_INTERRUPT_MARGIN = 0.5
"""Model interrupt: the model interrupts when it starts more than this long (seconds) before
the user's last word ends (``eval_model_interrupt.py`` l. 99)."""
BACKCHANNEL_GAP_CODE = 1.5
"""User backchannel: the code's gap (seconds) that marks a yield (``eval_user_backchannel.py``
l. 30, 112)."""
BACKCHANNEL_GAP_PAPER = 1.0
"""User backchannel: the paper's 1 s ("resumes its original utterance within 1 second")."""
BC_WINDOW = 0.2
"""Model backchannel: histogram bin (seconds) (``eval_model_backchannel.py`` l. 11)."""
JSD_EPSILON = 1e-10
"""Model backchannel: added to every bin before normalising (l. 12)."""
BC_MAX_SEGMENT = 3.0
"""Model backchannel: a VAD segment longer than this (seconds) is a turn (l. 13, 63)."""


def _start(w: Word) -> float:
    if w.start is None:
        raise ValueError(f"word {w.text!r} has no start time")
    return w.start


def _end(w: Word) -> float:
    if w.end is None:
        raise ValueError(f"word {w.text!r} has no end time")
    return w.end


# -- turn taking (paper eq. 7; eval_turn_taking.py) --------------------------------------------

def takes_turn(words: Sequence[Word]) -> bool:
    """Eq. 7's TO: the model's words form a turn, not silence or a backchannel.

    Code rule (``eval_turn_taking.py`` l. 62-75, Full-Duplex-Bench's): no words is silence;
    otherwise a turn when the words span at least 1 s (first start to last end) *or* number
    more than 3::

        user  ====== |
        model         yeah ok              -> 0.4 s, 2 words: not a turn (BC)
        model         sure here are some   -> 4 words: a turn
        model         well ............    -> 1.2 s: a turn
    """
    if not words:
        return False
    span = _end(words[-1]) - _start(words[0])
    return span >= TURN_SECONDS or len(words) > TURN_WORDS


@dataclass(frozen=True, slots=True)
class TurnTaking:
    """One turn-taking sample: ``tor`` 0/1, ``latency`` (seconds, ``None`` without a
    takeover; negative when the model started early) and ``jump_in`` (a takeover with
    negative latency)."""

    tor: int
    latency: float | None

    @property
    def jump_in(self) -> bool:
        return self.tor == 1 and self.latency is not None and self.latency < 0


def turn_taking(words: Sequence[Word], user_end: float) -> TurnTaking:
    """TOR and latency of one sample (``eval_turn_taking.py`` l. 61-82)::

        user   ======|               user_end
        model          |==== ....    latency = first word start - user_end  (> 0)
        model      |====== ....      latency < 0: a jump-in (JIR numerator)

    ``user_end`` is what the code reads as the user's end: the *start* of the annotated
    turn-taking event (``turn_taking.json[0].timestamp[0]``, l. 50).  Aggregation (l. 78-97):
    TOR = mean over all samples; Latency = mean of the non-negative latencies of takeovers
    (early starts are left out, 0 when none); JIR = jump-ins / all samples.
    """
    if not takes_turn(words):
        return TurnTaking(0, None)
    return TurnTaking(1, _start(words[0]) - user_end)


def latency_level(seconds: float) -> int:
    """FLEXI's interaction level of a latency (paper section 1): 1 below 150 ms, 2 below
    400 ms, else 3."""
    if seconds < 0.150:
        return 1
    return 2 if seconds < 0.400 else 3


# -- pause handling (eval_pause_handing.py) ----------------------------------------------------

def pause_window_end(pause_start: float, pause_end: float, latency: float) -> float:
    """The end of the pause window with the latency allowance (l. 19-36)::

        user   ====|  pause  |=====
                   ps       pe
        window     [ps, pe + max(L - (pe - ps), 0)]

    i.e. the window lasts ``max(pause duration, L)``.  ``L`` is the model's turn-taking
    latency; the code takes it from ``--latency`` (default 0), the paper from the model's
    average response latency.
    """
    duration = pause_end - pause_start
    return pause_end + max(latency - duration, 0.0)


def pause_window_end_paper(pause_start: float, pause_end: float, latency: float) -> float:
    """The end of the pause window as the paper defines it: the pause **plus** the model's
    latency ``L`` (the code's window, :func:`pause_window_end`, lasts ``max(pause, L)``)::

        user   ====|  pause  |=====
                   ps       pe
        window     [ps, pe + L]
    """
    return pause_end + max(latency, 0.0)


def pause_takeover(first_start: float, pause_start: float, window_end: float,
                   user_last_end: float) -> int:
    """TOR of one pause sample (l. 88-93): 1 when the model's *first* word starts inside
    ``[pause_start, window_end]`` (closed), 0 otherwise and always 0 when it starts after the
    user's last word ends::

        user   ====|  pause  |=====|
        model           |===           -> 1 (took over in the pause)
        model                       |= -> 0 (waited for the end)

    A model with no words is not scored here: the code skips it (it leaves the denominator);
    the paper counts it as no takeover (0).
    """
    if first_start > user_last_end:
        return 0
    return 1 if pause_start <= first_start <= window_end else 0


# -- user interrupt (eval_user_interrupt.py) ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class InterruptOutcome:
    """``tor`` 1 = the model did *not* yield (TTR = 1 - mean TOR); ``cluster`` the overlap
    cluster ``(start, end)`` when a later word closed it (the code averages its length as
    "Latency"), else ``None``."""

    tor: int
    cluster: tuple[float, float] | None


def interrupt_outcome(words: Sequence[Word], ui_start: float, ui_end: float,
                      paper: bool = False) -> InterruptOutcome:
    """Did the model yield to the interruption ``[ui_start, ui_end]``? (l. 83-106)::

        user           |== interrupt ==|
        model   ===========|               |=====      cluster 3.2 s >= 3: TOR 1
        model   ====  ==|                  |=====      cluster 1.0 s <  3: TOR 0
                cluster: words overlapping the interruption, first start to last end
                closed by the first later word starting > 1 s after the cluster's end
                (measured from the cluster, not from the previous later word)

    Code conventions reproduced: the decision is taken only when a later word closes the
    cluster; when none does (the model went silent, or kept talking with gaps <= 1 s) TOR
    stays 1 and no cluster length is counted.  A model that never overlapped has a cluster
    ``(0, 0)`` (length 0) and yields at its first word more than 1 s after time 0 past the
    interruption.  A word starting at exactly 0.0 restarts the cluster (the code tests
    ``start == 0`` as "no cluster yet").

    ``paper`` (the paper's "turns correctly terminated"): a model that says nothing after the
    overlap (or, without overlap, after the interruption starts) has terminated its turn, so
    such an unclosed cluster shorter than 3 s is a yield too; and a word at 0.0 is an ordinary
    cluster start.
    """
    c_start, c_end, started = 0.0, 0.0, False
    for w in words:
        s, e = _start(w), _end(w)
        if s < ui_end and e > ui_start:
            if (started if paper else c_start != 0):
                c_end = e
            else:
                c_start, c_end, started = s, e, True
            continue
        if (s > ui_end or e > ui_end) and s - c_end > CLUSTER_GAP:
            tor = 0 if c_end - c_start < HOLD_CLUSTER else 1
            return InterruptOutcome(tor, (c_start, c_end))
    last = c_end if started else ui_start
    if paper and all(_start(w) <= last for w in words) and c_end - c_start < HOLD_CLUSTER:
        return InterruptOutcome(0, (c_start, c_end))
    return InterruptOutcome(1, None)


def new_response(words: Sequence[Word], ui_end: float) -> tuple[bool, float | None]:
    """Whether the model answered after the interruption, and its latency (l. 109-133).

    The answer is the words starting at or after ``ui_end + 0.15``; it counts when it spans at
    least 1 s or has more than 3 whitespace-separated words (texts joined).  Latency = its
    first start - ``ui_end`` (``None`` without an answer).  The code keeps these latencies but
    prints the cluster mean instead; they gate the judge's rating (not computed here).
    """
    after = [w for w in words if _start(w) >= ui_end + RESPONSE_EPS]
    if not after:
        return False, None
    text = " ".join(w.text.strip() for w in after if w.text.strip())
    span = _end(after[-1]) - _start(after[0])
    if span >= TURN_SECONDS or len(text.split()) > TURN_WORDS:
        return True, _start(after[0]) - ui_end
    return False, None


# -- model interrupt (eval_model_interrupt.py) -------------------------------------------------

def model_interrupt_delay(user_last_end: float, model_first_start: float) -> tuple[float, bool]:
    """The model's start relative to the user's last word end, and whether it interrupted
    (l. 94-100)::

        user   ==============|
        model       |====         delay = -1.4 s < -0.5: interrupted
        model                |=== delay = 0.1 s: not

    The code prints the *count* of interruptions as "TOR"; the paper's Table 3 reports a rate.
    """
    delay = model_first_start - user_last_end
    return delay, delay < -MODEL_INTERRUPT_MARGIN


# -- user backchannel (eval_user_backchannel.py) -----------------------------------------------

def backchannel_time_from_input(words: Sequence[Word],
                                gap: float = BACKCHANNEL_GAP_CODE) -> float | None:
    """Where the user's backchannel starts, read off the input's words (l. 13-38)::

        user   query words ...|   > 1.5 s   |okay
                                            ^ backchannel time

    The start of the first word that follows a gap longer than ``gap``; ``None`` when there is
    none (the code then falls back to ``metadata.json``'s first ``user_backchannel_times``).
    Fewer than two words: ``None`` too (the code skips the sample).
    """
    for prev, cur in itertools.pairwise(words):
        if _start(cur) - _end(prev) > gap:
            return _start(cur)
    return None


def backchannel_split(words: Sequence[Word], backchannel_time: float,
                      gap: float = BACKCHANNEL_GAP_CODE, paper: bool = False) -> int | None:
    """The model yielded to the backchannel: the index of the first word after the gap, or
    ``None`` (l. 95-117)::

        user                 |okay            backchannel time b
        model  ===== word_i-1 word_i |  > gap  | word_i+1 ...   -> split before word_i+1

    Code rule: gap *i* lies between words *i* and *i+1*; it counts when longer than ``gap``
    (1.5 s) and ``min(start of word i, end of word i-1) <= b``.  For ``i = 0`` the code's
    "word -1" is the *last* word (Python indexing), reproduced here.  The words before the
    split and after it are what the judge rates for coherence.

    ``paper``: the gap counts when it opens at or before ``b + gap`` and closes after ``b``,
    i.e. the model was silent around the backchannel for longer than ``gap`` (the paper's
    "resumes within 1 second" with ``gap`` = 1).
    """
    for i in range(len(words) - 1):
        silence = _start(words[i + 1]) - _end(words[i])
        if silence <= gap:
            continue
        if paper:
            if _end(words[i]) <= backchannel_time + gap and _start(words[i + 1]) > backchannel_time:
                return i + 1
        elif min(_start(words[i]), _end(words[i - 1])) <= backchannel_time:
            return i + 1
    return None


# -- model backchannel (eval_model_backchannel.py) ---------------------------------------------

def words_in_segment(words: Sequence[Word], start: float, end: float) -> list[str]:
    """The texts of the words the code assigns to the VAD segment ``[start, end]``
    (l. 74-95)::

        segment        [=========]
        inside           [ab] [cd]        start >= s and end <= e
        over the end            [ef--]    start <= e and end > e
        over the start [-gh]              start <= s and end > s

    A word without a start is ignored; a word without an end is ignored when it starts before
    the segment's end, else treated as zero-length.
    """
    return fdb_rules.words_in_segment(words, Span(start, end))


@dataclass(frozen=True, slots=True)
class Backchannels:
    """The model-backchannel classification of one output: ``tor`` (1 = the model took the
    turn, by the code's rule) and the backchannel segments ``(start, end)`` kept."""

    tor: int
    segments: tuple[tuple[float, float], ...]


def classify_model_backchannels(segments: Sequence[tuple[float, float]],
                                words: Sequence[Word]) -> Backchannels:
    """Classify the VAD segments of the model's output in order (l. 56-117)::

        model  [bc] [bc]   [turn ......]  [bc]      -> backchannels: the last one only
        model  [bc] [bc] [======== > 3 s ====...    -> stop: TOR 1, backchannels: both

    A segment longer than 3 s is a turn: TOR = 1 and classification stops (the backchannels
    found so far are kept).  Otherwise a segment of 1 s or more, or one with 3 or more words
    (:func:`words_in_segment`; the code tests "> 3", then "<= 2" under 1 s), is a turn, which
    *empties* the backchannel list (FLEXI's change from Full-Duplex-Bench); else it is a
    backchannel.  TOR is the class of the last segment examined (0 without segments), as in
    the code.
    """
    tor = 0
    kept: list[tuple[float, float]] = []
    for start, end in segments:
        duration = end - start
        if duration > BC_MAX_SEGMENT:
            tor = 1
            break
        n = len(words_in_segment(words, start, end))
        tor = 1 if n > 2 or duration >= 1 else 0
        if tor:
            kept = []
        else:
            kept.append((start, end))
    return Backchannels(tor, tuple(kept))


def backchannel_distribution(segments: Sequence[tuple[float, float]],
                             duration: float) -> np.ndarray:
    """The model's backchannel histogram over 0.2 s bins, normalised (l. 127-139)::

        bins   |0.0|0.2|0.4|0.6| ...   int(duration / 0.2) + 1 bins
        bc          [=====]            counts bins int(s/0.2) .. int(e/0.2), inclusive

    Every bin gets 1e-10 before normalising.  ``int(x / 0.2)`` is the code's float
    arithmetic (0.6 / 0.2 = 2.9999999999999996 -> bin 2).
    """
    bins = np.zeros(int(duration / BC_WINDOW) + 1)
    for start, end in segments:
        for i in range(int(start / BC_WINDOW), int(end / BC_WINDOW) + 1):
            if i < len(bins):
                bins[i] += 1
    bins = bins + JSD_EPSILON
    return bins / np.sum(bins)


def resize_reference(reference: Sequence[float], n: int) -> np.ndarray:
    """The reference distribution stretched to ``n`` bins by linear interpolation on [0, 1]
    (l. 143-149, ``scipy.interpolate.interp1d``; not renormalised: the JSD normalises).  A
    reference needs at least two bins.

    The interpolation's round-off below zero (e.g. -4e-19 between two empty bins) is clipped
    to 0: with it, scipy's ``jensenshannon`` (as FLEXI's code calls it) returns ``inf``."""
    if np.asarray(reference).ndim != 1 or len(reference) < 2:
        raise ValueError("a reference distribution needs at least two bins")
    return fdb_rules.resize_reference(reference, n)


def jsd(p: np.ndarray, q: np.ndarray, paper: bool = False) -> float:
    """Jensen-Shannon between two histograms (each normalised to sum 1 first).

    ``paper`` false (the code, l. 154): ``scipy.spatial.distance.jensenshannon``, the JS
    *distance* sqrt(JSD) with natural logs, at most sqrt(ln 2) = 0.833.  ``paper`` true (eq. 8):
    the JS *divergence* with base-2 logs, from 0 to 1.
    """
    from scipy.spatial.distance import jensenshannon

    if paper:
        return float(jensenshannon(p, q, base=2) ** 2)
    return float(jensenshannon(p, q))
