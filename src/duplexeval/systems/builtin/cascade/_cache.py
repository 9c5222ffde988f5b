"""In-process caches of deterministic results, keyed by content hash.

ASR of an audio buffer, a reply for a dialogue history and TTS of a text depend only on their
inputs and settings, so a multi-gen continuation restored from a snapshot can reuse what the
shared pass (or another continuation) computed.  The caches are the process's (shared by its
``cascade`` systems, :mod:`.engines`), never in a session's state: dropping them changes speed,
not results.  Each entry also
keeps the seconds its first computation took (for ``clock_budgets=False``).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import numpy as np

__all__ = ["ResultCache", "content_key"]

T = TypeVar("T")


def content_key(*parts: Any) -> str:
    """SHA-256 of the parts: arrays by dtype, shape and bytes, everything else as JSON."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            a = np.ascontiguousarray(part)
            h.update(f"nd:{a.dtype.str}:{a.shape}".encode())
            h.update(a.tobytes())
        else:
            h.update(json.dumps(part, sort_keys=True, ensure_ascii=False,
                                default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


class ResultCache(Generic[T]):
    """A least-recently-used map ``key -> (result, compute seconds)`` of bounded size."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, tuple[T, float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_compute(self, key: str, compute: Callable[[], T]) -> tuple[T, float]:
        """The cached result for ``key``, or ``compute()`` stored; with its compute seconds."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return found
        started = time.perf_counter()
        result = compute()
        entry = (result, time.perf_counter() - started)
        with self._lock:
            self.misses += 1
            self._items[key] = entry
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return entry

    def clear(self) -> None:
        """Forget every entry (results are recomputed: slower, the same)."""
        with self._lock:
            self._items.clear()
