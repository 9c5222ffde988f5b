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

__all__ = [
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
]
