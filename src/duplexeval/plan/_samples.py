"""Evaluation plans: which samples a run executes under Single, Multi (gen) and Multi (ref).

The sample-building semantics equal the official M3-DuplexBench code (``inference/events.py``)
on every event; only its exact float comparisons use the tolerance
:data:`~duplexeval.timeline.TOL` here.

Per dialogue, channel lists in record order, events in file order:

1. skip TURN; SHORTPAUSE unless ``include_short_pause``; BC and BARGE_IN without context;
2. roles: TURN_SHIFT is stored on the next speaker's channel, so system = its channel and user =
   the other; every other kind: user = its channel.  Keep only user channels in ``channels``;
3. BARGE_IN: ``event_end`` := end of the user TURN starting at ``event_start`` (none: invalid,
   counted *before* ``total_events``, as the official code does);
4. windows (W = ``window``)::

     TURN_SHIFT / TURN_HOLD      user TURN ending at event_start (none: invalid)
        user   |=====TURN=====|                          input = [TURN start, TURN end + W]
                              ^event_start

     SHORTPAUSE                  user TURN containing the pause (none: invalid)
        user   |===TURN==  ==TURN===|                    input = [TURN start, TURN end + W]

     BC / BARGE_IN               input = [event_start, event_start + max(W, event duration)]

   context: none (``single``) -> [0, 0]; else [0, input_start], or with ``context_max_len`` L
   the earliest TURN start (either channel) in [input_start - L, input_start), else
   max(0, input_start - L);
5. filter at event_start against the **reference** system channel (inclusive): BC and BARGE_IN
   need the system inside a TURN; SHIFT, HOLD and SHORTPAUSE need it inside neither a TURN nor
   a TURN_HOLD (so overlapping shifts are always filtered);
6. ``event_id = f"{id}_ch{user}_{k:04d}_{task}"``, k = samples kept so far in the dialogue;
7. repeats (``repeats = n > 1``, ``run --repeats``): each sample becomes ``n`` tries of the same
   event, ``event_id + f"_r{j}"`` for ``j = 0 .. n-1`` (:func:`split_repeat` undoes it), in
   plan order one after the other; they share the pass, the fork and the snapshot, and differ
   only in the seed the driver derives from the event id.  ``repeats = 1`` (the default) plans
   exactly the samples above, ids unchanged.

``fork_time`` is where a sample's input stops being a continuous pass over the dialogue:
multi-gen: where the user input is muted (event_start for SHIFT/HOLD/SHORTPAUSE, event_end for
BC/BARGE_IN); multi-ref: the end of teacher forcing (event_start); single: input_start;
interactive: as multi-gen (informative only: one session runs per dialogue and user channel,
never forked).

Counterfactual twins (``PlanOptions.counterfactual``): a sample with a user act is followed by
its twin, the same sample with the act removed: the user channel is muted from the act's onset
(:attr:`Sample.removed_from`) to ``input_end``, and the twin forks there, so it shares the pass
up to the act and is one more continuation (a background twin forks where its original does:
after the act-free prefix, and, under multi-ref, where teacher forcing ends); it reseeds with
its original's seed (:attr:`Sample.seed_key`).  Its ``event_id`` is the original's with
:data:`COUNTERFACTUAL_SUFFIX`; everything else is the original's (the official counters count
the original only).  The acts: a BC or BARGE_IN sample's own event (onset ``event_start``);
for any other sample, the first background speech a multi-round suite annotates for its user
channel (``background_span`` of the dialogue's ``mtr`` rounds, :mod:`duplexeval.data._mtr_record`)
with its onset inside what the sample hears after its fork, ``[fork_time, mute_start)`` (an
unmuted plan: MTR's rounds).  Muting runs to the window's end, so a background twin also loses
the user speech after the background onset::

    user      ....uuuuuuu|<-- act -->|             original: muted from event_end (BC, BARGE_IN)
    twin      ....uuuuuuu|                         muted from the act's onset
    system    ....SSSSSSSSSSSS?                    the difference is the effect of the act
                         ^ removed_from: the twin's fork (BC, BARGE_IN)

What replaces the act (``PlanOptions.counterfactual_replacement``, :attr:`Sample.replaced_by`):
``silence`` (the above: the act removed, so the effect is that of the act as a whole, sound
included) or ``noise``: over the act's span (:attr:`Sample.removed_from` to
:attr:`Sample.noise_until`: a BC's or barge-in's ``event_end``, a background speech's
annotated end), the user's own audio with a random sign per sample (signal-correlated noise,
Schroeder 1968; seeded by the twin's event id), which keeps the act's sample-wise energy
envelope, its onset and its level but not its speech (a flat spectrum, no pitch, nothing to
recognise); everything else is the original's input, muting included.  The effect is then
that of the act's *content*: a system that stops for any sound at the user's onset stops in
both and shows none; one that stops for speech shows it::

    user      ....uuuuuuu|<-- act -->|.....        original (muted from event_end)
    twin      ....uuuuuuu|~~~~~~~~~~~|.....        the same envelope, no speech (noise)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal, get_args

from duplexeval.data._dialogue import Dataset, Dialogue
from duplexeval.events import EVENT_TO_TASK, TASKS, EventKind
from duplexeval.timeline import Span, approx_eq, time_ge, time_le, time_lt

__all__ = [
    "COUNTERFACTUAL_SUFFIX",
    "REPLACEMENTS",
    "SAMPLE_JSON_KEYS",
    "TASKS",
    "EvalProtocol",
    "Plan",
    "PlanOptions",
    "PlanStats",
    "Replacement",
    "Sample",
    "build_plan",
    "plan_dialogue",
    "split_passes",
    "split_repeat",
]


SAMPLE_JSON_KEYS: tuple[str, ...] = (
    "sample_id", "event_id", "user_channel", "system_channel", "event_type", "task",
    "event_start", "event_end", "input_start", "input_end", "context_start", "context_end",
    "fork_time",
)

_MUTE_AT_END = {EventKind.BC, EventKind.BARGE_IN}

COUNTERFACTUAL_SUFFIX = "_cf"
"""Appended to an event id for its counterfactual twin (the user's act removed)."""
Replacement = Literal["silence", "noise"]
"""What replaces the user's act in a counterfactual twin (the module docstring)."""
REPLACEMENTS: tuple[Replacement, ...] = get_args(Replacement)
MAX_REPEATS = 100
"""The most tries per sample a plan accepts."""

_REPEAT = re.compile(r"^(?P<base>.+)_r(?P<j>0|[1-9][0-9]*)$")


def split_repeat(event_id: str) -> tuple[str, int | None]:
    """``(base event id, try j)`` of a repeated sample's id ``{base}_r{j}`` (rule 7); ``(event_id,
    None)`` for an id without the suffix (a plan of one try).  An event id of rule 6 ends in its
    task name, never in ``_r`` and digits, so the split is unambiguous."""
    found = _REPEAT.match(event_id)
    if found is None:
        return event_id, None
    return found["base"], int(found["j"])


class EvalProtocol(StrEnum):
    """The three M3 inference protocols, and the reactive ``interactive`` one."""

    SINGLE = "single"
    """No context: the user input [input_start, input_end] only; BC and BARGE_IN not evaluated."""
    MULTI_GEN = "multi-gen"
    """User-channel history from the context start; the system's own outputs form its history."""
    MULTI_REF = "multi-ref"
    """Both reference channels teacher-forced over the context and pre-event audio."""
    INTERACTIVE = "interactive"
    """A simulated user reacts to what it hears of the system
    (:mod:`duplexeval.runs._interactive`); its samples are planned on the *realised* dialogue
    (the windows and filters of Multi (gen), the user input never muted: it is what the user
    did), so a plan of the reference dialogue under it only previews the events."""

    @property
    def uses_context(self) -> bool:
        """True for the multi-turn protocols."""
        return self is not EvalProtocol.SINGLE


@dataclass(frozen=True)
class PlanOptions:
    """What to plan; the defaults are the official pipeline's."""

    protocol: EvalProtocol = EvalProtocol.MULTI_GEN
    channels: tuple[int, ...] | None = None
    """User channels to evaluate; ``None``: the dataset's (:attr:`Dataset.user_channels
    <duplexeval.data._dialogue.Dataset.user_channels>`; both for plain dialogues).  A built
    plan's options always name them."""
    window: float = 10.0
    """Evaluation window W in seconds after the event (``--eval-window-len``)."""
    context_max_len: float | None = None
    """Longest context in seconds (``None``: from the dialogue start)."""
    include_short_pause: bool = False
    """Evaluate SHORTPAUSEs (the official pipeline always ignores them)."""
    mute: bool = True
    """Zero the user input in the window from ``mute_start`` (M3's rule).  ``False`` plays the
    user channel as recorded through the window: MTR-DuplexBench's rounds, where what the user
    does while the system replies (background voices, backchannels, the next turn) is part of
    the test."""
    ignored_events: frozenset[EventKind] = frozenset()
    counterfactual: bool = False
    """Add the counterfactual twin of each sample with a user act (BC, BARGE_IN, annotated
    background speech), the act removed (see the module docstring)."""
    counterfactual_replacement: Replacement = "silence"
    """What replaces the act in the twins: ``silence`` (muted) or ``noise`` (signal-correlated
    noise: the act's envelope without its speech; the module docstring)."""
    repeats: int = 1
    """Tries per sample (rule 7): ``n`` forks of the same snapshot with ``n`` seeds, for
    pass@k, pass^k and stability (:mod:`duplexeval.metrics._stability`)."""

    def __post_init__(self) -> None:
        if self.counterfactual_replacement not in REPLACEMENTS:
            raise ValueError(f"counterfactual_replacement must be one of {', '.join(REPLACEMENTS)}")
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise ValueError(f"repeats must be an integer in [1, {MAX_REPEATS}]")
        if self.window <= 0:
            raise ValueError("window must be > 0 seconds")
        if self.context_max_len is not None and self.context_max_len <= 0:
            raise ValueError("context_max_len must be > 0 seconds")
        if self.channels is not None and (
                not self.channels or any(c not in (0, 1) for c in self.channels)):
            raise ValueError("channels must be a non-empty subset of {0, 1}")


@dataclass(frozen=True)
class Sample:
    """One evaluation sample (M3 fields plus ``fork_time``); times in seconds of the dialogue."""

    sample_id: str
    """The dialogue id (the official field name)."""
    event_id: str
    user_channel: int
    system_channel: int
    event_type: EventKind
    task: str
    event_start: float
    event_end: float
    input_start: float
    input_end: float
    context_start: float
    context_end: float
    fork_time: float
    muted: bool = True
    """Whether the user input is zeroed from :attr:`mute_start` (:attr:`PlanOptions.mute`)."""
    removed_from: float | None = None
    """A counterfactual twin's act onset (dialogue seconds), where its user input is muted
    from; ``None`` for every other sample."""
    replaced_by: Replacement = "silence"
    """What replaces a counterfactual twin's act: ``silence`` (muted from :attr:`removed_from`
    on), or ``noise`` (signal-correlated noise of the user's own audio from
    :attr:`removed_from` to :attr:`noise_until`; the module docstring)."""
    noise_until: float | None = None
    """A noise twin's act end (dialogue seconds); ``None`` for every other sample."""

    @property
    def counterfactual(self) -> bool:
        """Whether this is a counterfactual twin (the user's act removed)."""
        return self.removed_from is not None

    @property
    def seed_key(self) -> str:
        """What the sample's seed is derived from: its event id, its original's for a twin
        (a stochastic system draws the same continuation seed with and without the act); the
        twin ``{id}_cf_r{j}`` of a repeated sample is try ``j``'s, ``{id}_r{j}``."""
        if not self.counterfactual:
            return self.event_id
        base, j = split_repeat(self.event_id)
        base = base.removesuffix(COUNTERFACTUAL_SUFFIX)
        return base if j is None else f"{base}_r{j}"

    @property
    def mute_start(self) -> float:
        """Where the user input is zeroed in the evaluation window (official muting rule;
        ``input_end``, i.e. nowhere, for an unmuted sample; :attr:`removed_from` for a
        silent counterfactual twin; a noise twin's is its original's)."""
        if self.removed_from is not None and self.replaced_by == "silence":
            return self.removed_from
        if not self.muted:
            return self.input_end
        return self.event_end if self.event_type in _MUTE_AT_END else self.event_start

    @property
    def has_context(self) -> bool:
        """True when the sample has a non-empty context."""
        return self.context_end > self.context_start

    def to_json(self) -> dict[str, Any]:
        """The sample as ``plan --json`` prints it (keys in :data:`SAMPLE_JSON_KEYS`)."""
        out = {key: getattr(self, key) for key in SAMPLE_JSON_KEYS}
        out["event_type"] = self.event_type.value
        if self.counterfactual:
            out["counterfactual_of"] = self.seed_key
            if self.replaced_by != "silence":  # a silent twin's row as before the option
                out["counterfactual_replacement"] = self.replaced_by
        for key, value in out.items():
            if isinstance(value, float):
                out[key] = round(value, 9)  # drop float noise such as 18.009999999999998
        return out


@dataclass
class PlanStats:
    """Counters of the official ``data_stats.json``."""

    total_events: int = 0
    skipped_invalid: int = 0
    skipped_filtered: int = 0
    by_task: Counter[str] = field(default_factory=Counter)

    @property
    def kept_events(self) -> int:
        """Samples kept."""
        return sum(self.by_task.values())


def _find_turn(turns: Sequence[Span], *, start: float | None = None,
               end: float | None = None) -> Span | None:
    for turn in turns:
        if start is not None and approx_eq(turn.start, start):
            return turn
        if end is not None and approx_eq(turn.end, end):
            return turn
    return None


def _context(dialogue: Dialogue, input_start: float, options: PlanOptions) -> tuple[float, float]:
    if not options.protocol.uses_context:
        return 0.0, 0.0
    if options.context_max_len is None:
        return 0.0, input_start
    lower = max(0.0, input_start - options.context_max_len)
    starts = [t.start for ch in (0, 1) for t in dialogue.turns(ch)
              if time_ge(t.start, lower) and time_lt(t.start, input_start)]
    return (min(starts) if starts else lower), input_start


def _inside(dialogue: Dialogue, channel: int, t: float, kinds: set[EventKind]) -> bool:
    return any(
        e.channel == channel and e.kind in kinds and e.start <= e.end
        and time_le(e.start, t) and time_le(t, e.end)
        for e in dialogue.events
    )


def _input_window(kind: EventKind, event_start: float, event_end: float,
                  user_turns: Sequence[Span], window: float) -> tuple[float, float] | None:
    """``[input_start, input_end]`` of an event (rule 4), or ``None`` when its user TURN is
    missing (an invalid event)."""
    if kind in (EventKind.TURN_SHIFT, EventKind.TURN_HOLD):
        turn = _find_turn(user_turns, end=event_start)
        return None if turn is None else (turn.start, turn.end + window)
    if kind == EventKind.SHORTPAUSE:
        parent = next((t for t in user_turns if time_le(t.start, event_start)
                       and time_le(event_end, t.end)), None)
        return None if parent is None else (parent.start, parent.end + window)
    return event_start, event_start + max(window, max(0.0, event_end - event_start))


def _fork_time(kind: EventKind, protocol: EvalProtocol, event_start: float, event_end: float,
               input_start: float) -> float:
    if protocol is EvalProtocol.SINGLE:
        return input_start
    if protocol is EvalProtocol.MULTI_REF:
        return event_start
    return event_end if kind in _MUTE_AT_END else event_start


def _evaluated(kind: EventKind, options: PlanOptions) -> bool:
    """Rule 1: the kinds a plan evaluates."""
    if kind not in EVENT_TO_TASK or kind in options.ignored_events:
        return False
    if kind == EventKind.SHORTPAUSE and not options.include_short_pause:
        return False
    return not (kind in _MUTE_AT_END and not options.protocol.uses_context)


def plan_dialogue(dialogue: Dialogue, options: PlanOptions, stats: PlanStats) -> list[Sample]:
    """The samples of one dialogue, in the official visiting order; updates ``stats``."""
    samples: list[Sample] = []
    for event in dialogue.events:
        kind = event.kind
        if not _evaluated(kind, options):
            continue
        if kind == EventKind.TURN_SHIFT:
            system, user = event.channel, 1 - event.channel
        else:
            user, system = event.channel, 1 - event.channel
        if options.channels is not None and user not in options.channels:
            continue
        user_turns = dialogue.turns(user)
        event_start, event_end = event.start, event.end
        if kind == EventKind.BARGE_IN:
            turn = _find_turn(user_turns, start=event_start)
            if turn is None:
                stats.skipped_invalid += 1
                continue
            event_end = turn.end
        stats.total_events += 1
        window = _input_window(kind, event_start, event_end, user_turns, options.window)
        if window is None:
            stats.skipped_invalid += 1
            continue
        input_start, input_end = window
        context_start, context_end = _context(dialogue, input_start, options)
        if kind in _MUTE_AT_END:
            keep = _inside(dialogue, system, event_start, {EventKind.TURN})
        else:
            keep = not _inside(dialogue, system, event_start,
                               {EventKind.TURN, EventKind.TURN_HOLD})
        if not keep:
            stats.skipped_filtered += 1
            continue
        task = EVENT_TO_TASK[kind]
        k = sum(1 for kept in samples if not kept.counterfactual)
        samples.append(Sample(
            sample_id=dialogue.id, event_id=f"{dialogue.id}_ch{user}_{k:04d}_{task}",
            user_channel=user, system_channel=system, event_type=kind, task=task,
            event_start=event_start, event_end=event_end, input_start=input_start,
            input_end=input_end, context_start=context_start, context_end=context_end,
            fork_time=_fork_time(kind, options.protocol, event_start, event_end, input_start),
            muted=options.mute,
        ))
        stats.by_task[task] += 1
        twin = counterfactual_twin(samples[-1], dialogue, options.counterfactual_replacement) \
            if options.counterfactual else None
        if twin is not None:
            samples.append(twin)
    return samples


def _background_spans(dialogue: Dialogue, user: int) -> list[tuple[float, float]]:
    """The background speech spans (onset, end) the dialogue's ``mtr`` record annotates for
    ``user``'s channel, by onset."""
    record = dialogue.extra.get("mtr")
    if not isinstance(record, Mapping) or record.get("user_channel", 0) != user:
        return []
    rounds = record.get("rounds")
    spans = [r.get("background_span") for r in rounds if isinstance(r, Mapping)] if isinstance(
        rounds, list) else []
    return sorted((float(s[0]), float(s[1])) for s in spans
                  if isinstance(s, list) and len(s) == 2
                  and all(isinstance(t, int | float) for t in s))


def counterfactual_twin(sample: Sample, dialogue: Dialogue,
                        replacement: Replacement = "silence") -> Sample | None:
    """The counterfactual twin of a sample of ``dialogue``, its act replaced by
    ``replacement`` (see the module docstring), or ``None`` when it has no act to remove."""
    if sample.event_type in _MUTE_AT_END:
        onset, end, fork = sample.event_start, sample.event_end, sample.event_start
    else:
        found = next((b for b in _background_spans(dialogue, sample.user_channel)
                      if time_ge(b[0], sample.fork_time) and time_lt(b[0], sample.mute_start)),
                     None)
        if found is None:
            return None
        (onset, end), fork = found, sample.fork_time
    return replace(sample, event_id=sample.event_id + COUNTERFACTUAL_SUFFIX,
                   removed_from=onset, fork_time=fork, replaced_by=replacement,
                   noise_until=None if replacement == "silence" else end)


def split_passes(samples: Iterable[Sample]) -> list[list[Sample]]:
    """Samples grouped by ``context_start`` (equal within :data:`~duplexeval.timeline.TOL`), in
    order of first appearance: the samples that can share one continuous pass, since a pass
    starts at its samples' context start and each sample must hear exactly its own context."""
    passes: list[list[Sample]] = []
    for s in samples:
        for members in passes:
            if approx_eq(members[0].context_start, s.context_start):
                members.append(s)
                break
        else:
            passes.append([s])
    return passes


@dataclass(frozen=True)
class Plan:
    """All samples of a dataset under one set of options, with the official counters."""

    options: PlanOptions
    samples: tuple[Sample, ...]
    stats: PlanStats

    def groups(self) -> dict[tuple[str, int], list[Sample]]:
        """Samples per (dialogue id, user channel): the units that share one continuous pass."""
        out: dict[tuple[str, int], list[Sample]] = {}
        for sample in self.samples:
            out.setdefault((sample.sample_id, sample.user_channel), []).append(sample)
        return out

    def model_seconds_per_event(self) -> float:
        """Audio the official per-event execution feeds the model, in seconds."""
        if self.options.protocol.uses_context:
            return sum(s.input_end - s.context_start for s in self.samples)
        return sum(s.input_end - s.input_start for s in self.samples)

    def model_seconds_shared_prefix(self) -> float:
        """Audio the shared-prefix execution feeds: one pass per group and context start
        (:func:`split_passes`) from that start to its latest fork, plus
        ``input_end - fork_time`` per sample.  Equals the per-event figure where no two
        samples share a context start (and under ``single``)."""
        if not self.options.protocol.uses_context:
            return self.model_seconds_per_event()
        total = 0.0
        for members in self.groups().values():
            for shared in split_passes(members):
                start = shared[0].context_start
                total += max(s.fork_time for s in shared) - start
                total += sum(s.input_end - s.fork_time for s in shared)
        return total

    def summary_json(self) -> dict[str, Any]:
        """The object ``plan --summary-json`` prints."""
        by_task = {task: self.stats.by_task.get(task, 0) for task in TASKS}
        return {
            "samples": len(self.samples),
            "by_task": by_task,
            "total_events": self.stats.total_events,
            "skipped_invalid": self.stats.skipped_invalid,
            "skipped_filtered": self.stats.skipped_filtered,
            "model_seconds_per_event": round(self.model_seconds_per_event(), 6),
            "model_seconds_shared_prefix": round(self.model_seconds_shared_prefix(), 6),
        } | ({"repeats": self.options.repeats} if self.options.repeats > 1 else {})


def build_plan(dialogues: Dataset | Iterable[Dialogue], options: PlanOptions) -> Plan:
    """Plan every dialogue (in dataset order), on ``options.channels`` or else the dataset's
    user channels (both channels for dialogues given without their dataset)."""
    if options.channels is None:
        channels = dialogues.user_channels if isinstance(dialogues, Dataset) else (0, 1)
        options = replace(options, channels=channels)
    stats = PlanStats()
    samples: list[Sample] = []
    for dialogue in dialogues:
        samples.extend(plan_dialogue(dialogue, options, stats))
    if options.repeats > 1:
        samples = [replace(s, event_id=f"{s.event_id}_r{j}") for s in samples
                   for j in range(options.repeats)]
    return Plan(options, tuple(samples), stats)
