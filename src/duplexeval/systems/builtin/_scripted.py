"""``scripted``: a deterministic, configurable full-duplex system for tests and calibration.

Behaviour (all times in seconds, decided on the frame clock)::

    user    |====speech====|                         |==barge-in==|
    system                  <-delay->|====speaks (duration)====|
                                                     <stop_delay>^ stops

* It hears the user through an energy detector: a frame is user speech when its RMS is above
  ``threshold_db`` dBFS.
* Listening, it starts speaking once the user has been silent for ``delay`` (+ uniform jitter in
  [-jitter, +jitter] drawn from its seed, + ``drift`` seconds per second of session time: a
  system that gets slower as the dialogue goes on) after user speech.
* Speaking, it stops after ``duration`` seconds, or ``stop_delay`` after user speech starts;
  user speech shorter than ``ignore_shorter`` is treated as a backchannel and ignored (the stop
  then comes no earlier than ``ignore_shorter`` after the onset).
* What it says is real speech from the packaged clip bank (language from the dialogue, else
  ``language``), so VAD and ASR hear speech.  It logs the exact sample intervals
  ``[start, end)`` of its speech (``speech_samples``: where the clips it played have speech, by
  :meth:`Clip.speech_samples`, cut where it stopped) and of its speaking turns
  (``turn_samples``), native rate, counted from the session start, in :meth:`Session.trace`,
  together with the number of frames stepped.
* Batch: the forks of a prefix group are rows of plain-state sessions stepped together
  (:class:`~duplexeval.systems.builtin._copyable_session.PlainStateBatch`).
* Snapshot: its state is plain data.  Teacher forcing: forced frames replace its output; it
  listens meanwhile and starts free-running after the last forced frame.  With
  ``continue_forced=1`` it takes over a forced turn that is still speaking at the last forced
  frame (a model that continues the reference's turn as its own), so its stop rule then decides
  whether it yields to a user already talking (``stop_delay``).
* Seeds: its jitter and its choice of clips are drawn from the session seed, reseeded at every
  fork, so repeated tries (``run --repeats``) differ; with ``ignore_seed=1`` a reseed changes
  nothing (the generator runs on from the shared prefix), like a model decoding greedily: every
  try of a fork is then identical.
* ``compute_seconds``: wall-clock seconds each step sleeps, an artificial compute cost for
  ``duplexeval rtcheck`` (a system slower than real time when above the frame duration); it
  changes no output.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from duplexeval.speech._clipbank import ClipBank
from duplexeval.systems._base import (
    BatchSession,
    Capabilities,
    Forced,
    Session,
    SessionSpec,
    StepOutput,
    System,
)
from duplexeval.systems.builtin._copyable_session import (
    PlainStateBatch,
    PlainStateSession,
    log_speech,
    rng_state,
)

__all__ = ["ScriptedSystem"]

_FLOAT_ARGS = {"delay": 0.3, "duration": 2.0, "stop_delay": 0.2, "ignore_shorter": 0.0,
               "jitter": 0.0, "threshold_db": -45.0, "min_user": 0.1, "drift": 0.0,
               "continue_forced": 0.0, "ignore_seed": 0.0, "compute_seconds": 0.0}
_NON_NEGATIVE = frozenset({"delay", "duration", "stop_delay", "ignore_shorter", "jitter",
                           "min_user", "compute_seconds"})
"""Arguments that are durations (s >= 0); the others need only be finite."""


class _ScriptedSession(PlainStateSession):
    def __init__(self, params: dict[str, float], rate: int, frame: int, language: str,
                 seed: int) -> None:
        self.p = params
        self.rate, self.frame = rate, frame
        self.language = language
        self.bank = ClipBank.load()
        self.state: dict[str, Any] = {
            "frame": 0, "speaking": False, "user_active_frames": 0, "user_silent_frames": 0,
            "heard_user": False, "onset_frame": None, "speak_end": 0, "stop_at": None,
            "utterance": [], "pos": 0, "speech": [], "turns": [], "threshold_delay": None,
            "rng": rng_state(seed), "clips_said": 0, "forced_speech": False,
        }

    # -- helpers ---------------------------------------------------------------------------
    def _frames(self, seconds: float) -> int:
        return max(0, round(seconds * self.rate / self.frame))

    def _start_speaking(self) -> None:
        s = self.state
        n_clips = len(self.bank.clips(self.language, "utterance"))
        with self.rng() as gen:
            index = int(gen.integers(0, n_clips))
        s["utterance"] = [index]
        s["pos"] = 0
        s["speaking"] = True
        s["speak_end"] = s["frame"] + max(1, self._frames(self.p["duration"]))
        s["stop_at"] = None
        s["turns"].append([s["frame"] * self.frame, None])

    def _stop_speaking(self) -> None:
        s = self.state
        s["speaking"] = False
        s["stop_at"] = None
        s["threshold_delay"] = None
        if s["turns"] and s["turns"][-1][1] is None:
            s["turns"][-1][1] = s["frame"] * self.frame

    def _speech_frame(self) -> np.ndarray:
        """The next frame of speech: clips concatenated, a new clip (seeded) when one ends."""
        s = self.state
        out = np.zeros(self.frame, dtype=np.float32)
        filled = 0
        while filled < self.frame:
            picked = self.bank.pick(self.language, s["utterance"][-1])
            clip = picked.resampled(self.rate)
            take = min(self.frame - filled, len(clip) - s["pos"])
            out[filled:filled + take] = clip[s["pos"]:s["pos"] + take]
            log_speech(s["speech"], picked.speech_samples(self.rate), s["pos"], take,
                       s["frame"] * self.frame + filled)
            filled += take
            s["pos"] += take
            if s["pos"] >= len(clip):
                with self.rng() as gen:
                    s["utterance"].append(int(gen.integers(0, 1 << 30)))
                s["pos"] = 0
        return out

    def _hear(self, user: np.ndarray) -> bool:
        rms = float(np.sqrt(np.mean(np.square(user, dtype=np.float64)))) if len(user) else 0.0
        return rms > 10 ** (self.p["threshold_db"] / 20)

    # -- Session ---------------------------------------------------------------------------
    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        if self.p["compute_seconds"] > 0:
            time.sleep(self.p["compute_seconds"])
        s = self.state
        active = self._hear(user)
        if active:
            if s["user_active_frames"] == 0:
                s["onset_frame"] = s["frame"]
            s["user_active_frames"] += 1
            s["user_silent_frames"] = 0
            if s["user_active_frames"] >= self._frames(self.p["min_user"]):
                s["heard_user"] = True
        else:
            s["user_active_frames"] = 0
            s["user_silent_frames"] += 1

        if force is not None:
            if s["speaking"]:
                self._stop_speaking()
            s["forced_speech"] = self._hear(np.asarray(force.audio, dtype=np.float32))
            s["frame"] += 1
            return StepOutput(np.asarray(force.audio, dtype=np.float32))
        if s["forced_speech"] and self.p["continue_forced"] and not s["speaking"]:
            self._start_speaking()
        s["forced_speech"] = False

        if s["speaking"]:
            if active and s["stop_at"] is None:
                held = s["user_active_frames"] * self.frame / self.rate
                if held >= self.p["ignore_shorter"] - 1e-9:
                    wait = max(self.p["stop_delay"], self.p["ignore_shorter"])
                    s["stop_at"] = s["onset_frame"] + self._frames(wait)
            if not active and s["stop_at"] is not None and s["user_active_frames"] == 0 \
                    and self.p["ignore_shorter"] > 0 and \
                    (s["frame"] - s["onset_frame"]) * self.frame / self.rate \
                    < self.p["ignore_shorter"]:
                s["stop_at"] = None  # it was a backchannel after all
            if s["frame"] >= s["speak_end"] or (s["stop_at"] is not None
                                               and s["frame"] >= s["stop_at"]):
                self._stop_speaking()
                s["heard_user"] = active
        elif s["heard_user"] and not active:
            if s["threshold_delay"] is None:
                jitter = self.p["jitter"]
                extra = 0.0
                if jitter > 0:
                    with self.rng() as gen:
                        extra = float(gen.uniform(-jitter, jitter))
                elapsed = s["frame"] * self.frame / self.rate
                s["threshold_delay"] = max(1, self._frames(
                    self.p["delay"] + extra + self.p["drift"] * elapsed))
            if s["user_silent_frames"] >= s["threshold_delay"]:
                s["heard_user"] = False
                self._start_speaking()
        elif active:
            s["threshold_delay"] = None

        audio = self._speech_frame() if s["speaking"] else np.zeros(self.frame, np.float32)
        s["frame"] += 1
        return StepOutput(audio)

    def reseed(self, seed: int) -> None:
        if not self.p["ignore_seed"]:
            super().reseed(seed)

    def fork_batch(self, states: Sequence[Any], seeds: Sequence[int]) -> BatchSession:
        """Rows of fresh sessions of the same parameters, each restored and reseeded."""
        return PlainStateBatch(lambda: _ScriptedSession(self.p, self.rate, self.frame,
                                                        self.language, 0), states, seeds)

    def trace(self) -> dict[str, Any]:
        turns = [[a, b if b is not None else self.state["frame"] * self.frame]
                 for a, b in self.state["turns"]]
        return {"frames": self.state["frame"], "sample_rate": self.rate,
                "speech_samples": [list(x) for x in self.state["speech"]],
                "turn_samples": turns}


class ScriptedSystem(System):
    """Deterministic rule-based full-duplex system speaking clips from the packaged bank."""

    name = "scripted"
    version = "1"
    description = "rule-based: speaks `delay` s after the user stops, yields to barge-ins"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.params = {key: self.float_arg(key, default, 0.0 if key in _NON_NEGATIVE else None)
                       for key, default in _FLOAT_ARGS.items()}
        rate = self.rate_arg("sample_rate", 24000)
        frame = self.int_arg("frame_size", rate // 50, 1)
        self.language = self.args.get("language", "")
        self.capabilities = Capabilities(sample_rate=rate, frame_size=frame,
                                         teacher_forcing_audio=True, snapshot=True,
                                         batch=True)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return (*_FLOAT_ARGS, "sample_rate", "frame_size", "language")

    def open(self, spec: SessionSpec) -> Session:
        language = self.language or spec.dialogue.language or "en"
        if language not in ClipBank.load().languages():
            language = "en"
        return _ScriptedSession(self.params, self.capabilities.sample_rate,
                                self.capabilities.frame_size, language, spec.seed)
