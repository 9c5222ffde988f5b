"""User speech onsets and offsets from streamed VAD probabilities (hysteresis + hangover).

Times are samples at 16 kHz from the session start (window ``i`` = ``[512 i, 512 (i + 1))``)::

    prob      ..▂▅██▇█▆▃▂▁▁▁▁▁▁..
    >= thr        ^ onset = start of the first window at or above ``threshold``
    >= neg           ...▆▃| last voiced = end of the last window at or above ``neg_threshold``
    offset                |<-hangover->| declared here, dated at the last voiced sample

Speech starts at a window whose probability reaches ``threshold``; it goes on while windows
stay at or above ``neg_threshold`` and ends once they have stayed below it for ``hangover``
seconds; the offset is the end of the last window at or above ``neg_threshold``.  The state is
a plain dict (:func:`initial_listener`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from duplexeval.systems.builtin.cascade._vad import VAD_RATE, VAD_WINDOW

__all__ = ["SpeechEdge", "initial_listener", "listen"]


@dataclass(frozen=True)
class SpeechEdge:
    """A user speech onset (``kind="onset"``) or offset, at ``sample`` (16 kHz)."""

    kind: str
    sample: int


def initial_listener() -> dict[str, Any]:
    """No speech heard yet."""
    return {"speaking": False, "onset": None, "last_voiced": 0}


def listen(state: dict[str, Any], first_window: int, probs: np.ndarray, threshold: float,
           neg_threshold: float, hangover: float) -> list[SpeechEdge]:
    """Update ``state`` with the probabilities of windows ``first_window, ...``; return the
    onsets and offsets they decide, in order."""
    edges: list[SpeechEdge] = []
    hang = round(hangover * VAD_RATE)
    for k, p in enumerate(probs.tolist()):
        start = (first_window + k) * VAD_WINDOW
        end = start + VAD_WINDOW
        if state["speaking"]:
            if p >= neg_threshold:
                state["last_voiced"] = end
            elif end - state["last_voiced"] >= hang:
                state["speaking"] = False
                edges.append(SpeechEdge("offset", state["last_voiced"]))
        elif p >= threshold:
            state["speaking"] = True
            state["onset"] = start
            state["last_voiced"] = end
            edges.append(SpeechEdge("onset", start))
    return edges
