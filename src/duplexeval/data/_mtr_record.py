"""MTR-DuplexBench round annotations carried by a dataset record (the ``mtr`` field).

A dialogue of an MTR-style suite (``mtr-en``) is 10 rounds.  Round k is one user turn; the
system channel of the reference audio holds the reference system replies, the ground-truth
history MTR feeds before each round.  The record's ``mtr`` field (``Dialogue.extra["mtr"]``,
written at synthesis by :mod:`duplexeval.synth._mtr_synthesizer`, checked by ``duplexeval
validate``) says where every round and every feature is, so that per-round success can be computed.

Times are seconds from the start of the dialogue audio; a span is ``[start, end]``.  Round k's
*assistant window* runs from the start of round k's user turn to the end of round k+1's user
turn (MTR's definition), and for the last round to the end of the audio::

    user     |==u1==|          |==u2==|             |==u3==|          ...  |==u10==|
    system           |==reply 1==|    |==reply 2==|        |==reply 3=...        |==reply 10==|
    window 1 |------------------------|
    window 2                   |------------------------------------|
    window 10                                                              |------------ end

The field::

    {"version": 1, "group": "feature" | "combination" | "instruction_following" | "safety",
     "label": "smooth" | "interruption" | "pause" | "background" | "backchannel"
              | "S" | "S+I" | "S+I+P" | "S+I+P+B" | "if" | "safety",
     "user_channel": 0,
     "rounds": [{"round": 1, "features": ["pause"],
                 "user_span": [s, e], "window": [s, e], "reply_span": [s, e],
                 "pause_span": [s, e],            # pause: the silence inside the user turn
                 "interruption_span": [s, e],     # interruption: the user's barge-in turn
                 "overlap_span": [s, e],          #   and the reference speech still under it
                 "background_span": [s, e], "background_text": "...",
                 "background_gain_db": -20.0,     # background: the other voice
                 "backchannel_spans": [[s, e]],   # backchannel: the user's, during the reply
                 "item": "if-007", "question": "...", "answer": "...",   # instruction following
                 "item": "sf-012", "category": "weapons", "request": "..."  # safety
                }, ...]}

A feature's keys are present exactly when the feature is in ``features``; ``smooth`` (a
plain turn) has none.  ``reply_span`` is the reference reply of the round as placed, including
the words an interruption talks over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from duplexeval.data._dialogue import Dialogue

__all__ = ["FEATURES", "FEATURE_SAMPLES", "GROUPS", "MTR_FIELD", "MTR_VERSION", "feature_round",
           "mtr_problems"]

MTR_FIELD = "mtr"
"""The record field holding the round annotations."""
MTR_VERSION = 1
FEATURES = ("smooth", "interruption", "pause", "background", "backchannel")
"""MTR's conversational features, as named in the ``features`` of a round."""
GROUPS = ("feature", "combination", "instruction_following", "safety", "dialogue_quality")
_FEATURE_KEYS = {"pause": ("pause_span",), "interruption": ("interruption_span",),
                 "background": ("background_span", "background_text"),
                 "backchannel": ("backchannel_spans",)}
FEATURE_SAMPLES = {"smooth": ("smooth_turn_taking", "user_span"),
                   "background": ("smooth_turn_taking", "user_span"),
                   "interruption": ("barge_in", "interruption_span"),
                   "pause": ("pause_handling", "pause_span")}
"""Per feature with a per-round success, the plan task of the sample that stands for it and the
round span its event starts in: the shift at the user's end (``user_span``), the barge-in inside
the interruption, the held pause inside the pause."""
_GROUP_KEYS = {"instruction_following": ("item", "question", "answer"),
               "safety": ("item", "category", "request")}
_TOL = 2e-3


def _span(value: Any) -> tuple[float, float] | None:
    if (isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2
            and all(isinstance(x, int | float) for x in value) and value[0] <= value[1]):
        return float(value[0]), float(value[1])
    return None


def _inside(inner: tuple[float, float], outer: tuple[float, float]) -> bool:
    return outer[0] - _TOL <= inner[0] and inner[1] <= outer[1] + _TOL


def mtr_problems(dialogue: Dialogue) -> list[str]:
    """What is wrong with the dialogue's ``mtr`` field (none when it has no such field)."""
    record = dialogue.extra.get(MTR_FIELD)
    if record is None:
        return []
    where = f"dialogue {dialogue.id}: {MTR_FIELD}"
    if not isinstance(record, Mapping) or not isinstance(record.get("rounds"), list) \
            or not record["rounds"]:
        return [f"{where}: an object with a non-empty list 'rounds' expected"]
    problems = []
    if record.get("group") not in GROUPS:
        problems.append(f"{where}: group {record.get('group')!r} is not one of {GROUPS}")
    rounds = record["rounds"]
    spans = [_span(r.get("user_span")) if isinstance(r, Mapping) else None for r in rounds]
    if any(s is None for s in spans):
        return [*problems, f"{where}: every round needs a user_span [start, end]"]
    users: list[tuple[float, float]] = [s for s in spans if s is not None]
    duration = dialogue.audio.duration if dialogue.audio is not None else None
    for k, (r, user) in enumerate(zip(rounds, users, strict=True), start=1):
        problems += [f"{where}: round {k}: {p}" for p in
                     _round_problems(r, k, user, users, duration, str(record.get("group")))]
    return problems


def _round_problems(r: Mapping[str, Any], k: int, user: tuple[float, float],
                    users: list[tuple[float, float]], duration: float | None,
                    group: str) -> list[str]:
    """The problems of round ``k`` (1-based): numbering, its span against the previous round,
    its window, its features' keys and where their spans lie.  ``duration``: the audio's
    length (s), ``None`` when the audio is absent (the last window's end is then not
    checked)."""
    out = []
    if r.get("round") != k:
        out.append(f"'round' is {r.get('round')!r}, expected {k}")
    if user[0] < -_TOL or user[1] - user[0] <= 0 or (duration is not None
                                                     and user[1] > duration + _TOL):
        out.append(f"user_span {list(user)} is empty or outside the audio")
    if k > 1 and user[0] < users[k - 2][1] - _TOL:
        out.append("user_span overlaps the previous round's")
    window = _span(r.get("window"))
    last = duration if duration is not None else max(user[1], window[1] if window else 0.0)
    expected = (user[0], users[k][1] if k < len(users) else last)
    if window is None or abs(window[0] - expected[0]) > _TOL \
            or abs(window[1] - expected[1]) > _TOL:
        out.append(f"window {r.get('window')!r}, expected {[round(x, 3) for x in expected]} "
                   "(this user turn's start to the next one's end)")
        window = expected
    features = r.get("features")
    if not isinstance(features, list) or not features or any(f not in FEATURES
                                                             for f in features):
        return [*out, f"features {features!r}: a non-empty list of {FEATURES}"]
    if "smooth" in features and len(features) > 1:
        out.append("'smooth' is a round without any other feature")
    for feature, keys in _FEATURE_KEYS.items():
        for key in keys:
            if (key in r) != (feature in features):
                out.append(f"{key} is given exactly when {feature!r} is a feature")
    for key in ("pause_span", "interruption_span", "background_span"):
        if key in r and (_span(r[key]) is None or not _inside(_span(r[key]), window)):  # type: ignore[arg-type]
            out.append(f"{key} {r[key]!r} is not a span inside the window")
    if "pause_span" in r and _span(r["pause_span"]) is not None \
            and not _inside(_span(r["pause_span"]), user):  # type: ignore[arg-type]
        out.append("pause_span is not inside the user turn")
    for bc in r.get("backchannel_spans") or ():
        if _span(bc) is None or not _inside(_span(bc), window):  # type: ignore[arg-type]
            out.append(f"backchannel span {bc!r} is not inside the window")
    out += [f"{group} round without {key!r}" for key in _GROUP_KEYS.get(group, ())
            if not r.get(key)]
    return out


def feature_round(rounds: Iterable[Mapping[str, Any]], feature: str, task: str,
                  event_start: float) -> int | None:
    """The round whose ``feature`` a sample of plan task ``task`` starting at ``event_start``
    (dialogue seconds) stands for (:data:`FEATURE_SAMPLES`, both span ends inclusive within
    2 ms), or ``None``."""
    wanted, key = FEATURE_SAMPLES[feature]
    if task != wanted:
        return None
    for r in rounds:
        span = _span(r.get(key))
        if feature in r.get("features", ()) and span is not None \
                and span[0] - _TOL <= event_start <= span[1] + _TOL:
            return int(r["round"])
    return None
