"""The ``interactive`` protocol: a deterministic, reactive simulated user.

The user replays the reference user turns of a dialogue (the same audio) but schedules each in
reaction to what it *hears* of the system, its output audio, through a declared streaming
detector (:class:`StreamDetector`); it never reads the system's internals.  One session runs
per (dialogue, user channel) from time 0, frame by frame, with no fork: every user decision
after the first depends on the system, so no two runs of different systems (or seeds) share a
prefix past it, and the executor's shared prefixes and batched forks do not apply.

Items: the reference user IPUs (TURN and BC events of the user channel) and the background
speech placed on the user's channel (``background_speech`` of the record), in start order.  A
TURN that starts a user BARGE_IN event is a barge-in item.

Scheduling (``t`` in realised dialogue seconds, decisions at frame ends)::

    first item          at its reference start time
    turn                gap_i after the detector declares the system's offset, or
                        patience after the previous user item ended when the system is silent
                        (no system onset heard since)
    continuation        a turn that resumes the user's own turn after a pause (a user
                        TURN_HOLD ends where it starts): the reference pause after the previous
                        item ended when the system is silent, else as a turn (the gap after
                        the system's offset)
    barge-in            barge_in_after after the detector declares a system onset
    backchannel         bc_after after a system onset, if the system is still heard then
                        (else skipped, logged); skipped too when no system onset comes
                        within patience of the user's last act and the system's offset
    background          background speech on the user's channel (the record's
                        ``background_speech``, MTR's other voice): as far after a system onset
                        as the reference places it after the start of the reference system
                        turn it falls in, if the system is still heard then (else skipped,
                        logged; skipped too as a backchannel is); one that falls in no
                        reference system turn plays as far after the user's previous item as
                        in the reference
    yield               user stops its turn yield_delay after a system onset heard while it
                        talks, when the reference has a system BARGE_IN inside that user turn

``gap_i`` is drawn, item by item before the session starts, from the suite's reference gap
pool (:func:`reference_gaps`) with ``derive_seed(seed, "{dialogue}/ch{user}/interactive/user")``,
so the draws never depend on timing.  Same dialogue, system and seed: bit-identical run.

Detector latency: an onset is declared after ``onset_frames`` consecutive active frames, an
offset after ``offset_frames`` silent ones; the declared time is the frame end where it is
decided (so the latency is counted, and logged in the header).

Decision log (JSONL, strict JSON): a header ``{"kind": "header", ...}``, then one line per
decision ``{"kind": "decision", "frame", "t", "action", "item", "why", "heard"}``, where
``heard`` is the detector's state at that frame.  The header also records, once the session
ended, its ``frames`` and ``system_sha256``, the SHA-256 of the system's output (float32
native-rate samples, :func:`output_digest`).  :func:`replay_log` rebuilds the user input
from the log and the dataset's audio, runs the system open-loop, and reports the first frame
where what the detector hears would have decided differently (``None``: reproduced); ``replay``
then checks the replayed output against ``system_sha256`` (bit-identical or not).

Echo (``--condition echo:gain=G,delay=D``, self-bleed): the system hears at frame ``k`` the
user's frame plus what it played ``D`` before, scaled by ``G`` dB, then the mic-side gain and
clip (:class:`~duplexeval.conditions._echo.Mic`, as in the static frame loop).  The simulated
user's detector still listens to the system's output, and the realised user spans are the
user's own frames; the saved user channel is what the system heard (echo included), as in a
static run with an echo.  The replay feeds its open-loop outputs back the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._audio import write_audio
from duplexeval._fileio import atomic_write_json, atomic_write_text, loads_json, safe_name
from duplexeval.conditions import Condition
from duplexeval.conditions._apply import mic_stage, only
from duplexeval.conditions._echo import EchoLine, Mic
from duplexeval.data._dialogue import Dialogue
from duplexeval.errors import DuplexevalError
from duplexeval.events import Event, annotate_spans
from duplexeval.runs._driver import DialogueAudio, derive_seed, open_session
from duplexeval.runs._simulated_user import (
    SimulatedUser,
    StreamDetector,
    UserItem,
    UserPolicy,
    draw_gaps,
    user_items,
)
from duplexeval.systems._base import ClockKind, System
from duplexeval.timeline import Span

__all__ = [
    "INTERACTIVE_DIR",
    "InteractiveFiles",
    "InteractiveResult",
    "played_items",
    "read_log",
    "replay_log",
    "run_interactive",
    "write_interactive",
]


@dataclass
class InteractiveResult:
    """A realised interactive dialogue at the system's native rate."""

    user: np.ndarray
    system: np.ndarray
    sample_rate: int
    user_spans: list[Span]
    system_spans: list[Span]
    events: list[Event]
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def duration(self) -> float:
        """Realised length in seconds."""
        return len(self.user) / self.sample_rate

    def timeline_json(self, user_channel: int) -> dict[str, Any]:
        """The realised timeline (seconds): spans per role and the re-annotated events."""
        ch = {user_channel: "user", 1 - user_channel: "system"}
        return {"duration": self.duration, "user_channel": user_channel,
                "user": [[s.start, s.end] for s in self.user_spans],
                "system": [[s.start, s.end] for s in self.system_spans],
                "events": [{"role": ch[e.channel], **e.to_json()} for e in self.events]}

    def log_jsonl(self) -> str:
        """The decision log as strict JSONL."""
        return "".join(json.dumps(r, allow_nan=False, sort_keys=True) + "\n" for r in self.log)


def _spans(frames: Sequence[bool], spf: float) -> list[Span]:
    out, start = [], None
    for k, on in enumerate([*frames, False]):
        if on and start is None:
            start = k
        elif not on and start is not None:
            out.append(Span(start * spf, k * spf))
            start = None
    return out


def _header(system: System, dialogue: Dialogue, user: int, policy: UserPolicy, seed: int,
            items: Sequence[UserItem], gaps: Sequence[float],
            conditions: Sequence[dict[str, float | str]]) -> dict[str, Any]:
    """The decision log's first line: who ran, the policy, the detector and its latencies,
    the user's items with the gaps drawn for them, and the acoustic conditions the user's
    audio was put under (only when there are some)."""
    caps = system.capabilities
    spf = caps.frame_size / caps.sample_rate
    extra = {"conditions": [dict(c) for c in conditions]} if conditions else {}
    return {**extra,
        "kind": "header", "dialogue": dialogue.id, "user_channel": user,
        "system": system.name, "system_args": dict(system.args), "seed": seed,
        "sample_rate": caps.sample_rate, "frame_size": caps.frame_size,
        "policy": policy.to_json(),
        "detector": {"kind": "energy", "latency_onset_s": policy.onset_frames * spf,
                     "latency_offset_s": policy.offset_frames * spf},
        "items": [{"index": it.index, "kind": it.kind, "ref": [it.ref.start, it.ref.end],
                   "yields": it.yields, "gap": gaps[it.index],
                   **{key: value for key, value in (("pause", it.pause), ("lead", it.lead),
                                                    ("after", it.after)) if value is not None}}
                  for it in items]}


def _user_frame(agent: SimulatedUser, items: Sequence[UserItem], ref_user: np.ndarray, k: int,
                size: int, rate: int, system_speaking: bool) -> np.ndarray:
    """Frame ``k`` of the user's channel: the reference audio of every item playing, each
    from where it started; an item whose audio ran out stops playing (and, unless it is
    background speech, marks the frame the user's act ended, and whether the system was
    heard speaking then)."""
    frame = np.zeros(size, np.float32)
    for i, (start, _end) in list(agent.playing.items()):
        ref = items[i].ref
        a = round(ref.start * rate) + (k - start) * size
        b = min(a + size, round(ref.end * rate))
        if b <= a:
            del agent.playing[i]
            if items[i].kind != "background":  # the user's own items mark its last act
                agent.done_frame = k
                agent.onset_seen_after_done = system_speaking
            continue
        piece = ref_user[a:b]
        frame[:len(piece)] += piece
    return frame


class _Microphone:
    """What the system hears of each user frame: the frame itself, or with an echo
    condition the frame plus its own output played ``delay`` before (module docstring)."""

    def __init__(self, conditions: Sequence[Condition], rate: int, size: int) -> None:
        echo = only(conditions, "echo")
        self.mic = None if echo is None else Mic(echo, mic_stage(conditions), rate)
        self.line = EchoLine()
        self.size = size

    def heard(self, frame: np.ndarray, k: int) -> np.ndarray:
        """What the system hears of user frame ``k``."""
        return frame if self.mic is None else self.mic.heard(frame, k * self.size, self.line)

    def played(self, out: np.ndarray) -> None:
        """Output frame played (the echo's source), padded or cut to one frame."""
        if self.mic is not None:
            x = np.zeros(self.size, np.float32)
            x[:min(self.size, len(out))] = out[:self.size]
            self.line.append(x)


def _result(user: int, user_frames: list[np.ndarray], heard_frames: list[np.ndarray],
            sys_frames: list[np.ndarray], heard_spans: list[list[int | None]], frames: int,
            rate: int, spf: float, log: list[dict[str, Any]]) -> InteractiveResult:
    """The realised timeline of a finished session (spans in seconds; a system span still
    open at the end closes at the last frame) and its events annotated again from it; the
    user spans are the user's own frames', the saved user channel what the system heard."""
    user_spans = _spans([bool(np.any(f != 0)) for f in user_frames], spf)
    system_spans = [Span(a * spf, (b if b is not None else frames) * spf)
                    for a, b in heard_spans if a is not None]
    events = annotate_spans({user: user_spans, 1 - user: system_spans})
    return InteractiveResult(np.concatenate(heard_frames), np.concatenate(sys_frames), rate,
                             user_spans, system_spans, events, log)


def _decide(agent: SimulatedUser, k: int, heard: str | None, det: StreamDetector,
            spf: float) -> list[dict[str, Any]]:
    """The user's decisions at frame ``k`` applied (an item starts the next frame, a yield
    stops its item there), and their log lines."""
    lines = []
    for action, idx, why in agent.decide(k, heard, det):
        if action == "start":
            agent.playing[idx] = (k + 1, 0)
        elif action == "yield":
            agent.playing.pop(idx, None)
            agent.done_frame = k + 1
            agent.onset_seen_after_done = True
        lines.append({"kind": "decision", "frame": k, "t": (k + 1) * spf, "action": action,
                      "item": idx, "why": why, "heard": det.state()})
    return lines


def run_interactive(system: System, dialogue: Dialogue, audio: DialogueAudio, user: int,
                    policy: UserPolicy, seed: int,
                    conditions: Sequence[dict[str, float | str]] = (),
                    online: Sequence[Condition] = ()) -> InteractiveResult:
    """Run one interactive dialogue (module docstring).  The realised system spans are what
    the detector heard with its latency taken back: an onset declared at frame ``k`` starts at
    frame ``k - onset_frames + 1``, an offset ends at ``k - offset_frames + 1`` (pauses shorter
    than ``offset_frames`` frames do not split a system turn).  ``audio`` is what the user
    plays (already under the channel stage of its acoustic conditions); ``conditions``
    (their ``to_json`` forms) go into the log's header, so a replay can put the audio under
    them again; ``online``: the conditions, of which an echo (and the gain and clip after it)
    acts in the loop (module docstring)."""
    caps = system.capabilities
    if caps.clock is ClockKind.FILE:
        raise ValueError(f"system {system.name!r}: a whole-file system cannot react; "
                         "interactive needs a frame-clock system")
    rate, size = caps.sample_rate, caps.frame_size
    spf = size / rate
    ref_user = audio.channel(user, rate)
    items = user_items(dialogue, user)
    key = f"{dialogue.id}/ch{user}/interactive"
    gaps = draw_gaps(policy, len(items), derive_seed(seed, key + "/user"))
    log: list[dict[str, Any]] = [_header(system, dialogue, user, policy, seed, items, gaps,
                                         conditions)]
    session = open_session(system, dialogue, audio, 1 - user, 0.0, derive_seed(seed, key))
    det = StreamDetector(policy.threshold_db, policy.onset_frames, policy.offset_frames)
    agent = SimulatedUser(items, gaps, policy, spf)
    mic = _Microphone(online, rate, size)
    user_frames: list[np.ndarray] = []
    heard_frames: list[np.ndarray] = []
    sys_frames: list[np.ndarray] = []
    limit = int((dialogue.duration * 4 + 30) / spf)
    quiet_end = None
    heard_spans: list[list[int | None]] = []
    k = 0
    while k < limit:
        frame = _user_frame(agent, items, ref_user, k, size, rate, det.speaking)
        fed = mic.heard(frame, k)
        out = np.asarray(session.step(fed).audio, dtype=np.float32)
        mic.played(out)
        user_frames.append(frame)
        heard_frames.append(fed)
        sys_frames.append(out)
        heard = det.push(out, k)
        if heard == "onset":
            heard_spans.append([k - policy.onset_frames + 1, None])
        elif heard == "offset":
            heard_spans[-1][1] = k - policy.offset_frames + 1
        log += _decide(agent, k, heard, det, spf)
        k += 1
        if agent.next >= len(items) and not agent.playing:
            quiet_end = None if det.speaking else \
                k + agent.frames(policy.tail) if quiet_end is None else quiet_end
            if quiet_end is not None and k >= quiet_end:
                break
    session.close()
    log[0]["frames"] = k
    log[0]["system_sha256"] = output_digest(sys_frames)
    return _result(user, user_frames, heard_frames, sys_frames, heard_spans, k, rate, spf,
                   log)


def played_items(log: Sequence[dict[str, Any]]) -> dict[int, tuple[Span, Span]]:
    """The user items a session played, from its decision log: item index -> (its reference
    span, its realised span).  An item starts at its ``start`` decision's ``t`` and lasts its
    reference length, or ends at its ``yield``'s ``t``; a skipped item is absent."""
    refs = {int(it["index"]): Span(float(it["ref"][0]), float(it["ref"][1]))
            for it in log[0]["items"]}
    starts: dict[int, float] = {}
    stops: dict[int, float] = {}
    for r in log[1:]:
        if r["action"] == "start":
            starts[int(r["item"])] = float(r["t"])
        elif r["action"] == "yield":
            stops[int(r["item"])] = float(r["t"])
    out = {}
    for i, t in starts.items():
        ref = refs[i]
        end = t + ref.duration
        out[i] = (ref, Span(t, min(end, stops.get(i, end))))
    return out


def output_digest(frames: Iterable[np.ndarray]) -> str:
    """The SHA-256 (hex) of a system's output frames, end to end, as float32 samples."""
    h = hashlib.sha256()
    for frame in frames:
        h.update(np.ascontiguousarray(frame, dtype=np.float32).tobytes())
    return h.hexdigest()


def replay_log(system: System, dialogue: Dialogue, audio: DialogueAudio,
               log: Sequence[dict[str, Any]],
               online: Sequence[Condition] = ()) -> tuple[np.ndarray, int | None]:
    """Replay a run from its ``log`` alone: the user input is rebuilt from the logged
    decisions (item ``i`` starts the frame after its ``start``, stops the frame after its
    ``yield`` or at its reference end), the system is stepped open-loop on it with the logged
    seed, and its output goes through the logged detector.  Returns the system output and the
    first logged decision frame whose recorded ``heard`` differs from what the detector now
    hears, or where the rebuilt input ends before the log does (``None``: reproduced).
    ``online``: the header's conditions, whose echo feeds the replayed outputs back."""
    head = log[0]
    user, seed = int(head["user_channel"]), int(head["seed"])
    rate, size = int(head["sample_rate"]), int(head["frame_size"])
    caps = system.capabilities
    if (caps.sample_rate, caps.frame_size) != (rate, size):
        return np.zeros(0, np.float32), 0
    pol = head["policy"]
    det = StreamDetector(float(pol["threshold_db"]), int(pol["onset_frames"]),
                         int(pol["offset_frames"]))
    refs = {int(it["index"]): (float(it["ref"][0]), float(it["ref"][1]))
            for it in head["items"]}
    starts: dict[int, int] = {}
    stops: dict[int, int] = {}
    checks: dict[int, dict[str, Any]] = {}
    for r in log[1:]:
        if r["action"] == "start":
            starts[int(r["frame"]) + 1] = int(r["item"])
        elif r["action"] == "yield":
            stops[int(r["frame"]) + 1] = int(r["item"])
        checks.setdefault(int(r["frame"]), r["heard"])
    total = int(head["frames"])
    ref_user = audio.channel(user, rate)
    key = f"{dialogue.id}/ch{user}/interactive"
    session = open_session(system, dialogue, audio, 1 - user, 0.0, derive_seed(seed, key))
    mic = _Microphone(online, rate, size)
    playing: dict[int, int] = {}
    outs: list[np.ndarray] = []
    diverged: int | None = None
    for k in range(total):
        if k in starts:
            playing[starts[k]] = k
        if k in stops:
            playing.pop(stops[k], None)
        frame = np.zeros(size, np.float32)
        for i, start in list(playing.items()):
            a = round(refs[i][0] * rate) + (k - start) * size
            b = min(a + size, round(refs[i][1] * rate))
            if b <= a:
                del playing[i]
                continue
            piece = ref_user[a:b]
            frame[:len(piece)] += piece
        out = np.asarray(session.step(mic.heard(frame, k)).audio, dtype=np.float32)
        mic.played(out)
        outs.append(out)
        det.push(out, k)
        if diverged is None and k in checks and det.state() != checks[k]:
            diverged = k
    session.close()
    return (np.concatenate(outs) if outs else np.zeros(0, np.float32)), diverged


INTERACTIVE_DIR = "interactive"
"""Folder of a run directory holding ``{dialogue}_ch{user}.{wav,timeline.json,decisions.jsonl}``."""


@dataclass(frozen=True)
class InteractiveFiles:
    """The files of one realised dialogue under ``RUN/interactive/``."""

    wav: Path
    timeline: Path
    log: Path

    @classmethod
    def of(cls, run_root: Path, dialogue_id: str, user: int) -> InteractiveFiles:
        """The files of ``dialogue_id`` on user channel ``user`` (the id checked)."""
        name = f"{safe_name(dialogue_id, 'dialogue id')}_ch{user}"
        stem = Path(run_root) / INTERACTIVE_DIR / name
        return cls(stem.with_name(stem.name + ".wav"),
                   stem.with_name(stem.name + ".timeline.json"),
                   stem.with_name(stem.name + ".decisions.jsonl"))


def write_interactive(run_root: Path, result: InteractiveResult, dialogue_id: str,
                      user: int, extra: Mapping[str, Any] | None = None) -> Path:
    """Write the realised dialogue under ``run_root/interactive/``: the stereo wav (ch0 the
    user's realised input, ch1 the system, PCM_24), the realised timeline with its
    re-annotated events (and ``extra`` entries: a FLEXI item's realised record), and the
    decision log; each atomically.  Returns the folder."""
    files = InteractiveFiles.of(run_root, dialogue_id, user)
    files.wav.parent.mkdir(parents=True, exist_ok=True)
    write_audio(files.wav, np.stack([result.user, result.system], axis=1),
                result.sample_rate, subtype="PCM_24")
    atomic_write_json(files.timeline, {**result.timeline_json(user), **(extra or {})})
    atomic_write_text(files.log, result.log_jsonl())
    return files.wav.parent


def read_log(path: Path) -> list[dict[str, Any]]:
    """A decision log; a line that is not a JSON object, or a log without its header, is one
    :class:`DuplexevalError` naming the file and line."""
    records: list[dict[str, Any]] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DuplexevalError(f"{path}: decision log not found") from None
    for n, line in enumerate(lines, 1):
        try:
            record = loads_json(line)
        except json.JSONDecodeError as exc:
            raise DuplexevalError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict) or (n == 1) != (record.get("kind") == "header"):
            raise DuplexevalError(f"{path}:{n}: expected "
                                  f"{'the header' if n == 1 else 'a decision'} object")
        records.append(record)
    if not records:
        raise DuplexevalError(f"{path}: empty decision log")
    return records

