"""Whisper windows transcribed by a pool of worker processes, each with its own model.

A packed Whisper window (:meth:`~duplexeval.speech._asr.Transcriber.transcribe_many`) is decoded
on its own, so the windows of one call can go to different processes and the words come back
the same as from one process: the kernels are pinned (:mod:`.kernels`), and a window's words
depend only on its audio and the settings.  On 2 cores two single-threaded processes beat one
process with two CTranslate2 threads, whose matrix products are too small to keep two threads
busy (``perf/analysis_speed.py``).

Workers are started with ``spawn`` (a fork after CTranslate2 or onnxruntime started their
OpenMP threads can hang), load the model once, and live as long as their pool; the pool is shut
down when its :class:`WindowPool` is closed or garbage-collected, or at interpreter exit.  A pool
is never started inside a daemonic process (a Dask worker, a pool worker): such a caller
decodes in its own process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol

import numpy as np

from duplexeval.errors import DuplexevalError

__all__ = ["PROCESSES_VARIABLE", "WindowPool", "can_fork_workers", "default_processes"]

Word = tuple[float, float, str]
"""A word as it crosses the process boundary: start and end (seconds, window time) and text."""

_worker: Any = None  # the decoder of this pool worker (a Transcriber)


PROCESSES_VARIABLE = "DUPLEXEVAL_ASR_PROCESSES"
"""Overrides the default worker count (e.g. 1 where the cores are already shared out: parallel
test workers, a batch job's other processes)."""


def default_processes() -> int:
    """Worker processes a local analysis uses by default: :data:`PROCESSES_VARIABLE` when set,
    else one per CPU this process may use, at most 4 (each worker holds a model); 1 where a
    pool cannot start (:func:`can_fork_workers`)."""
    if not can_fork_workers():
        return 1
    given = os.environ.get(PROCESSES_VARIABLE, "").strip()
    if given:
        if not given.isdigit() or not 1 <= int(given) <= 256:
            raise DuplexevalError(f"{PROCESSES_VARIABLE}={given!r}: expected a whole number "
                                  "from 1 to 256")
        return int(given)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def can_fork_workers() -> bool:
    """False inside a daemonic process (a Dask worker, a pool worker), which may not have
    children."""
    return not multiprocessing.current_process().daemon


class WindowDecoder(Protocol):
    """What a worker holds: one window's audio (16 kHz mono float32) to its words."""

    def decode_window(self, audio: np.ndarray, language: str | None) -> Sequence[Any]:
        """Words with ``start``, ``end`` (seconds in the window) and ``text``."""


def _start(make_decoder: Callable[[], WindowDecoder]) -> None:
    global _worker
    _worker = make_decoder()


def _decode(audio: np.ndarray, language: str | None) -> list[Word]:
    return [(w.start, w.end, w.text) for w in _worker.decode_window(audio, language)]


_MAIN_LOCK = threading.Lock()
_main_hidden: dict[str, Any] = {"depth": 0, "saved": {}}


@contextlib.contextmanager
def _main_not_reimported() -> Iterator[None]:
    """While workers are spawned, the ``__main__`` module shows no file or spec, so that a
    spawned worker does not run the user's script again: an unguarded script (no ``if
    __name__ == "__main__"``, as the README's snippet is written) would otherwise start its
    evaluation again in each worker, which then dies (``RuntimeError`` while bootstrapping) and
    breaks the pool.  The workers need nothing of ``__main__``: their functions and decoder
    live in duplexeval.  Threads may nest it (the demo evaluates two systems side by side):
    the first to enter hides the attributes, the last to leave puts them back."""
    main = sys.modules.get("__main__")
    with _MAIN_LOCK:
        if _main_hidden["depth"] == 0:
            _main_hidden["saved"] = {name: getattr(main, name) for name in ("__file__", "__spec__")
                                     if main is not None and hasattr(main, name)}
            if main is not None:
                main.__spec__ = None
                if "__file__" in _main_hidden["saved"]:
                    del main.__file__
        _main_hidden["depth"] += 1
    try:
        yield
    finally:
        with _MAIN_LOCK:
            _main_hidden["depth"] -= 1
            if _main_hidden["depth"] == 0 and main is not None:
                for name, value in _main_hidden["saved"].items():
                    setattr(main, name, value)


class WindowPool:
    """``processes`` workers, each holding the decoder ``make_decoder()`` builds there (a
    picklable callable: :class:`~duplexeval.speech._asr.Transcriber` with its arguments and
    ``processes=1``, ``cpu_threads`` included)."""

    def __init__(self, make_decoder: Callable[[], WindowDecoder], processes: int) -> None:
        self._executor = ProcessPoolExecutor(
            max_workers=processes, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start, initargs=(make_decoder,))
        self._finalizer = weakref.finalize(self, self._executor.shutdown, wait=True,
                                           cancel_futures=True)

    def decode(self, windows: Sequence[np.ndarray], language: str | None) -> list[list[Word]]:
        """The words of each window, in order."""
        with _main_not_reimported():  # the workers start on the first submit
            futures = [self._executor.submit(_decode, w, language) for w in windows]
        return [f.result() for f in futures]

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        self._finalizer()
