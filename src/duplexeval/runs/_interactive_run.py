"""An ``interactive`` run written as a run directory that analysis, scoring and tables read
like any other.

Per dialogue of the dataset and user channel of the plan, one session of the simulated user
(:func:`~duplexeval.runs._interactive.run_interactive`) hears the system; its realised wav,
timeline and decision log go under ``interactive/``.  The realised timeline's events (annotated
again from the realised speech spans) are then planned like a Multi (gen) dialogue
(:func:`realised_samples`: the same windows and filters, the user never muted, since the input
is what the user did), and each sample is written as every run writes one::

    realised   user   |==1==|.........|==2==|..........
               system        .3|===2 s===|.......|==...
    sample             [ input_start = turn 1 start,  input_end = turn 1 end + W ]
                             ^ event_start (TURN_SHIFT)   (clipped to the realised length)

    samples/{dialogue}/{event_id}.wav          the realised stereo over [input_start, input_end]
    samples/{dialogue}/{event_id}.context.wav  over [context_start, input_start]
    samples/{dialogue}/{event_id}.json         the record, written last

so the timing metrics apply to the realised events.  Times of an interactive sample are
realised dialogue seconds (not the reference's); the wavs are at the system's rate.  The
session steps at least one evaluation window past the user's last item
(:attr:`UserPolicy.tail`), so the last event has its window too.

Acoustic conditions put the dialogue's user channel under them before the user replays its
items (:func:`~duplexeval.runs._units.conditioned_audio`, the same seeds as a static run), so
each item carries the condition recorded under it; the log's header names them.

Resume: a (dialogue, user channel) whose timeline is written and whose realised samples are
all finished is skipped; any other runs again (deterministically: the same files).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from tqdm import tqdm

from duplexeval._fileio import read_json
from duplexeval.conditions import Condition
from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.errors import DuplexevalError
from duplexeval.events import Event, EventKind
from duplexeval.plan._samples import PlanOptions, PlanStats, Sample, plan_dialogue
from duplexeval.runs._directory import RunDir, SampleRecord
from duplexeval.runs._driver import derive_seed
from duplexeval.runs._interactive import (
    InteractiveFiles,
    InteractiveResult,
    run_interactive,
    write_interactive,
)
from duplexeval.runs._realised_items import realised_items
from duplexeval.runs._simulated_user import UserPolicy, reference_gaps
from duplexeval.runs._units import conditioned_audio, load_dialogue_audio
from duplexeval.systems._base import System

__all__ = ["InteractiveOutcome", "default_policy", "execute_interactive", "realised_dialogue",
           "realised_samples"]


def default_policy(dataset: Dataset, policy: UserPolicy | None, window: float) -> UserPolicy:
    """The policy a run uses: ``policy`` (default :class:`UserPolicy`) with its gaps drawn
    from the dataset's reference gaps (:func:`reference_gaps`) and a tail of at least
    ``window`` seconds; a dataset without a gap to draw is one :class:`DuplexevalError`."""
    gaps = reference_gaps(dataset)
    if not gaps:
        raise DuplexevalError(f"{dataset.root}: no TURN_SHIFT with a gap to draw the "
                              "simulated user's gaps from")
    base = policy or UserPolicy()
    return replace(base, gaps=gaps, tail=max(base.tail, window))


def _events(listed: object, user: int) -> tuple[Event, ...]:
    assert isinstance(listed, list)
    return tuple(Event(EventKind(e["event"]), user if e["role"] == "user" else 1 - user,
                       float(e["time"][0]), float(e["time"][1])) for e in listed)


def realised_dialogue(dialogue_id: str, timeline: dict[str, object],
                      source: str = "realised timeline") -> Dialogue:
    """The realised dialogue of a timeline (``InteractiveResult.timeline_json``): its events,
    on the user's channel for the ``user`` role and the other for ``system``.  The timeline
    of a dialogue with annotated items (an ``items`` entry: a FLEXI item or MTR rounds,
    :mod:`duplexeval.runs._realised_items`) plans those instead: the moved user events, with
    the realised record in ``extra`` under its field, or no event when the item could not be
    scored.  A timeline that does not hold these is one :class:`DuplexevalError` naming
    ``source`` (its file)."""
    try:
        return _realised(dialogue_id, timeline)
    except (KeyError, TypeError, ValueError, IndexError, AssertionError) as exc:
        raise DuplexevalError(f"{source}: not a realised timeline "
                              f"({type(exc).__name__}: {exc})") from None


def _realised(dialogue_id: str, timeline: dict[str, object]) -> Dialogue:
    user = int(str(timeline["user_channel"]))
    items = timeline.get("items")
    if isinstance(items, dict):
        if "record" not in items:
            return Dialogue(id=dialogue_id, events=())
        return Dialogue(id=dialogue_id, events=_events(items["events"], user),
                        extra={str(items["field"]): items["record"]})
    return Dialogue(id=dialogue_id, events=_events(timeline["events"], user))


def realised_samples(realised: Dialogue, user: int, options: PlanOptions,
                     duration: float) -> list[Sample]:
    """The samples of a realised dialogue on user channel ``user``: the plan's rules under
    ``options`` (windows, filters, ids) with the user unmuted, one try, no twins; each
    ``input_end`` clipped to the realised ``duration``."""
    chosen = replace(options, channels=(user,), mute=False, counterfactual=False, repeats=1)
    samples = plan_dialogue(realised, chosen, PlanStats())
    return [replace(s, input_end=min(s.input_end, duration)) for s in samples]


@dataclass
class InteractiveOutcome:
    """What :func:`execute_interactive` did: every realised sample (in order), the frames
    stepped now, and the samples resumed past."""

    samples: list[Sample]
    frames: int
    resumed: int


def _finished(run: RunDir, dialogue_id: str, user: int,
              options: PlanOptions) -> list[Sample] | None:
    """The realised samples of a unit already done (``None``: it must run)."""
    files = InteractiveFiles.of(run.root, dialogue_id, user)
    if not files.timeline.is_file():
        return None
    try:
        timeline = read_json(files.timeline, "realised timeline")
    except DuplexevalError:
        return None
    if not isinstance(timeline, dict):
        return None
    duration = timeline.get("duration")
    if not isinstance(duration, int | float) or not math.isfinite(duration):
        return None  # unreadable: the unit runs again
    try:
        realised = realised_dialogue(dialogue_id, timeline, str(files.timeline))
    except DuplexevalError:
        return None
    samples = realised_samples(realised, user, options, float(duration))
    done = all(run.finished(s.sample_id, s.event_id) for s in samples)
    return samples if done else None


def _save(run: RunDir, s: Sample, result: InteractiveResult, system: System,
          seed: int) -> None:
    """One realised sample's wavs, then its record (last)."""
    rate = result.sample_rate
    files = run.sample_files(s.sample_id, s.event_id)

    def cut(a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = round(a * rate), min(round(b * rate), len(result.user))
        return result.user[lo:hi], result.system[lo:hi]

    user, out = cut(s.input_start, s.input_end)
    run.write_wav(files.wav, user, out, rate)
    if s.has_context:
        run.write_wav(files.context_wav, *cut(s.context_start, s.context_end), rate)
    run.write_record(s.sample_id, s.event_id, SampleRecord(
        status="ok", sample=s.to_json(), protocol="interactive", seed=seed,
        frames=round((s.input_end - s.context_start) * rate / system.capabilities.frame_size),
        system=system.name, output_audio_path=run.relative(files.wav), audio_frames=len(user),
        context_audio_path=run.relative(files.context_wav) if s.has_context else ""))


def execute_interactive(system: System, dataset: Dataset, options: PlanOptions, run: RunDir,
                        seed: int, policy: UserPolicy, conditions: Sequence[Condition] = (),
                        progress: bool = True) -> InteractiveOutcome:
    """Run every dialogue of ``dataset`` on each user channel of ``options`` (default: the
    dataset's) under ``interactive`` into ``run`` (module docstring); the caller writes the
    configuration before and the metadata after."""
    channels = options.channels or dataset.user_channels
    chosen = [c.to_json() for c in conditions]
    outcome = InteractiveOutcome([], 0, 0)
    units = [(d, user) for d in dataset for user in channels]
    for dialogue, user in tqdm(units, desc=f"{system.name} interactive", unit="dialogue",
                               file=sys.stderr, disable=not progress):
        done = _finished(run, dialogue.id, user, options)
        if done is not None:
            outcome.samples += done
            outcome.resumed += len(done)
            continue
        audio = conditioned_audio(load_dialogue_audio(dialogue), dialogue, {user},
                                  tuple(conditions), seed)
        result = run_interactive(system, dialogue, audio, user, policy, seed, chosen,
                                 tuple(conditions))
        item = realised_items(dialogue, user, result.log, result.system_spans,
                              result.duration)
        extra = {} if item is None else {"items": item.to_json(user)}
        write_interactive(run.root, result, dialogue.id, user, extra)
        realised = realised_dialogue(dialogue.id, {**result.timeline_json(user), **extra})
        session_seed = derive_seed(seed, f"{dialogue.id}/ch{user}/interactive")
        for s in realised_samples(realised, user, options, result.duration):
            _save(run, s, result, system, session_seed)
            outcome.samples.append(s)
        outcome.frames += int(result.log[0]["frames"])
    return outcome
