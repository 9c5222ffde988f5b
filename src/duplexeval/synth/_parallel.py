"""Synthesizing a suite's dialogues in a process pool, each dialogue cached on its own.

Each dialogue is built by :meth:`Synthesizer.build` in a worker process (``spawn``; one
onnxruntime thread per worker, see :data:`ORT_THREADS_ENV`) and its result is pickled into
``cache/<key>.pkl`` (written atomically) as soon as it is done, ``key`` being the SHA-256 of the
build's ``base`` key (code and settings), the synthesizer class and the spec's own content.  A
build killed half-way resumes from the dialogues already there, and two suites (or a quick
subset and its full suite) that share a dialogue share its file.

Dialogues that share most of their turns' text (``mtr-en`` voices each topic's conversation
under five features and one combination) are built by the same worker, one after the other
(:func:`share_groups`), so that a synthesizer that reuses utterances
(:class:`~duplexeval.synth._mtr_synthesizer.MtrSynthesizer`) speaks each text once per build
rather than once per worker that meets it.  Each of the ``jobs`` lanes is a one-worker pool
that takes the next group when it has finished its last, and drops the reused utterances
between groups.

The output does not depend on the number of workers, the grouping or the order they finish in:
a dialogue is a deterministic function of its spec and the settings (its gaps are seeded by the
spec's id, the engines by the text), and the caller writes the results in spec order.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from multiprocessing import get_context
from pathlib import Path

from duplexeval._fileio import atomic_write_bytes
from duplexeval.synth._build import SynthesizedDialogue, Synthesizer, SynthSettings
from duplexeval.synth._spec import DialogueSpec

__all__ = ["ORT_THREADS_ENV", "build_dialogues", "default_jobs", "dialogue_key",
           "share_groups"]

ORT_THREADS_ENV = "DUPLEXEVAL_ORT_THREADS"
"""Environment variable a worker sets to ``1``: the piper engine gives its onnxruntime sessions
that many intra-op threads (its default, where unset, is 1 too: the speech does not depend on
the thread count; ``jobs`` workers use ``jobs`` cores, not ``jobs`` x cores)."""

Stop = Callable[[list[SynthesizedDialogue]], bool]
"""Asked after each dialogue, in spec order, with the dialogues so far: True ends the build
there (the quick subset by shifts)."""

_worker: Synthesizer | None = None


def default_jobs() -> int:
    """The CPUs this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def dialogue_key(base: str, synth_class: type[Synthesizer], spec: DialogueSpec) -> str:
    """The cache key of one dialogue: ``base`` (code and settings), the class, the spec."""
    h = hashlib.sha256()
    for part in (base, synth_class.__qualname__, spec.model_dump_json()):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:24]


def _init_worker(synth_class: type[Synthesizer], settings: SynthSettings) -> None:
    global _worker
    os.environ[ORT_THREADS_ENV] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"
    _worker = synth_class(settings)


def _build_one(spec: DialogueSpec, new_group: bool) -> bytes:
    assert _worker is not None, "worker not initialised"
    if new_group:
        _worker.forget_reused()
    return pickle.dumps(_worker.build(spec), protocol=pickle.HIGHEST_PROTOCOL)


def share_groups(specs: Sequence[DialogueSpec], least: float = 0.5) -> list[list[int]]:
    """The indices of ``specs`` in groups of dialogues that share their text: two specs go
    together when at least ``least`` of the turn texts of the one with fewer turns are also
    turns of the other (same language), and groups join transitively.  Groups are in the
    order of their first spec, each in spec order.  A text said once in many dialogues (a
    common opener) does not join them: it is one turn of ten or more."""
    texts = [{(s.language, t.text) for t in s.turns} for s in specs]
    holders: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, own in enumerate(texts):
        for text in own:
            holders[text].append(i)
    parent = list(range(len(specs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, own in enumerate(texts):
        shared = Counter(j for text in own for j in holders[text] if j > i)
        for j, n in shared.items():
            if n >= least * min(len(own), len(texts[j])):
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(specs)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _load(path: Path) -> SynthesizedDialogue | None:
    try:
        built = pickle.loads(path.read_bytes())
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        return None  # absent, or a file from other code: built again
    return built if isinstance(built, SynthesizedDialogue) else None


def build_dialogues(specs: Sequence[DialogueSpec], synth: Synthesizer, base: str,
                    cache: Path, jobs: int = 1, stop: Stop | None = None,
                    tick: Callable[[], None] = lambda: None) -> list[SynthesizedDialogue]:
    """The built dialogues of ``specs``, in spec order: from ``cache`` where there, else built
    by ``jobs`` worker processes (one-worker pools, a group of text-sharing dialogues at a
    time: :func:`share_groups`), each with its own synthesizer of ``synth``'s class and
    settings, and cached.  Even ``jobs`` = 1 builds in a worker: onnxruntime's sums differ
    in their last bits between one thread and several, and every build uses one per worker.
    With ``stop``, the specs go in waves of ``jobs`` and the build ends at the first prefix
    ``stop`` accepts (the rest of that wave stays cached).  ``tick``: once per dialogue.
    A worker starts only when a dialogue is missing from the cache."""
    cache.mkdir(parents=True, exist_ok=True)
    paths = [cache / f"{dialogue_key(base, type(synth), s)}.pkl" for s in specs]
    wave = len(specs) if stop is None else max(1, jobs)
    out: list[SynthesizedDialogue] = []
    lanes: list[ProcessPoolExecutor] = []

    def lane(k: int) -> ProcessPoolExecutor:
        while len(lanes) <= k:
            lanes.append(ProcessPoolExecutor(
                max_workers=1, mp_context=get_context("spawn"),
                initializer=_init_worker, initargs=(type(synth), synth.settings)))
        return lanes[k]

    try:
        for lo in range(0, len(specs), wave):
            for built in _wave(specs[lo:lo + wave], paths[lo:lo + wave], lane, max(1, jobs)):
                out.append(built)
                tick()
                if stop is not None and stop(out):
                    return out
    finally:
        for started in lanes:
            started.shutdown(cancel_futures=True)
    return out


def _wave(specs: Sequence[DialogueSpec], paths: Sequence[Path],
          lane: Callable[[int], ProcessPoolExecutor], jobs: int) -> list[SynthesizedDialogue]:
    """Build one wave (cached ones read back) on up to ``jobs`` lanes (``lane(k)``: the k-th
    one-worker pool, started on first use), a group of text-sharing dialogues at a time per
    lane, writing each new one as soon as it is done."""
    found = [_load(p) for p in paths]
    todo = [i for i, b in enumerate(found) if b is None]
    queue = [[todo[i] for i in group] for group in share_groups([specs[i] for i in todo])]
    queue.reverse()  # popped from the end: groups in spec order
    running: dict[Future[bytes], tuple[int, int]] = {}  # future -> (lane, spec index)

    def feed(k: int) -> None:
        if queue:
            group = queue.pop()
            for n, i in enumerate(group):
                running[lane(k).submit(_build_one, specs[i], n == 0)] = (k, i)

    for k in range(min(jobs, len(queue))):
        feed(k)
    while running:
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:  # each written as soon as done (a kill keeps it)
            k, i = running.pop(future)
            data = future.result()
            atomic_write_bytes(paths[i], data)
            found[i] = pickle.loads(data)
            if not any(lane_of == k for lane_of, _ in running.values()):
                feed(k)
    return [b for b in found if b is not None]
