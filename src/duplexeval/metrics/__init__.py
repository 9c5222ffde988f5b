"""Timing metric variants (see :mod:`duplexeval.metrics.base`); importing this package
registers the built-in ones."""

from duplexeval.metrics import fdb_v1 as _fdb_v1  # noqa: F401  (registers the "fdb-v1" variant)
from duplexeval.metrics import flexi as _flexi  # noqa: F401  (registers the "flexi" variant)
from duplexeval.metrics import m3 as _m3  # noqa: F401  (registers the "m3" variant)
from duplexeval.metrics import mtr as _mtr  # noqa: F401  (registers the "mtr" variant)
from duplexeval.metrics.base import (
    DimensionScore,
    EventScore,
    EventView,
    TimingVariant,
    get_variant,
    register_variant,
    variant_names,
)

__all__ = [
    "DimensionScore",
    "EventScore",
    "EventView",
    "TimingVariant",
    "get_variant",
    "register_variant",
    "variant_names",
]
