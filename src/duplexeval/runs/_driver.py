"""Executing a plan's samples on a system: the offline, frame-synchronous driver.

Frame grid
----------
A pass starts at dialogue time ``T0`` (the context start for multi-turn protocols, the input
start for ``single``); frame ``k`` covers ``[T0 + k*F/sr, T0 + (k+1)*F/sr)`` at the system's
native rate ``sr`` with ``F`` samples per frame.  A sample forks from the continuous pass at the
frame boundary at or before its ``fork_time`` (frame ``floor((fork_time - T0) * sr / F)``): all
frames before it are fed the same input in the shared pass and in the sample's own replay.

Protocols
---------
* single: a fresh session per sample over [input_start, input_end], user muted from mute_start.
* multi-gen: one pass per (dialogue, user channel) over the unmuted user channel from T0, a
  snapshot at each fork frame; then per sample: restore, reseed, continue to input_end with the
  user muted from mute_start.
* multi-ref: the pass is teacher-forced with the reference system channel (and its words)
  up to each fork frame (the frame boundary at or before event_start), then as multi-gen.
* Systems without ``snapshot`` replay the prefix from T0 for every sample (the official cost);
  for deterministic systems the outputs are bit-identical either way.
* Systems with ``batch`` (and ``snapshot``) step the continuations after the shared prefix
  together: the samples of a pass, in plan order, are cut into batches of at most
  ``batch_size`` rows (:meth:`~duplexeval.systems._base.Session.fork_batch`); row ``i`` starts
  at its own fork frame and steps ``end_i - fork_i`` frames, the batch steps until its longest
  row ends, an ended row gets ``None``::

      t (batch step)  0    1    2    3    4
      row 0 (fork 3)  f3   f4   f5   -    -      ends at frame 6
      row 1 (fork 7)  f7   f8   f9   f10  f11    ends at frame 12

  Each sample's output is composed exactly as on the single path (the same prefix frames, the
  same continuation frames), so the outputs are byte-identical, and frames are counted as
  there: one per row per step it took (a sample's ``frames`` is its continuation's length).
  ``batch_size=1`` is the single path.  A row that fails is recorded for its sample alone.
* Whole-file systems (clock ``file``) replay too: each sample's session is handed the sample's
  whole input (:meth:`~duplexeval.systems._base.Session.load_input`) before its first step.

Context: a pass starts at its samples' ``context_start``, so every sample hears exactly its own
context ``[context_start, input_start)`` and nothing earlier.  Without ``context_max_len`` all
samples of a (dialogue, user channel) start at 0 and share one pass; with it, only samples with
the same context start share a pass (:meth:`~duplexeval.plan._samples.Plan.passes`).

Seeds: the pass uses ``derive_seed(run_seed, "{dialogue}/ch{user}/{protocol}")`` (with
``"@{context_start}"`` appended when that start is not 0); each sample
reseeds at its fork with ``derive_seed(run_seed, event_id + "/" + protocol)`` (a counterfactual
twin with its original's event id: :attr:`~duplexeval.plan._samples.Sample.seed_key`), so a
sample's output never depends on which other samples ran or in which order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import soxr

from duplexeval.conditions import Condition
from duplexeval.conditions._network import NetworkSpec
from duplexeval.data._dialogue import Dialogue
from duplexeval.plan._samples import EvalProtocol, Sample, split_passes
from duplexeval.runs._inputs import (
    Conditions,
    Cut,
    DialogueAudio,
    Feed,
    Grid,
    Inputs,
    concat,
    conditions_problem,
    slice_padded,
)
from duplexeval.runs._session_view import session_spec
from duplexeval.systems._base import (
    BatchRowFailure,
    BatchSession,
    Capabilities,
    ClockKind,
    Session,
    StepOutput,
    System,
    SystemFailure,
)
from duplexeval.systems.realtime._driven import impair

__all__ = ["DEFAULT_BATCH_SIZE", "DialogueAudio", "SampleOutput", "conditions_problem",
           "derive_seed", "open_session", "protocol_problem", "run_group"]

OnError = Callable[[Sample, BaseException], None] | None

DEFAULT_BATCH_SIZE = 8
"""Rows per batch of continuations (systems with the ``batch`` capability); 1: no batching."""


def protocol_problem(protocol: EvalProtocol, capabilities: Capabilities) -> str | None:
    """Why a system with ``capabilities`` cannot run ``protocol`` (``None``: it can): multi-ref
    teacher-forces the reference system audio, which needs ``teacher_forcing_audio``;
    interactive reacts frame by frame to the system's output, which a whole-file system
    (clock ``file``) only gives once its whole input is known."""
    if protocol is EvalProtocol.MULTI_REF and not capabilities.teacher_forcing_audio:
        return "multi-ref needs teacher forcing (capability teacher_forcing_audio), which it " \
               "does not declare"
    if protocol is EvalProtocol.INTERACTIVE and capabilities.clock is ClockKind.FILE:
        return "interactive needs a system that answers frame by frame; a whole-file " \
               "system (clock file) cannot react"
    return None


def derive_seed(run_seed: int, key: str) -> int:
    """A 63-bit seed from the run seed and a key (stable across Python versions)."""
    digest = hashlib.sha256(f"{run_seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@dataclass
class SampleOutput:
    """What one sample produced, at the dataset rate."""

    sample: Sample
    user: np.ndarray
    system: np.ndarray
    context_user: np.ndarray | None
    context_system: np.ndarray | None
    frames: int
    """Frames stepped for this sample alone (its continuation, or its whole replay)."""
    trace: dict[str, Any]
    """What the session reported (:meth:`Session.trace`), in session time."""
    seed: int
    start_time: float = 0.0
    """Dialogue time (s) of the session's first frame: session sample ``n`` of its trace is
    dialogue time ``start_time + n / sample_rate``."""


def _to_dataset_rate(x: np.ndarray, native: int, target: int, length: int) -> np.ndarray:
    if native != target:
        x = soxr.resample(x, native, target).astype(np.float32)
    if len(x) < length:
        x = np.concatenate([x, np.zeros(length - len(x), dtype=np.float32)])
    return x[:length]


def noise_seed(s: Sample) -> int | None:
    """The seed of a twin's signal-correlated noise (from its event id alone: every system
    and run seed hears the same noise), ``None`` when its input ends in silence."""
    if not s.counterfactual or s.replaced_by == "silence":
        return None
    return derive_seed(0, f"{s.event_id}/noise")


def _noise_span(s: Sample) -> tuple[float, float]:
    """A noise twin's act span (dialogue seconds)."""
    assert s.removed_from is not None and s.noise_until is not None
    return s.removed_from, s.noise_until


def user_cut(grid: Grid, s: Sample) -> Cut:
    """How sample ``s``'s user input differs from the dialogue's on ``grid``: silent from
    ``mute_start``, and a noise twin's act span as noise."""
    seed = noise_seed(s)
    if seed is None:
        return Cut(grid.sample(s.mute_start))
    span = _noise_span(s)
    return Cut(grid.sample(s.mute_start), seed, span,
               (grid.sample(span[0]), grid.sample(span[1])))


def _muted_user(audio: DialogueAudio, s: Sample) -> np.ndarray:
    """The sample's user channel at the dataset rate as it was fed: the dialogue's (a noise
    twin's act span as noise), silent from ``mute_start``."""
    sr = audio.sample_rate
    a, b = round(s.input_start * sr), round(s.input_end * sr)
    seed = noise_seed(s)
    channel = np.ascontiguousarray(audio.audio[:, s.user_channel]) if seed is None else \
        audio.noisy_channel(s.user_channel, sr, _noise_span(s), seed)
    x = slice_padded(channel, a, b)
    x[max(0, round(s.mute_start * sr) - a):] = 0.0
    return x


def run_group(
    system: System,
    dialogue: Dialogue,
    audio: DialogueAudio,
    samples: list[Sample],
    protocol: EvalProtocol,
    run_seed: int,
    use_snapshot: bool | None = None,
    on_error: Callable[[Sample, BaseException], None] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_output: Callable[[SampleOutput], None] | None = None,
    conditions: Conditions = (),
) -> tuple[list[SampleOutput], int]:
    """Run the samples of one (dialogue, user channel); returns their outputs (in the order of
    ``samples``) and the total number of frames stepped; samples with different context starts
    run in separate passes.  ``use_snapshot=None`` uses snapshots when the system has them;
    ``batch_size`` rows at most step together when the system has ``batch``.  ``on_output``
    is handed each output as soon as its fork (or batch) finishes, before the pass goes on, so
    that a caller can save it at once: a kill late in a long pass then loses only the forks in
    flight.  ``conditions``: the run's; its ``echo`` acts online in the frame loop and its
    ``network`` in a wall-clock session's driver (the others are in ``audio`` already), and
    with either the saved user channel is what the session heard."""
    caps = system.capabilities
    if use_snapshot is None:
        use_snapshot = caps.snapshot
    if caps.clock is ClockKind.FILE:
        use_snapshot = False  # a whole-file session replays each sample's own input
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    problem = protocol_problem(protocol, caps)
    if problem is not None:
        raise ValueError(f"system {system.name!r}: {problem}")
    outputs: list[SampleOutput] = []
    frames = 0
    if protocol is EvalProtocol.SINGLE:
        for s in samples:
            out, n = _run_single(system, dialogue, audio, s, run_seed, on_error, conditions)
            frames += n
            if out is not None:
                outputs.append(out)
                if on_output is not None:
                    on_output(out)
        return outputs, frames
    for members in split_passes(samples):
        run = _Pass(system, dialogue, audio, members, protocol, run_seed, conditions)
        run.on_output = on_output
        batch = batch_size if use_snapshot and caps.batch else 1
        outs, n = _run_shared(run, members, use_snapshot, on_error, batch)
        outputs += outs
        frames += n
    order = {s.event_id: i for i, s in enumerate(samples)}
    return sorted(outputs, key=lambda o: order[o.sample.event_id]), frames


def open_session(system: System, dialogue: Dialogue, audio: DialogueAudio, system_channel: int,
                 t0: float, seed: int, network: Condition | None = None) -> Session:
    """A session shown the redacted dialogue and exactly the oracle data it declared; with a
    ``network`` condition, a wall-clock session's frames are lost and delayed by a link
    seeded with ``derive_seed(seed, "network")``
    (:func:`~duplexeval.systems.realtime._driven.impair`)."""
    caps = system.capabilities

    def reference_audio() -> np.ndarray:
        ref = audio.channel(system_channel, caps.sample_rate)
        return ref[round(t0 * caps.sample_rate):]

    session = system.open(session_spec(caps, dialogue, system_channel, seed, reference_audio))
    if network is not None and not impair(session, NetworkSpec.of(network,
                                                                   derive_seed(seed, "network"))):
        session.close()
        raise SystemFailure(f"a network condition needs a session stepped by the real-time "
                            f"driver, and {system.name!r} opened a {type(session).__name__}")
    return session


def _run_single(system: System, dialogue: Dialogue, audio: DialogueAudio, s: Sample,
                run_seed: int, on_error: Callable[[Sample, BaseException], None] | None,
                conditions: Conditions = ()) -> tuple[SampleOutput | None, int]:
    caps = system.capabilities
    grid = Grid(s.input_start, caps.sample_rate, caps.frame_size)
    inputs = Inputs(audio, dialogue, s.user_channel, grid, conditions)
    seed = derive_seed(run_seed, f"{s.seed_key}/{EvalProtocol.SINGLE.value}")
    end = grid.ceil_frame(s.input_end)
    mute = user_cut(grid, s)
    frames: list[np.ndarray] = []
    feed = Feed(inputs)
    try:
        session = open_session(system, dialogue, audio, s.system_channel, grid.t0, seed,
                               inputs.network)
        if caps.clock is ClockKind.FILE:
            session.load_input(concat([inputs.user_frame(k, mute) for k in range(end)]))
        for k in range(end):
            frames.append(feed.played(session.step(feed.frame(k, mute)).audio))
        trace = session.trace()
        session.close()
    except Exception as exc:  # a system failure is recorded for this sample
        if on_error is None:
            raise
        on_error(s, exc)
        return None, len(frames)
    native = np.concatenate(frames) if frames else np.zeros(0, np.float32)
    length = round(s.input_end * audio.sample_rate) - round(s.input_start * audio.sample_rate)
    system_out = _to_dataset_rate(native[:grid.sample(s.input_end)], caps.sample_rate,
                                  audio.sample_rate, length)
    heard = feed.stream(trace)
    user = _muted_user(audio, s) if heard is None else _to_dataset_rate(
        heard[:grid.sample(s.input_end)], caps.sample_rate, audio.sample_rate, length)
    return SampleOutput(s, user, system_out, None, None, end, trace, seed, grid.t0), end


class _Pass:
    """One continuous pass over a (dialogue, user channel) from a shared context start: its
    frame grid, input streams and seeds (see the module docstring)."""

    def __init__(self, system: System, dialogue: Dialogue, audio: DialogueAudio,
                 samples: list[Sample], protocol: EvalProtocol, run_seed: int,
                 conditions: Conditions = ()) -> None:
        caps = system.capabilities
        self.system, self.dialogue, self.audio = system, dialogue, audio
        self.protocol, self.run_seed = protocol, run_seed
        self.t0 = samples[0].context_start  # one pass: every sample has this context start
        self.grid = Grid(self.t0, caps.sample_rate, caps.frame_size)
        user = samples[0].user_channel
        self.system_channel = samples[0].system_channel
        self.inputs = Inputs(audio, dialogue, user, self.grid, conditions)
        self.forced = protocol is EvalProtocol.MULTI_REF
        key = f"{dialogue.id}/ch{user}/{protocol.value}" + (
            f"@{self.t0:.6f}" if self.t0 > 0 else "")
        self.seed = derive_seed(run_seed, key)
        self.forks = {s.event_id: self.grid.floor_frame(s.fork_time) for s in samples}
        self.on_output: Callable[[SampleOutput], None] | None = None
        """Handed each finished output at once (:func:`run_group`)."""

    def emit(self, outputs: list[SampleOutput]) -> list[SampleOutput]:
        """``outputs``, each first handed to :attr:`on_output`."""
        if self.on_output is not None:
            for out in outputs:
                self.on_output(out)
        return outputs

    def sample_seed(self, s: Sample) -> int:
        """The seed sample ``s`` reseeds with at its fork."""
        return derive_seed(self.run_seed, f"{s.seed_key}/{self.protocol.value}")

    def open(self) -> Session:
        return open_session(self.system, self.dialogue, self.audio, self.system_channel,
                            self.t0, self.seed, self.inputs.network)

    def load_whole(self, session: Session, s: Sample) -> None:
        """Clock ``file``: hand the session sample ``s``'s whole replay input (the prefix
        unmuted, the continuation muted from ``mute_start``, the reference forced before the
        fork under multi-ref) before its first step."""
        if self.system.capabilities.clock is not ClockKind.FILE:
            return
        fork, end = self.forks[s.event_id], self.grid.ceil_frame(s.input_end)
        mute = user_cut(self.grid, s)
        user = concat([self.inputs.user_frame(k, mute if k >= fork else None)
                        for k in range(end)])
        reference = None
        if self.forced:
            reference = np.zeros_like(user)
            forced = concat([self.inputs.forced(k).audio for k in range(fork)])
            reference[:len(forced)] = forced
        session.load_input(user, reference)

    def prefix_step(self, session: Session, k: int, feed: Feed) -> np.ndarray:
        """Frame ``k`` before a fork: unmuted user input (and forcing under multi-ref: the
        forced reference is what plays, so what an echo feeds back)."""
        if self.forced:
            f = self.inputs.forced(k)
            session.step(feed.frame(k), f)
            return feed.played(f.audio)
        return feed.played(session.step(feed.frame(k)).audio)

    def shared_prefix(self) -> tuple[Session, list[np.ndarray], dict[int, Any], Feed]:
        """Step one session to the last fork, snapshotting at every fork frame; returns it,
        the prefix output frames, the snapshots by frame and what it heard."""
        wanted = set(self.forks.values())
        last = max(wanted)
        session = self.open()
        feed = Feed(self.inputs)
        out: list[np.ndarray] = []
        snapshots: dict[int, Any] = {}
        for k in range(last):
            if k in wanted:
                snapshots[k] = session.snapshot()
            out.append(self.prefix_step(session, k, feed))
        snapshots[last] = session.snapshot()
        return session, out, snapshots, feed

    def continuation(self, s: Sample, session: Session, prefix: list[np.ndarray],
                     counter: list[int], feed: Feed) -> SampleOutput:
        """Reseed at the fork, step to ``input_end`` with the user muted from ``mute_start``
        (``feed``: what the session heard and played up to the fork); frames stepped are
        added to ``counter[0]`` as they happen."""
        fork, end = self.forks[s.event_id], self.grid.ceil_frame(s.input_end)
        mute = user_cut(self.grid, s)
        seed = self.sample_seed(s)
        session.reseed(seed)
        cont = []
        for k in range(fork, end):
            cont.append(feed.played(session.step(feed.frame(k, mute)).audio))
            counter[0] += 1
        trace = session.trace()
        return self.compose(s, prefix + cont, trace, counter[0], feed.stream(trace))

    def compose(self, s: Sample, native: list[np.ndarray], trace: dict[str, Any],
                frames: int, heard: np.ndarray | None = None) -> SampleOutput:
        """Sample ``s``'s output from its native frames (the prefix, then its own);
        ``heard``: what the session heard from frame 0, when that is the saved user
        channel (:attr:`Inputs.keeps_heard`)."""
        stream = np.concatenate(native) if native else np.zeros(0, np.float32)
        return _compose(s, stream, self.grid, self.audio, self.forced, trace, frames,
                        self.sample_seed(s), self.inputs, heard)




def _run_shared(run: _Pass, samples: list[Sample], use_snapshot: bool, on_error: OnError,
                batch_size: int = 1) -> tuple[list[SampleOutput], int]:
    total_frames = 0
    shared: Session | None = None
    pass_out: list[np.ndarray] = []
    snapshots: dict[int, Any] = {}
    heard = Feed(run.inputs)
    if use_snapshot:
        try:
            shared, pass_out, snapshots, heard = run.shared_prefix()
        except Exception as exc:
            if on_error is None:
                raise
            for s in samples:
                on_error(s, exc)
            return [], 0
        total_frames = max(run.forks.values())
    if shared is not None and batch_size > 1:
        outputs, frames = _run_batched(run, samples, shared, pass_out, snapshots, batch_size,
                                       on_error, heard)
        shared.close()
        return outputs, total_frames + frames
    replayed: list[SampleOutput] = []
    for s in samples:
        fork = run.forks[s.event_id]
        own = [0]  # frames this sample stepped on its own
        try:
            if shared is not None:
                shared.restore(snapshots[fork])
                replayed += run.emit([run.continuation(s, shared, pass_out[:fork], own,
                                                       heard.fork(fork, pass_out))])
            else:
                session = run.open()
                run.load_whole(session, s)
                feed = Feed(run.inputs)
                prefix = []
                for k in range(fork):
                    prefix.append(run.prefix_step(session, k, feed))
                    own[0] += 1
                replayed += run.emit([run.continuation(s, session, prefix, own, feed)])
                session.close()
        except Exception as exc:
            if on_error is None:
                raise
            on_error(s, exc)
        total_frames += own[0]
    if shared is not None:
        shared.close()
    return replayed, total_frames


def _run_batched(run: _Pass, samples: list[Sample], shared: Session, prefix: list[np.ndarray],
                 snapshots: dict[int, Any], batch_size: int, on_error: OnError,
                 heard: Feed) -> tuple[list[SampleOutput], int]:
    """The continuations of a pass in batches of at most ``batch_size`` rows (module
    docstring; ``heard``: the shared prefix's feed); returns the outputs of the samples that
    did not fail and the frames stepped."""
    outputs: list[SampleOutput] = []
    frames = 0
    for first in range(0, len(samples), batch_size):
        rows = _Rows(run, samples[first:first + batch_size], on_error, heard, prefix)
        try:
            batch = shared.fork_batch([snapshots[f] for f in rows.forks],
                                      [run.sample_seed(s) for s in rows.samples])
        except Exception as exc:
            rows.fail(range(len(rows.samples)), exc)
            continue
        try:
            rows.step_all(batch)
            outputs += run.emit(rows.finish(batch, prefix))
        finally:
            batch.close()
        frames += rows.frames
    return outputs, frames


class _Rows:
    """The samples of one batch: their frame ranges, continuation frames and failures."""

    def __init__(self, run: _Pass, samples: list[Sample], on_error: OnError, heard: Feed,
                 prefix: list[np.ndarray]) -> None:
        self.run, self.samples, self.on_error = run, samples, on_error
        self.forks = [run.forks[s.event_id] for s in samples]
        self.feeds = [heard.fork(f, prefix) for f in self.forks]
        self.ends = [run.grid.ceil_frame(s.input_end) for s in samples]
        self.mutes = [user_cut(run.grid, s) for s in samples]
        self.alive = [True] * len(samples)
        self.cont: list[list[np.ndarray]] = [[] for _ in samples]
        self.frames = 0

    def fail(self, rows: Iterable[int], exc: BaseException) -> None:
        """Record rows as failed (raise without ``on_error``); they are stepped no more."""
        for i in rows:
            if self.alive[i]:
                self.alive[i] = False
                if self.on_error is None:
                    raise exc
                self.on_error(self.samples[i], exc)

    def users(self, t: int) -> list[np.ndarray | None]:
        """Batch step ``t``'s input: row ``i``'s frame ``fork_i + t``, None once it ended."""
        return [feed.frame(f + t, m) if alive and f + t < e else None
                for f, e, m, alive, feed in zip(self.forks, self.ends, self.mutes, self.alive,
                                                self.feeds, strict=True)]

    def step_all(self, batch: BatchSession) -> None:
        """Step the rows together until the longest has ended."""
        for t in range(max(e - f for f, e in zip(self.forks, self.ends, strict=True))):
            users = self.users(t)
            if all(u is None for u in users):
                break
            try:
                outs: list[StepOutput | None] = list(batch.step(users))
            except BatchRowFailure as exc:
                outs = exc.outputs
                for i, why in exc.failed.items():
                    self.fail([i], SystemFailure(why))
            except Exception as exc:
                self.fail([i for i, u in enumerate(users) if u is not None], exc)
                return
            if len(outs) != len(users):
                self.fail(range(len(users)), SystemFailure(
                    f"the batch returned {len(outs)} outputs for {len(users)} rows"))
                return
            for i, (u, out) in enumerate(zip(users, outs, strict=True)):
                if u is not None and self.alive[i] and out is not None:
                    self.cont[i].append(self.feeds[i].played(out.audio))
                    self.frames += 1

    def finish(self, batch: BatchSession, prefix: list[np.ndarray]) -> list[SampleOutput]:
        """The outputs of the rows that did not fail, composed as on the single path."""
        outputs = []
        for i, s in enumerate(self.samples):
            if not self.alive[i]:
                continue
            try:
                trace = batch.trace(i)
            except Exception as exc:
                self.fail([i], exc)
                continue
            outputs.append(self.run.compose(s, prefix[:self.forks[i]] + self.cont[i], trace,
                                            len(self.cont[i]), self.feeds[i].stream(trace)))
        return outputs


def _compose(s: Sample, native: np.ndarray, grid: Grid, audio: DialogueAudio, forced: bool,
             trace: dict[str, Any], frames: int, seed: int, inputs: Inputs,
             heard: np.ndarray | None = None) -> SampleOutput:
    """Cut a sample's native-rate output stream into its context and input parts (and the
    stream it heard, when that is the saved user channel, the same way)."""
    sr_d, sr_n = audio.sample_rate, grid.rate
    if forced:  # the saved system channel is the reference until event_start
        cut = grid.sample(s.event_start)
        native = native.copy()
        ref = slice_padded(inputs.reference, inputs.offset, inputs.offset + cut)
        native[:min(cut, len(native))] = ref[:min(cut, len(native))]
    a, b = grid.sample(s.input_start), grid.sample(s.input_end)
    length = round(s.input_end * sr_d) - round(s.input_start * sr_d)
    system_out = _to_dataset_rate(slice_padded(native, a, b), sr_n, sr_d, length)
    ctx_user = ctx_system = None
    if s.has_context:
        c0 = grid.sample(s.context_start)
        c_len = round(s.context_end * sr_d) - round(s.context_start * sr_d)
        ctx_system = _to_dataset_rate(slice_padded(native, c0, a), sr_n, sr_d, c_len)
        d0 = round(s.context_start * sr_d)
        ctx_user = slice_padded(np.ascontiguousarray(audio.audio[:, s.user_channel]), d0,
                                d0 + c_len) if heard is None else \
            _to_dataset_rate(slice_padded(heard, c0, a), sr_n, sr_d, c_len)
    user = _muted_user(audio, s) if heard is None else \
        _to_dataset_rate(slice_padded(heard, a, b), sr_n, sr_d, length)
    return SampleOutput(s, user, system_out, ctx_user, ctx_system, frames, trace, seed,
                        grid.t0)

