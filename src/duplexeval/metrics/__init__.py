"""Timing metric variants (see :mod:`duplexeval.metrics._base`); importing this package
lists them (:data:`~duplexeval.metrics._base.VARIANTS`)."""

from duplexeval.metrics._base import (
    VARIANTS,
    DimensionScore,
    EventScore,
    EventView,
    TimingVariant,
    get_variant,
    register_variant,
    variant_names,
)

__all__ = [
    "VARIANTS",
    "DimensionScore",
    "EventScore",
    "EventView",
    "TimingVariant",
    "get_variant",
    "register_variant",
    "variant_names",
]
