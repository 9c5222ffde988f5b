"""The reference human channel of each sample's window, analysed as the system channel is.

For an event of a run (its metadata: ``sample_id`` the dialogue, ``user_channel``,
``input_start`` and ``input_end`` in dialogue seconds), the reference is the dialogue audio's
other channel (the reference system's) over ``[input_start, input_end]``, resampled nowhere
(the dataset rate), given to the same voice-activity detection as the run's analysis
(:func:`duplexeval.analysis._pipeline.analyze_channel` with the analysis options, ASR off: only
the segments' times are read) and cached there.  Its segments, in wav seconds like the
sample's, become the event's ``reference_segments`` (``[start, end]`` pairs)::

    dialogue audio, reference channel   ....RRRRRR......RRRR....
    sample window                           [input_start, input_end]
    reference_segments (wav time)           [0.0, 1.2], [2.4, 3.1]

A dataset whose reference channel is silent in every dialogue a run played (imported peer data:
FDB and FLEXI ship no system audio, so their channel 1 is zeros) has no human timing to compare
with: :func:`silent_reference` says so, and the variant is refused (``score``) or the measure
skipped with that reason (``eval --measures realism``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from duplexeval._audio import read_audio
from duplexeval._cache import cache_root
from duplexeval.analysis._pipeline import AnalysisOptions, analyze_channel
from duplexeval.data._dialogue import Dialogue
from duplexeval.errors import DuplexevalError
from duplexeval.metrics._base import EventView

__all__ = ["silent_reference", "with_reference_segments"]


def _audio(dialogue: Dialogue, loaded: dict[str, tuple[np.ndarray, int]],
           ) -> tuple[np.ndarray, int]:
    if dialogue.id not in loaded:
        if dialogue.audio is None:
            raise DuplexevalError(f"dialogue {dialogue.id}: no audio; the realism variant "
                                  "analyses the reference channel of the dataset audio")
        x, rate = read_audio(dialogue.audio.path)
        if x.shape[1] < 2:
            raise DuplexevalError(f"{dialogue.audio.path}: not stereo; the reference system "
                                  "channel is needed")
        loaded[dialogue.id] = (x, rate)
    return loaded[dialogue.id]


def with_reference_segments(events: list[EventView], dialogues: dict[str, Dialogue],
                            options: AnalysisOptions, cache: Path | None = None,
                            ) -> list[EventView]:
    """The events with their ``reference_segments`` (see the module docstring); an event whose
    dialogue is not in ``dialogues`` keeps none."""
    vad_only = replace(options, asr="none", content_event_types=())
    cache = cache if cache is not None else cache_root() / "analysis"
    loaded: dict[str, tuple[np.ndarray, int]] = {}
    out = []
    for e in events:
        dialogue = dialogues.get(e.sample_id)
        if dialogue is None:
            out.append(e)
            continue
        x, rate = _audio(dialogue, loaded)
        channel = 1 - int(e.metadata.get("user_channel", 0))
        a, b = round(e.input_start * rate), round(e.input_end * rate)
        window = np.zeros(max(0, b - a), dtype=np.float32)
        lo, hi = max(a, 0), min(b, len(x))
        if hi > lo:
            window[lo - a:hi - a] = x[lo:hi, channel]
        segments = analyze_channel(window, rate, 1, vad_only, cache=cache)
        spans = [[s.start, s.end] for s in segments]
        out.append(replace(e, metadata={**e.metadata, "reference_segments": spans}))
    return out


def silent_reference(played: Iterable[tuple[str, int]], dialogues: Mapping[str, Dialogue],
                     ) -> str | None:
    """Why a run has no reference timing to compare with (``None``: it has): a dialogue it
    played has no stereo audio, or every one of the ``played`` ``(dialogue id, user
    channel)`` pairs found in ``dialogues`` has a reference channel (the other one) without a
    single nonzero sample."""
    loaded: dict[str, tuple[np.ndarray, int]] = {}
    checked = set()
    for dialogue_id, user_channel in played:
        dialogue = dialogues.get(dialogue_id)
        if dialogue is None or (dialogue_id, user_channel) in checked:
            continue
        checked.add((dialogue_id, user_channel))
        try:
            x, _ = _audio(dialogue, loaded)
        except DuplexevalError as exc:  # no audio, not stereo
            return str(exc)
        if np.any(x[:, 1 - int(user_channel)]):
            return None
        loaded.pop(dialogue_id)  # one dialogue's audio in memory at a time
    if not checked:
        return None
    return (f"the dataset's reference system channel is silent in all {len(checked)} "
            "dialogue(s) the run played (no human timing to compare with: imported FDB and "
            "FLEXI data ship no system audio)")
