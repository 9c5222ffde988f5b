"""A sweep's grid: one condition parameter over a list of values, the others held fixed.

Written like ``--condition`` (:mod:`duplexeval.conditions._spec`) with one parameter given a
comma-separated list: ``noise:snr=30,20,10,0`` sweeps the SNR over four values; a bare value
after a ``key=value`` is another value of that key, so ``noise:snr=30,20,color=white`` sweeps
the SNR of white noise.  Every other ``--condition`` (no list) holds for every point, the clean
reference included.  Exactly one parameter of one condition is swept; its values are given from
the mildest to the strongest (the order of the table, the plot and the monotonicity check).

Each point is validated by the condition registry itself (:func:`~duplexeval.conditions.
parse_condition`: kind, parameter, range), so a grid whose point is not a valid condition is
refused before any run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from duplexeval.conditions import Condition, parse_condition
from duplexeval.errors import DuplexevalError

__all__ = ["SweepGrid", "SweepPoint", "parse_grid"]


@dataclass(frozen=True)
class SweepPoint:
    """One point of the grid: the swept value and every condition that holds there."""

    value: float
    conditions: tuple[Condition, ...]
    name: str
    """The point's run folder name, ``KIND-KEY=VALUE`` (e.g. ``noise-snr=10``)."""


@dataclass(frozen=True)
class SweepGrid:
    """What a sweep runs: the swept ``kind:key``, its points in the order given, and the
    fixed conditions (the clean reference runs under these alone)."""

    kind: str
    key: str
    points: tuple[SweepPoint, ...]
    fixed: tuple[Condition, ...]

    @property
    def parameter(self) -> str:
        """``kind:key``, as the table and the plots name the strength."""
        return f"{self.kind}:{self.key}"

    def to_json(self) -> dict[str, object]:
        """Plain data, as ``sweep.json`` records it."""
        return {"parameter": self.parameter, "values": [p.value for p in self.points],
                "fixed": [c.to_json() for c in self.fixed],
                "points": [{"name": p.name, "value": p.value,
                            "conditions": [c.to_json() for c in p.conditions]}
                           for p in self.points]}


def _split(text: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """``KIND:k=v,v,k=v`` as the kind and its (key, values) in order; a bare value before any
    key is one :class:`DuplexevalError`."""
    kind, _, rest = text.strip().partition(":")
    pairs: list[tuple[str, list[str]]] = []
    for item in (p.strip() for p in rest.split(",")):
        if not item:
            raise DuplexevalError(f"--condition {text!r}: an empty value in the list")
        key, eq, raw = item.partition("=")
        if eq:
            pairs.append((key.strip(), [raw.strip()]))
        elif pairs:
            pairs[-1][1].append(item)
        else:
            raise DuplexevalError(f"--condition {text!r}: {item!r} is not key=value")
    return kind.strip(), pairs


def _spec(kind: str, pairs: list[tuple[str, list[str]]], chosen: str | None = None) -> str:
    return kind + ":" + ",".join(f"{k}={chosen if len(v) > 1 and chosen is not None else v[0]}"
                                 for k, v in pairs)


def _point_label(kind: str, key: str, value: float) -> str:
    return f"{kind}-{key}={value:g}"


def parse_grid(texts: list[str]) -> SweepGrid:
    """The grid of the ``--condition`` texts (module docstring); one
    :class:`DuplexevalError` (one line) for no swept parameter, more than one, a value that
    is not a finite number or repeats, or any point the condition registry refuses."""
    swept: list[tuple[int, str, str, list[str]]] = []
    parsed = []
    for i, text in enumerate(texts):
        kind, pairs = _split(text)
        parsed.append((kind, pairs))
        swept += [(i, kind, key, values) for key, values in pairs if len(values) > 1]
    if len(swept) != 1:
        raise DuplexevalError(
            "a sweep varies exactly one condition parameter over a list, e.g. "
            f"--condition noise:snr=30,20,10,0 (got {len(swept)} lists)")
    index, kind, key, raws = swept[0]
    values = []
    for raw in raws:
        try:
            value = float(raw)
        except ValueError:
            raise DuplexevalError(f"--condition {texts[index]!r}: {key}={raw!r} is not a "
                                  "number") from None
        if not math.isfinite(value):
            raise DuplexevalError(f"--condition {texts[index]!r}: {key}={raw} is not finite")
        if value in values:
            raise DuplexevalError(f"--condition {texts[index]!r}: {key}={raw} is given twice")
        values.append(value)
    fixed = tuple(parse_condition(t) for j, t in enumerate(texts) if j != index)
    points = []
    for raw, value in zip(raws, values, strict=True):
        condition = parse_condition(_spec(*parsed[index], chosen=raw))
        points.append(SweepPoint(value, (*fixed, condition), _point_label(kind, key, value)))
    return SweepGrid(kind, key, tuple(points), fixed)
