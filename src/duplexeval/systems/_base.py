"""The interface of a system under test: a frame-synchronous session.

::

    system = MySystem(**system_args)                # strings from --system-arg k=v
    session = system.open(SessionSpec(sample_rate=system.capabilities.sample_rate, seed=...,
                                      dialogue=DialogueInfo(id, language, domain),
                                      system_channel=...))
    out = session.step(user_frame)                  # one frame in, one frame out
    out = session.step(user_frame, force=Forced(reference_system_frame, "words"))
    state = session.snapshot(); session.restore(state)      # capability ``snapshot``
    session.reseed(seed)                            # at a sample's fork point
    rows = session.fork_batch([state_a, state_b], [seed_a, seed_b])   # capability ``batch``
    outs = rows.step([frame_a, None])               # row b has ended: not stepped, None out
    rows.trace(0); rows.close()
    session.close()

Conventions
-----------
* Audio frames are mono ``float32`` numpy arrays in [-1, 1] at the system's native
  ``sample_rate`` (Hz), exactly ``frame_size`` samples long.  The runner resamples dataset audio
  once to that rate and pads the last frame with zeros.
* ``step`` returns the system's audio for the same frame interval (a full-duplex system emits
  one frame per input frame) and any text it emitted during that frame.
* Time inside a session is counted in frames from its first ``step``.  A session is not told
  where in the dialogue it starts: the runner converts what it reports (``trace``) to dialogue
  time.
* What a session sees is what a deployed system would: the audio it is stepped with and a
  redacted :class:`DialogueInfo` (id, language, domain) plus its channel.  Anything more (the
  reference audio, the reference transcript, the reference answers) is *oracle* data: a system
  declares each kind it needs in ``Capabilities.oracle``, the runner hands exactly those in
  ``SessionSpec.oracle``, and the run config and the result tables mark the system as using
  oracle data.
* Teacher forcing: ``force`` carries the reference system audio of that frame (and the reference
  words that start in it); a system that declares ``teacher_forcing_audio`` must behave as if it
  had said that audio, and its returned audio is ignored by the runner.
* ``snapshot`` returns plain data that ``restore`` accepts, possibly several times; after
  ``restore`` the session behaves exactly as it did when the snapshot was taken.
* Batched continuations (capability ``batch``, which implies ``snapshot``): ``fork_batch``
  returns a :class:`BatchSession` whose row ``i`` starts from ``states[i]`` (a snapshot of this
  session) reseeded with ``seeds[i]``; each row must produce exactly what a single session
  restored to ``states[i]`` and reseeded with ``seeds[i]`` would, frame for frame (a
  stochastic model draws each row from its own generator).  The session that forked is left as
  it was.  Continuations are never teacher-forced, so a batch step takes user audio only.
  When some rows fail on a frame, ``step`` steps the others and raises
  :class:`BatchRowFailure` with their outputs; the runner records the failed rows' samples and
  feeds those rows ``None`` from then on.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np

from duplexeval.errors import number_problem

__all__ = [
    "BatchRowFailure",
    "BatchSession",
    "Capabilities",
    "ClockKind",
    "DialogueInfo",
    "Forced",
    "Oracle",
    "Session",
    "SessionSpec",
    "StepOutput",
    "System",
    "SystemFailure",
]


_BOOL_WORDS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
"""The words :meth:`System.bool_arg` accepts (lower case)."""


class ClockKind(StrEnum):
    """How a system's time advances."""

    FRAME = "frame"
    """In-process, frame-synchronous: time advances one frame per ``step`` (offline driver)."""
    INPUT = "input"
    """A server clocked by its input stream (offline driver, deterministic timeline)."""
    WALL = "wall"
    """A wall-clock service (real-time driver: deadline pacing, recorded trace)."""
    FILE = "file"
    """A whole-file model (file in, file out): before the first ``step`` the runner hands the
    session the sample's whole input with :meth:`Session.load_input`; the steps then return
    the output it computed, frame by frame (offline driver, deterministic timeline)."""


class Oracle(StrEnum):
    """Reference data a deployed system would not have; a system declares each kind it reads
    (``Capabilities.oracle``) and gets exactly those in ``SessionSpec.oracle``."""

    REFERENCE_AUDIO = "reference_audio"
    """The reference system channel: ``float32`` mono at the native rate, from the session's
    first frame (the ``reference`` system replays it)."""
    REFERENCE_TRANSCRIPT = "reference_transcript"
    """The dialogue's reference words as IPUs in time order: a tuple of
    ``{"role": "user" | "system", "text": str}`` (roles relative to the session's channels),
    the whole dialogue, future turns included (an oracle-content responder reads it)."""
    QA_REFERENCES = "qa_references"
    """The dialogue's reference questions and answers: a tuple of ``{"turn", "question",
    "answer"}`` (synthesized QA suites; empty elsewhere)."""


@dataclass(frozen=True)
class Capabilities:
    """What a system declares it can do; the runner never guesses."""

    sample_rate: int = 24000
    """Native sample rate in Hz."""
    frame_size: int = 1920
    """Samples per frame at ``sample_rate`` (1920 at 24 kHz = 80 ms, Moshi's frame)."""
    teacher_forcing_audio: bool = False
    teacher_forcing_text: bool = False
    snapshot: bool = False
    batch: bool = False
    clock: ClockKind = ClockKind.FRAME
    oracle: frozenset[Oracle] = frozenset()
    """Oracle data the system reads (empty for a system that could be deployed as is)."""

    @property
    def frame_seconds(self) -> float:
        """Frame duration in seconds."""
        return self.frame_size / self.sample_rate

    def to_json(self) -> dict[str, Any]:
        """Plain-data form, as recorded in run configs and ``duplexeval systems``."""
        return {
            "sample_rate": self.sample_rate, "frame_size": self.frame_size,
            "teacher_forcing": {"audio": self.teacher_forcing_audio,
                                "text": self.teacher_forcing_text},
            "snapshot": self.snapshot, "batch": self.batch, "clock": self.clock.value,
            "oracle": sorted(o.value for o in self.oracle),
        }


@dataclass(frozen=True)
class Forced:
    """Teacher forcing for one frame: reference system audio (native rate, one frame) and the
    reference words whose start falls in this frame (space-joined, may be empty)."""

    audio: np.ndarray
    text: str = ""


@dataclass(frozen=True)
class StepOutput:
    """One frame of system output: audio (native rate, one frame) and text emitted in it."""

    audio: np.ndarray
    text: str = ""


@dataclass(frozen=True)
class DialogueInfo:
    """What a deployed system could know of the conversation it joins: no times, no words."""

    id: str = ""
    language: str | None = None
    """ISO 639-1 code (``en``, ``ja``) or ``None`` when the dataset does not say."""
    domain: str | None = None
    """``chat``, ``qa``, ... or ``None``."""


@dataclass(frozen=True)
class SessionSpec:
    """What a session is opened for."""

    sample_rate: int
    seed: int
    dialogue: DialogueInfo = DialogueInfo()
    """The redacted dialogue: id, language, domain."""
    system_channel: int = 0
    """The dialogue channel whose role the system takes."""
    oracle: Mapping[Oracle, Any] = field(default_factory=dict)
    """The oracle data the system declared in ``Capabilities.oracle`` (nothing else)."""


class SystemFailure(RuntimeError):
    """A system failed on a sample: the runner records the message for that sample and the run
    goes on (``--fail-fast`` stops it)."""


class BatchRowFailure(SystemFailure):
    """Raised by :meth:`BatchSession.step` when some rows failed on this frame and the others
    were stepped: ``failed`` maps each failed row to its reason, ``outputs`` holds the frame's
    outputs of the other rows (``None`` for the failed and the ended rows).  A failed row is
    ended: the runner records its sample as failed and feeds it ``None`` from then on."""

    def __init__(self, failed: Mapping[int, str], outputs: Sequence[StepOutput | None]) -> None:
        self.failed = dict(failed)
        self.outputs = list(outputs)
        super().__init__("; ".join(f"row {row}: {why}" for row, why in sorted(self.failed.items())))


class Session(abc.ABC):
    """One stream of frames through a system."""

    @abc.abstractmethod
    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        """Consume one frame of user audio; return one frame of system audio (+ text)."""

    def load_input(self, user: np.ndarray, reference: np.ndarray | None = None) -> None:
        """Clock ``file`` only: the whole input of the session before its first step, at the
        native rate: ``user`` exactly as the steps will feed it (context, window, muting), and
        under teacher forcing ``reference``, the reference system audio the steps will force
        (zeros where nothing is forced), of the same length."""
        raise NotImplementedError(f"{type(self).__name__} does not take a whole input")

    def snapshot(self) -> Any:
        """Plain-data copy of the whole session state (capability ``snapshot``)."""
        raise NotImplementedError(f"{type(self).__name__} does not support snapshot")

    def restore(self, state: Any) -> None:
        """Return to a state from :meth:`snapshot` (reusable any number of times)."""
        raise NotImplementedError(f"{type(self).__name__} does not support restore")

    def reseed(self, seed: int) -> None:  # noqa: B027 - deterministic systems ignore it
        """Re-derive the random state at a sample's fork point (stochastic systems)."""

    def fork_batch(self, states: Sequence[Any], seeds: Sequence[int]) -> BatchSession:
        """Rows continuing from ``states[i]`` reseeded with ``seeds[i]`` (capability
        ``batch``; see the module docstring)."""
        raise NotImplementedError(f"{type(self).__name__} does not support batched forks")

    def trace(self) -> dict[str, Any]:
        """Extra per-session facts to record with a sample (e.g. exact speech intervals)."""
        return {}

    def close(self) -> None:  # noqa: B027 - most sessions hold nothing to release
        """Release resources."""


class BatchSession(abc.ABC):
    """Several forks of one session stepping together, one row each (capability ``batch``).

    Row ``i`` behaves exactly as a single session restored to its snapshot and reseeded with
    its seed.  Rows end at different frames: a ``None`` user frame means the row has ended; it is
    not stepped (its state is left as it is) and its output is ``None``.  Rows that fail on a
    frame are reported with :class:`BatchRowFailure`, after the other rows were stepped."""

    @property
    @abc.abstractmethod
    def size(self) -> int:
        """The number of rows."""

    @abc.abstractmethod
    def step(self, users: Sequence[np.ndarray | None]) -> list[StepOutput | None]:
        """One frame per row (``None`` for an ended row); one output per row, in row order."""

    def trace(self, row: int) -> dict[str, Any]:
        """Row ``row``'s :meth:`Session.trace`."""
        return {}

    def close(self) -> None:  # noqa: B027 - most batches hold nothing to release
        """Release resources."""


class System(abc.ABC):
    """A system under test.  Subclasses set ``name``, ``version`` and ``capabilities``."""

    name: ClassVar[str] = ""
    version: ClassVar[str] = "0"
    description: ClassVar[str] = ""
    extra: ClassVar[str] = ""
    """The optional dependency group the system needs (``pip install 'duplexeval[EXTRA]'``);
    empty when the core install is enough.  ``duplexeval systems`` lists it."""
    capabilities: Capabilities = Capabilities()

    def __init__(self, **args: str) -> None:
        unknown = set(args) - set(self.arg_names())
        if unknown:
            raise ValueError(f"system {self.name!r} takes no argument(s) "
                             f"{', '.join(sorted(unknown))}; known: "
                             f"{', '.join(self.arg_names()) or 'none'}")
        self.args: dict[str, str] = dict(args)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        """Names accepted by ``--system-arg``."""
        return ()

    def int_arg(self, name: str, default: int, low: int | None = None,
                high: int | None = None) -> int:
        """A ``--system-arg`` as an integer within [``low``, ``high``] (``default`` when
        absent); a bad one is a ``ValueError`` naming it (one line, exit 2, from
        :func:`~duplexeval.systems._registry.load_system`)."""
        try:
            value = int(self.args.get(name, default))
        except ValueError:
            raise ValueError(f"system argument {name} must be an integer, "
                             f"got {self.args[name]!r}") from None
        return int(self._checked(name, value, low, high, False))

    def rate_arg(self, name: str, default: int) -> int:
        """A ``--system-arg`` that is a sample rate (Hz, 1 kHz to 384 kHz)."""
        return self.int_arg(name, default, 1000, 384000)

    def _checked(self, name: str, value: float, low: float | None, high: float | None,
                 low_open: bool) -> float:
        problem = number_problem(value, low, high, low_open)
        if problem is not None and name in self.args:
            raise ValueError(f"system argument {name} {problem}, got {self.args[name]!r}")
        return value

    def bool_arg(self, name: str, default: bool) -> bool:
        """A ``--system-arg`` as a yes/no (``1``/``true``/``yes`` or ``0``/``false``/``no``, any
        case; ``default`` when absent)."""
        value = self.args.get(name)
        if value is None:
            return default
        if value.lower() not in _BOOL_WORDS:
            raise ValueError(f"{name} must be true or false (1 or 0), got {value!r}")
        return _BOOL_WORDS[value.lower()]

    def float_arg(self, name: str, default: float, low: float | None = None,
                  high: float | None = None, low_open: bool = False) -> float:
        """A ``--system-arg`` as a finite number, at least ``low`` (above it with
        ``low_open``) and at most ``high`` (``default`` when absent): NaN and infinities are
        refused like words (:func:`~duplexeval.errors.number_problem`)."""
        try:
            value = float(self.args.get(name, default))
        except ValueError:
            raise ValueError(f"system argument {name} must be a number, "
                             f"got {self.args[name]!r}") from None
        return self._checked(name, value, low, high, low_open)

    def seconds_arg(self, name: str, default: float) -> float:
        """A ``--system-arg`` that is a timeout or interval: seconds > 0."""
        return self.float_arg(name, default, 0.0, low_open=True)

    @abc.abstractmethod
    def open(self, spec: SessionSpec) -> Session:
        """A new session, in its initial state."""
