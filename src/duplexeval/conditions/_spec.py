"""Parsing and validating condition specs: ``KIND:key=value,...``.

Kinds and parameters (units: dB, seconds; every number must be finite and in its range):

* ``noise``: ``snr`` (dB, -20..60), ``color`` (``white``, ``pink`` or ``brown``; default pink).
  Additive noise scaled so that 10*log10(P_signal / P_noise) equals ``snr``, with powers taken
  over the whole user channel.
* ``gain``: ``db`` (-60..40): the channel multiplied by 10**(db/20).
* ``clip``: ``level`` (0 < level <= 1): samples clipped to [-level, level] (full scale is 1).
* ``babble``: ``snr`` (dB, -20..60), ``talkers`` (an integer, 2..16; default 6): several
  talkers from the packaged clip bank speaking at once, scaled to ``snr`` as ``noise`` is.
* ``reverb``: ``rt60`` (s, 0.15..1.2): the channel convolved with a synthetic room impulse
  response whose reverberation time (Schroeder backward integration, T30) is ``rt60``.
* ``speed``: ``factor`` (0.5..2): each user speech segment played ``factor`` times as fast
  (a resampler: pitch and tempo together), anchored at its onset.
* ``echo``: ``gain`` (dB, -60..0), ``delay`` (s, 0..2; default 0.1): the system's own output,
  delayed and scaled, added to what it hears, online (self-bleed).
* ``network``: ``loss`` (a rate, 0..0.5; default 0), ``burst`` (mean frames per loss burst,
  1..50; default 1), ``jitter`` (ms, 0..500; default 0): the user frames a wall-clock system is
  sent, lost in bursts (Gilbert-Elliott) and sent late.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from duplexeval.errors import DuplexevalError

__all__ = ["COLORS", "KINDS", "Condition", "parse_condition"]

COLORS = ("white", "pink", "brown")
"""Noise colours: power spectral density flat, 1/f and 1/f**2."""

_RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "noise": {"snr": (-20.0, 60.0)},
    "gain": {"db": (-60.0, 40.0)},
    "clip": {"level": (1e-6, 1.0)},
    "babble": {"snr": (-20.0, 60.0), "talkers": (2.0, 16.0)},
    "reverb": {"rt60": (0.15, 1.2)},
    "speed": {"factor": (0.5, 2.0)},
    "echo": {"gain": (-60.0, 0.0), "delay": (0.0, 2.0)},
    "network": {"loss": (0.0, 0.5), "burst": (1.0, 50.0), "jitter": (0.0, 500.0)},
}
_TEXT: dict[str, dict[str, tuple[str, ...]]] = {"noise": {"color": COLORS}}
_DEFAULTS: dict[str, dict[str, float | str]] = {
    "noise": {"color": "pink"},
    "babble": {"talkers": 6.0},
    "echo": {"delay": 0.1},
    "network": {"loss": 0.0, "burst": 1.0, "jitter": 0.0},
}
_INTEGERS = {("babble", "talkers")}
"""Parameters that must be whole numbers."""
KINDS = tuple(_RANGES)
"""The condition kinds, in no particular order (see ``APPLY_ORDER`` for composition)."""


@dataclass(frozen=True)
class Condition:
    """One validated condition: its kind and parameters (numbers as floats)."""

    kind: str
    params: tuple[tuple[str, float | str], ...]

    def get(self, key: str) -> float | str:
        """The parameter ``key``."""
        return dict(self.params)[key]

    def number(self, key: str) -> float:
        """The numeric parameter ``key``."""
        value = self.get(key)
        assert isinstance(value, float)
        return value

    def to_json(self) -> dict[str, float | str]:
        """``{"kind": ..., **params}``, as ``config.json`` records it."""
        return {"kind": self.kind, **dict(self.params)}

    def spec(self) -> str:
        """The canonical ``KIND:key=value,...`` text."""
        return self.kind + ":" + ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                          for k, v in self.params)


def parse_condition(text: str) -> Condition:
    """``KIND:key=value,...`` as a :class:`Condition`; :class:`DuplexevalError` (one line)
    naming what is wrong: an unknown kind or key, a missing key, a value not a finite number
    or out of range."""
    kind, _, rest = text.strip().partition(":")
    if kind not in _RANGES:
        raise DuplexevalError(f"--condition {text!r}: unknown kind {kind!r} "
                              f"(known: {', '.join(KINDS)})")
    values: dict[str, float | str] = dict(_DEFAULTS.get(kind, {}))
    numeric, textual = _RANGES[kind], _TEXT.get(kind, {})
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq:
            raise DuplexevalError(f"--condition {text!r}: {item!r} is not key=value")
        if key in numeric:
            try:
                number = float(raw)
            except ValueError:
                raise DuplexevalError(f"--condition {text!r}: {key}={raw!r} is not a number") \
                    from None
            low, high = numeric[key]
            if not math.isfinite(number) or not low <= number <= high:
                raise DuplexevalError(f"--condition {text!r}: {key} must be a finite number in "
                                      f"[{low:g}, {high:g}], got {raw}")
            if (kind, key) in _INTEGERS and number != int(number):
                raise DuplexevalError(f"--condition {text!r}: {key} must be a whole number, "
                                      f"got {raw}")
            values[key] = number
        elif key in textual:
            if raw not in textual[key]:
                raise DuplexevalError(f"--condition {text!r}: {key} must be one of "
                                      f"{', '.join(textual[key])}, got {raw!r}")
            values[key] = raw
        else:
            raise DuplexevalError(f"--condition {text!r}: unknown parameter {key!r} for "
                                  f"{kind} (known: {', '.join([*numeric, *textual])})")
    missing = [k for k in numeric if k not in values]
    if missing:
        raise DuplexevalError(f"--condition {text!r}: missing {', '.join(missing)}")
    return Condition(kind, tuple(sorted(values.items())))
