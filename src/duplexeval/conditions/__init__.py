"""Acoustic conditions applied to what a system hears (the user channel of a run).

A condition is written ``KIND:key=value,key=value`` (``--condition noise:snr=10``); see
:mod:`duplexeval.conditions._spec` for the kinds, their parameters and ranges, and
:mod:`duplexeval.conditions._apply` for the order in which they compose.
"""

from duplexeval.conditions._apply import APPLY_ORDER, apply_conditions
from duplexeval.conditions._spec import Condition, parse_condition

__all__ = ["APPLY_ORDER", "Condition", "apply_conditions", "parse_condition"]
