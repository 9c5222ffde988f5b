"""pass@k, pass^k and the stability of repeated tries (``run --repeats k``).

A run with ``--repeats k`` has ``k`` tries of every event: the samples ``{event_id}_r0 ..
_r{k-1}`` (:func:`~duplexeval.plan._samples.split_repeat`), forks of one snapshot that differ
only in their seed.  Per event kind and dimension this module reports:

* **pass@j** and **pass^j** for ``j = 1 .. k``, where a *pass* is the variant's own verdict
  (:meth:`~duplexeval.metrics._base.TimingVariant.pass_rule`, stated in each variant's
  docstring; M3: a TURN_SHIFT passes when the system took the turn, ``tor ↑ = 1``, a TURN_HOLD
  or SHORTPAUSE when it did not take over, ``tor ↓ = 0``; dimensions without a binary verdict,
  M3's stop latencies, get no pass rates).  An event with ``n`` tries
  of which ``c`` pass contributes the unbiased estimates (EVA's and HumanEval's)::

      pass@j = 1 - C(n - c, j) / C(n, j)      at least one of j tries drawn passes
      pass^j = C(c, j) / C(n, j)              all j tries drawn pass

  averaged over the events with ``n >= j`` (interval: bootstrap over events, Wilson when every
  estimate is 0 or 1).  pass@1 = pass^1 is the plain pass rate; pass^j falls with ``j`` exactly
  when verdicts differ between tries, and stays flat for a system whose tries agree;
* the **flip share**: events with two or more judged tries whose verdicts are not all equal;
* the **within-event standard deviation** of each latency (``ddof=1`` over the tries that have
  a value, events with two or more), averaged over events, with its measurement origin;
* the **identical share**: events all of whose tries wrote the same system channel, compared by
  the SHA-256 of its float32 samples (:func:`system_channel_hash`); when every event's tries
  are identical the system is reported ``deterministic`` (it ignores the seed: its k tries are
  one try k times).

Example, three TURN_SHIFT events with k = 3 tries (``P`` pass, ``.`` fail)::

    event   tries   c   pass@2          pass^2
    e1      P P P   3   1               1
    e2      P . P   2   1 - 0/3 = 1     1/3
    e3      . . .   0   0               0
    mean                2/3             4/9       flip share 1/3
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from duplexeval._audio import read_audio
from duplexeval.metrics._base import EventScore, PassRule, TimingVariant
from duplexeval.metrics._stats import Summary, summarize
from duplexeval.plan._samples import split_repeat
from duplexeval.results._intervals import IntervalFields
from duplexeval.results._model import (
    Origin,
    PassPoint,
    Stability,
    StabilityRow,
    TriesSpread,
)

__all__ = ["IDENTITY", "pass_at", "pass_hat", "stability", "system_channel_hash",
           "system_channel_hashes"]

IDENTITY = "sha256 of the system channel (wav channel 1, float32 samples) of each try"
"""How two tries are compared (:attr:`Stability.identity
<duplexeval.results._model.Stability.identity>`)."""


def pass_at(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one event with ``c`` passes among ``n`` tries (``1 <= k <= n``):
    the chance that at least one of ``k`` tries drawn without replacement passes."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat(n: int, c: int, k: int) -> float:
    """The unbiased pass^k of one event: the chance that all ``k`` tries drawn pass."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


def system_channel_hash(wav: Path) -> str:
    """SHA-256 of channel 1 (the system) of a sample wav, as float32 samples."""
    audio, _rate = read_audio(wav)
    channel = np.ascontiguousarray(audio[:, 1] if audio.ndim == 2 else audio, dtype=np.float32)
    return hashlib.sha256(channel.tobytes()).hexdigest()


def system_channel_hashes(scores: Iterable[EventScore], root: Path) -> dict[str, str]:
    """Event id -> :func:`system_channel_hash` of its wav (``output_audio_path`` relative to
    the run directory ``root``), for the repeated events only; a missing wav is left out."""
    out: dict[str, str] = {}
    for s in scores:
        if split_repeat(s.event.event_id)[1] is None or s.event.event_id in out:
            continue
        rel = s.event.metadata.get("output_audio_path")
        if isinstance(rel, str) and rel and (root / rel).is_file():
            out[s.event.event_id] = system_channel_hash(root / rel)
    return out


def _interval(s: Summary) -> dict[str, Any]:
    """A summary as the interval fields of a results row."""
    return IntervalFields(n=s.n, mean=s.mean, std=s.std, ci95_low=s.ci_low,
                          ci95_high=s.ci_high, ci95_half_width=s.half_width,
                          few_events=s.few, ci_method=s.method).model_dump()


def _share(flags: Sequence[bool]) -> IntervalFields | None:
    return IntervalFields(**_interval(summarize([int(f) for f in flags]))) if flags else None


def stability(scores: Sequence[EventScore], variant: TimingVariant,
              hashes: Mapping[str, str] | None = None) -> Stability | None:
    """The stability section of a scoring (module docstring); ``None`` when no event id has a
    repeat suffix (a run of one try per sample).  ``hashes``: event id -> system-channel hash
    (:func:`system_channel_hashes`; an event without one never counts as identical)."""
    hashes = hashes or {}
    groups: dict[tuple[str, str, str], dict[int, _Try]] = {}
    for s in scores:
        base, j = split_repeat(s.event.event_id)
        if j is None:
            continue
        for d in s.dimensions:
            groups.setdefault((s.event.event_type, d.dimension, base), {})[j] = _Try(
                d.values, hashes.get(s.event.event_id))
    if not groups:
        return None
    tries = max(len(t) for t in groups.values())
    by_kind: dict[tuple[str, str], list[dict[int, _Try]]] = {}
    for (kind, dim, _base), found in groups.items():
        by_kind.setdefault((kind, dim), []).append(found)
    rows = [_row(kind, dim, events, variant) for (kind, dim), events in sorted(by_kind.items())]
    identical = _identical_by_event(groups)
    return Stability(tries=tries, events=len(identical), identity=IDENTITY,
                     identical_events=sum(identical.values()),
                     deterministic=bool(identical) and all(identical.values()), rows=rows)


@dataclass(frozen=True)
class _Try:
    values: Mapping[str, object]
    hash: str | None


def _same(found: Mapping[int, _Try]) -> bool:
    """All tries of one event wrote the identical system channel (known for each)."""
    got = {t.hash for t in found.values()}
    return len(found) >= 1 and None not in got and len(got) == 1


def _identical_by_event(groups: Mapping[tuple[str, str, str], Mapping[int, _Try]],
                        ) -> dict[tuple[str, str], bool]:
    out: dict[tuple[str, str], bool] = {}
    for (kind, _dim, base), found in groups.items():
        out[(kind, base)] = out.get((kind, base), True) and _same(found)
    return out


def _row(kind: str, dim: str, events: list[dict[int, _Try]],
         variant: TimingVariant) -> StabilityRow:
    tries = max(len(e) for e in events)
    rule: PassRule | None = variant.pass_rule(kind, dim)
    pass_at_k: list[PassPoint] = []
    pass_hat_k: list[PassPoint] = []
    flips: list[bool] = []
    if rule is not None:
        judged = [[v for v in (rule.passed(t.values) for _, t in sorted(e.items()))
                   if v is not None] for e in events]
        for k in range(1, tries + 1):
            at = [pass_at(len(v), sum(v), k) for v in judged if len(v) >= k]
            hat = [pass_hat(len(v), sum(v), k) for v in judged if len(v) >= k]
            if at:
                pass_at_k.append(PassPoint(k=k, **_interval(summarize(at, bounded=True))))
                pass_hat_k.append(PassPoint(k=k, **_interval(summarize(hat, bounded=True))))
        flips = [len(set(v)) > 1 for v in judged if len(v) >= 2]
    spreads = []
    for metric in _latency_metrics(variant, dim, events):
        stds = []
        for e in events:
            xs = [x for t in e.values() if (x := _number(t.values.get(metric))) is not None]
            if len(xs) >= 2:
                stds.append(float(np.std(xs, ddof=1)))
        if stds:
            origin = variant.measurement_origin(dim, metric)
            spreads.append(TriesSpread(
                metric=metric, measurement_origin=Origin(**origin.to_json()) if origin else None,
                **_interval(summarize(stds))))
    return StabilityRow(
        event_type=kind, dimension=dim, events=len(events), tries=tries,
        pass_rule=rule.meaning if rule is not None else None, pass_at_k=pass_at_k,
        pass_hat_k=pass_hat_k, flip_share=_share(flips), latency_std=spreads,
        identical_share=_share([_same(e) for e in events]))


def _number(x: object) -> float | None:
    """``x`` as a finite float, else ``None`` (a missing latency)."""
    if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x):
        return float(x)
    return None


def _latency_metrics(variant: TimingVariant, dim: str,
                     events: Iterable[Mapping[int, _Try]]) -> list[str]:
    """The metrics of ``dim`` the variant gives a measurement origin (its latencies), in the
    order the tries first name them."""
    seen: dict[str, None] = {}
    for e in events:
        for t in e.values():
            for metric in t.values:
                if variant.measurement_origin(dim, metric) is not None:
                    seen.setdefault(metric)
    return list(seen)
