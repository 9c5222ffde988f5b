"""The frames the frame-synchronous driver must step, computed independently of it.

Exact arithmetic on the plan's times (rationals, so no epsilon), with the conventions of
:mod:`duplexeval.runs._driver`: a pass's grid starts at its samples' context start (the input
start under single); frame ``k`` covers ``[t0 + k*F/sr, t0 + (k+1)*F/sr)``; a sample forks at
the frame boundary at or before its fork time and ends at the boundary at or after its input
end::

    t0                fork          input_end
    |----|----|----|----|----|----|--.-|
    frames fed once in the shared pass: up to the latest fork (snapshot) or every sample's
    own prefix (replay); then each sample's continuation, fork frame to end frame.
"""

from __future__ import annotations

import math
from fractions import Fraction

from duplexeval.plan import EvalProtocol, Sample


def _exact(t: float) -> Fraction:
    return Fraction(t).limit_denominator(10**6)  # plan times are written to the microsecond


def _frames(t: float, t0: float, rate: int, frame: int) -> Fraction:
    return (_exact(t) - _exact(t0)) * rate / frame


def frames_needed(samples: list[Sample], protocol: EvalProtocol, rate: int, frame: int,
                  use_snapshot: bool = True) -> int:
    """Frames stepped for one (dialogue, user channel) group of samples."""
    if protocol is EvalProtocol.SINGLE:
        return sum(max(0, math.ceil(_frames(s.input_end, s.input_start, rate, frame)))
                   for s in samples)
    passes: dict[float, list[Sample]] = {}
    for s in samples:
        passes.setdefault(s.context_start, []).append(s)
    total = 0
    for t0, members in passes.items():
        forks = [max(0, math.floor(_frames(s.fork_time, t0, rate, frame))) for s in members]
        ends = [max(0, math.ceil(_frames(s.input_end, t0, rate, frame))) for s in members]
        total += sum(e - f for e, f in zip(ends, forks, strict=True))
        total += max(forks) if use_snapshot else sum(forks)
    return total
