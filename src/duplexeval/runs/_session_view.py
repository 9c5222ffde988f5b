"""What a session is shown of a dialogue: the redacted view and the declared oracle data.

A deployed system hears the user and knows little else.  The runner therefore opens every
session with a :class:`~duplexeval.systems._base.DialogueInfo` (id, language, domain) and the
system's channel, and adds only the oracle kinds the system declared in
``Capabilities.oracle`` (see :class:`~duplexeval.systems._base.Oracle`).  No event time and no
reference word reaches a system that did not ask for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from duplexeval.data._dialogue import Dialogue
from duplexeval.events import EventKind
from duplexeval.systems._base import Capabilities, DialogueInfo, Oracle, SessionSpec
from duplexeval.timeline import time_ge, time_le

__all__ = ["dialogue_info", "oracle_data", "reference_transcript", "session_spec"]


def dialogue_info(dialogue: Dialogue) -> DialogueInfo:
    """The redacted view of ``dialogue``: id, language, domain."""
    return DialogueInfo(id=dialogue.id, language=dialogue.language, domain=dialogue.domain)


def reference_transcript(dialogue: Dialogue, system_channel: int) -> tuple[dict[str, str], ...]:
    """The dialogue's IPUs (TURN and BC events of both channels) that carry words, in order of
    start, as ``{"role": "system" | "user", "kind": "turn" | "bc", "text": ...}``; a word
    belongs to the IPU of its channel whose span contains its start (inclusive ends)."""
    ipus = sorted((e for e in dialogue.events
                   if e.kind in (EventKind.TURN, EventKind.BC) and e.start <= e.end),
                  key=lambda e: (e.start, e.end, e.channel))
    out: list[dict[str, str]] = []
    for ipu in ipus:
        words = [w.text for w in dialogue.words_on(ipu.channel)
                 if time_ge(w.start, ipu.start) and time_le(w.start, ipu.end)]
        if words:
            sep = "" if dialogue.language == "ja" else " "
            role = "system" if ipu.channel == system_channel else "user"
            kind = "bc" if ipu.kind is EventKind.BC else "turn"
            out.append({"role": role, "kind": kind, "text": sep.join(words)})
    return tuple(out)


def oracle_data(kinds: frozenset[Oracle], dialogue: Dialogue, system_channel: int,
                reference_audio: Callable[[], np.ndarray]) -> dict[Oracle, Any]:
    """Exactly the declared oracle ``kinds``; ``reference_audio`` gives the reference system
    channel at the native rate from the session's first frame (called only when declared)."""
    out: dict[Oracle, Any] = {}
    for kind in kinds:
        if kind is Oracle.REFERENCE_AUDIO:
            out[kind] = reference_audio()
        elif kind is Oracle.REFERENCE_TRANSCRIPT:
            out[kind] = reference_transcript(dialogue, system_channel)
        elif kind is Oracle.QA_REFERENCES:
            out[kind] = tuple(dict(r) for r in dialogue.extra.get("qa_references", ()))
    return out


def session_spec(capabilities: Capabilities, dialogue: Dialogue, system_channel: int, seed: int,
                 reference_audio: Callable[[], np.ndarray] | None = None) -> SessionSpec:
    """The spec the runner opens a session with: the redacted dialogue, the system's channel
    and exactly the oracle data ``capabilities`` declares (``reference_audio`` is needed only
    when it declares :attr:`Oracle.REFERENCE_AUDIO`)."""

    def no_audio() -> np.ndarray:
        raise ValueError("reference audio was declared but none is available")

    oracle = oracle_data(capabilities.oracle, dialogue, system_channel,
                         reference_audio or no_audio)
    return SessionSpec(sample_rate=capabilities.sample_rate, seed=seed,
                       dialogue=dialogue_info(dialogue), system_channel=system_channel,
                       oracle=oracle)
