"""The simulated user of the ``interactive`` protocol: its policy, the streaming detector it
hears the system through, its items and the state machine that schedules them
(:mod:`duplexeval.runs._interactive` runs a session with them; its docstring states the
scheduling rules and their units)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from duplexeval.data._dialogue import Dialogue
from duplexeval.events import EventKind
from duplexeval.timeline import Span, approx_eq, time_le

__all__ = ["SimulatedUser", "StreamDetector", "UserItem", "UserPolicy", "draw_gaps",
           "reference_gaps", "user_items"]


def reference_gaps(dialogues: Iterable[Dialogue]) -> tuple[float, ...]:
    """The suite's reference gap distribution: ``end - start`` of every TURN_SHIFT with a
    positive gap (seconds), in dataset order."""
    return tuple(e.end - e.start for d in dialogues for e in d.events
                 if e.kind is EventKind.TURN_SHIFT and e.end > e.start)


@dataclass(frozen=True)
class UserPolicy:
    """How the simulated user reacts (seconds); recorded in the log header."""

    gaps: tuple[float, ...] = (0.4,)
    """Pool the turn gaps are drawn from (:func:`reference_gaps`)."""
    patience: float = 3.0
    barge_in_after: float = 1.0
    bc_after: float = 1.0
    yield_delay: float = 0.2
    yield_to_barge_in: bool = True
    """Yield when the system barges in, where the reference dialogue says the user yielded."""
    threshold_db: float = -45.0
    """Detector: a frame is system speech when its RMS is above this (dBFS)."""
    onset_frames: int = 3
    offset_frames: int = 25
    """Detector hangover: silent frames before an offset (25 x 20 ms bridges the pauses
    inside a spoken turn)."""
    tail: float = 2.0
    """Seconds stepped after the last item ends (and the system falls silent)."""

    def __post_init__(self) -> None:
        values = (*self.gaps, self.patience, self.barge_in_after, self.bc_after,
                  self.yield_delay, self.tail)
        if not self.gaps or any(not np.isfinite(v) or v < 0 for v in values):
            raise ValueError("interactive user policy: gaps and delays must be finite, >= 0")
        if self.onset_frames < 1 or self.offset_frames < 1:
            raise ValueError("interactive user policy: detector frames must be >= 1")

    def to_json(self) -> dict[str, Any]:
        """Plain data, as the log's header and ``config.json`` record it."""
        return {**asdict(self), "gaps": list(self.gaps)}


class StreamDetector:
    """A causal energy detector with hysteresis over the system's output frames."""

    def __init__(self, threshold_db: float, onset_frames: int, offset_frames: int) -> None:
        self.level = 10 ** (threshold_db / 20)
        self.onset_frames, self.offset_frames = onset_frames, offset_frames
        self.speaking = False
        self.run = 0
        self.onset_frame: int | None = None
        self.offset_frame: int | None = None

    def push(self, frame: np.ndarray, k: int) -> str | None:
        """Feed output frame ``k``; returns ``"onset"``/``"offset"`` when one is declared."""
        x = np.asarray(frame, dtype=np.float64)
        active = bool(len(x)) and float(np.sqrt(np.mean(x * x))) > self.level
        if active != self.speaking:
            self.run += 1
            if active and self.run >= self.onset_frames:
                self.speaking, self.run, self.onset_frame = True, 0, k
                return "onset"
            if not active and self.run >= self.offset_frames:
                self.speaking, self.run, self.offset_frame = False, 0, k
                return "offset"
        else:
            self.run = 0
        return None

    def state(self) -> dict[str, Any]:
        """What the user hears now (for the log)."""
        return {"system_speaking": self.speaking, "onset_frame": self.onset_frame,
                "offset_frame": self.offset_frame}


@dataclass(frozen=True)
class UserItem:
    """One reference user IPU to replay (``kind`` turn, barge_in or backchannel), or a
    stretch of background speech on the user's channel (``background``)."""

    index: int
    kind: str
    ref: Span
    yields: bool
    """The reference has a system BARGE_IN inside this turn (the user yielded there)."""
    pause: float | None = None
    """Seconds of the user's own pause before this turn when it resumes the user's turn (a
    user TURN_HOLD ends at its start; ``None``: it does not)."""
    lead: float | None = None
    """Background speech: seconds from the start of the reference system turn it falls in
    to its start (``None``: it falls in none, or the item is no background)."""
    after: float | None = None
    """Background speech in no reference system turn: seconds from the end of the user's
    previous item to its start."""

    @property
    def acts_alone(self) -> bool:
        """A backchannel or background speech: it neither holds the user's floor nor
        blocks the next item while it plays."""
        return self.kind in ("backchannel", "background")


def user_items(dialogue: Dialogue, user: int) -> list[UserItem]:
    """The user channel's TURN and BC events as items, in start order."""
    system = 1 - user
    barge = [e.start for e in dialogue.events if e.channel == user
             and e.kind is EventKind.BARGE_IN]
    sys_barge = [e.start for e in dialogue.events if e.channel == system
                 and e.kind is EventKind.BARGE_IN]
    holds = [e for e in dialogue.events if e.channel == user and e.kind is EventKind.TURN_HOLD]
    ipus = sorted((e for e in dialogue.events if e.channel == user
                   and e.kind in (EventKind.TURN, EventKind.BC)), key=lambda e: e.start)
    items = []
    for i, e in enumerate(ipus):
        kind = "backchannel" if e.kind is EventKind.BC else (
            "barge_in" if any(abs(b - e.start) < 1e-6 for b in barge) else "turn")
        yields = any(time_le(e.start, b) and time_le(b, e.end) for b in sys_barge)
        hold = next((h for h in holds if approx_eq(h.end, e.start)), None)
        pause = hold.end - hold.start if hold is not None and kind == "turn" else None
        items.append(UserItem(i, kind, Span(e.start, e.end), yields, pause))
    items += _background_items(dialogue, user)
    items.sort(key=lambda it: (it.ref.start, it.index))
    return [replace(it, index=i) for i, it in enumerate(items)]


def _background_items(dialogue: Dialogue, user: int) -> list[UserItem]:
    """The background speech placed on the user's channel (``background_speech`` of the
    record: channel, start, end), as items (indices set by the caller)."""
    placed = dialogue.extra.get("background_speech")
    if not isinstance(placed, list | tuple):
        return []
    system_turns = [e for e in dialogue.events
                    if e.channel == 1 - user and e.kind is EventKind.TURN]
    user_ends = [e.end for e in dialogue.events if e.channel == user
                 and e.kind in (EventKind.TURN, EventKind.BC)]
    out = []
    for b in placed:
        if not isinstance(b, Mapping) or int(b.get("channel", -1)) != user:
            continue
        span = Span(float(b["start"]), float(b["end"]))
        turn = next((t for t in system_turns
                     if time_le(t.start, span.start) and time_le(span.start, t.end)), None)
        before = [end for end in user_ends if time_le(end, span.start)]
        after = span.start - max(before) if turn is None and before else \
            span.start if turn is None else None
        out.append(UserItem(-1, "background", span, False,
                            lead=None if turn is None else span.start - turn.start,
                            after=after))
    return out


class SimulatedUser:
    """The scheduling state machine (module docstring); acts on frame boundaries."""

    def __init__(self, items: list[UserItem], gaps: list[float], policy: UserPolicy,
                 spf: float) -> None:
        self.items, self.gaps, self.p, self.spf = items, gaps, policy, spf
        self.next = 0
        self.playing: dict[int, tuple[int, int]] = {}  # item -> (start frame, end frame)
        self.done_frame = 0
        self.pending: tuple[int, str, str] | None = None  # (frame, action, why)
        self.onset_seen_after_done = False

    def frames(self, seconds: float) -> int:
        return max(0, round(seconds / self.spf))

    def decide(self, k: int, heard: str | None, det: StreamDetector) -> list[tuple[str, int, str]]:
        """Actions effective from frame ``k + 1`` after hearing frame ``k``."""
        out: list[tuple[str, int, str]] = []
        turn = next((i for i in self.playing if not self.items[i].acts_alone), None)
        if heard == "onset":
            self.onset_seen_after_done = True
            if turn is not None and self.items[turn].yields and self.p.yield_to_barge_in:
                self.pending = (k + self.frames(self.p.yield_delay), "yield",
                                f"system onset heard at frame {k} while user item {turn} talks")
        if self.pending is not None and self.pending[1] == "yield" and k >= self.pending[0]:
            if turn is not None:
                out.append(("yield", turn, self.pending[2]))
            self.pending = None
        if self.next >= len(self.items) or turn is not None:
            return out
        item = self.items[self.next]
        start_ok = False
        why = ""
        if item.kind == "barge_in":
            if det.speaking and det.onset_frame is not None and \
                    k >= det.onset_frame + self.frames(self.p.barge_in_after) and \
                    det.onset_frame >= self.done_frame:
                start_ok, why = True, f"barge_in_after {self.p.barge_in_after} s after onset " \
                                      f"at frame {det.onset_frame}"
        elif item.kind == "backchannel" and det.onset_frame is not None and \
                det.onset_frame >= self.done_frame and \
                k >= det.onset_frame + self.frames(self.p.bc_after):
            if det.speaking:
                start_ok, why = True, f"bc_after {self.p.bc_after} s into system speech"
            else:
                out.append(("skip", item.index, "system stopped before the backchannel"))
                self.next += 1
                return out
        elif item.kind == "background":
            return out + self._background(item, k, det)
        if item.kind == "backchannel" and not start_ok and self._nothing_to_act_into(k, det):
            out.append(("skip", item.index, f"patience {self.p.patience} s: no system speech "
                                            "to backchannel into"))
            self.next += 1
            return out
        if item.kind != "backchannel" and not start_ok and not det.speaking:
            gap = self.gaps[item.index]
            if self.next == 0:
                if k + 1 >= self.frames(item.ref.start):
                    start_ok, why = True, "first item at its reference start"
            elif det.offset_frame is not None and det.offset_frame >= self.done_frame and \
                    k + 1 >= det.offset_frame + self.frames(gap):
                start_ok, why = True, f"gap {gap:.6f} s after system offset at frame " \
                                      f"{det.offset_frame}"
            elif not self.onset_seen_after_done and item.pause is not None:
                if k + 1 >= self.done_frame + self.frames(item.pause):
                    start_ok, why = True, f"pause {item.pause:.6f} s: the user resumes its " \
                                          "own turn, system silent"
            elif not self.onset_seen_after_done and \
                    k + 1 >= self.done_frame + self.frames(self.p.patience):
                start_ok, why = True, f"patience {self.p.patience} s: system silent"
        if start_ok:
            out.append(("start", item.index, why))
            self.next += 1
        return out


    def _background(self, item: UserItem, k: int,
                    det: StreamDetector) -> list[tuple[str, int, str]]:
        """Background speech (module docstring): started, skipped, or left waiting."""
        if item.lead is None:
            if k + 1 < self.done_frame + self.frames(item.after or 0.0):
                return []
            self.next += 1
            return [("start", item.index, f"background {item.after or 0.0:.6f} s after the "
                                          "user's previous item, as in the reference")]
        if det.onset_frame is None or det.onset_frame < self.done_frame or \
                k < det.onset_frame + self.frames(item.lead):
            if not self._nothing_to_act_into(k, det):
                return []
            self.next += 1
            return [("skip", item.index, f"patience {self.p.patience} s: no system speech "
                                         "for the background speech")]
        self.next += 1
        if not det.speaking:
            return [("skip", item.index, "system stopped before the background speech")]
        return [("start", item.index, f"background {item.lead:.6f} s into system speech, as "
                                      "in the reference turn")]


    def _nothing_to_act_into(self, k: int, det: StreamDetector) -> bool:
        """A backchannel or background speech waiting for a system onset gives up: the
        system has been silent ``patience`` since the user's last act (and since its last
        heard offset), with no onset heard after that act."""
        if det.speaking or (det.onset_frame is not None and det.onset_frame >= self.done_frame):
            return False
        since = max(self.done_frame, det.offset_frame or 0)
        return k + 1 >= since + self.frames(self.p.patience)


def draw_gaps(policy: UserPolicy, n: int, seed: int) -> list[float]:
    gen = np.random.default_rng(seed)
    pool = np.asarray(policy.gaps, dtype=np.float64)
    return [float(pool[int(gen.integers(len(pool)))]) for _ in range(n)]
