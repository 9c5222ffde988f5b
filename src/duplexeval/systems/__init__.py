"""Systems under test: the interface, built-in systems and adapters.

Third-party systems implement the interface re-exported here::

    from duplexeval.systems import Capabilities, Session, SessionSpec, StepOutput, System
"""

from duplexeval.systems._base import (
    BatchRowFailure,
    BatchSession,
    Capabilities,
    ClockKind,
    DialogueInfo,
    Forced,
    Oracle,
    Session,
    SessionSpec,
    StepOutput,
    System,
    SystemFailure,
)
from duplexeval.systems._registry import SYSTEMS, available_systems, load_system

__all__ = [
    "SYSTEMS",
    "BatchRowFailure",
    "BatchSession",
    "Capabilities",
    "ClockKind",
    "DialogueInfo",
    "Forced",
    "Oracle",
    "Session",
    "SessionSpec",
    "StepOutput",
    "System",
    "SystemFailure",
    "available_systems",
    "load_system",
]
