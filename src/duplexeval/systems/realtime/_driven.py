"""The session side of the real-time driver: what every wall-clock adapter's
:class:`~duplexeval.systems._base.Session` does around
:class:`~duplexeval.systems.realtime._driver.RealtimeDriver` the same way.

An adapter sets ``self.driver`` (and ``self._secrets``, the values redacted from its errors)
before it connects, implements :meth:`DrivenSession._disconnect`, and steps with
:meth:`DrivenSession._drive`.  A failure, mid-stream or during setup (``raise
self._failed(exc)``), closes the transport and ends the driver (the runner never closes a
failed sample's session), and is re-raised naming the frame it happened at::

    step k:   _drive(send, recv, handle) -> driver.step: pump until deadline_k, send frame k
    failure:  SystemFailure("frame k: <reason>")  (transport closed, gc unfrozen, redacted)
"""

from __future__ import annotations

import abc

import numpy as np

from duplexeval.conditions._network import NetworkSpec
from duplexeval.systems._base import Session, SystemFailure
from duplexeval.systems.realtime._driver import Handler, RealtimeDriver, Receiver, Sender

__all__ = ["DrivenSession", "impair"]


def impair(session: Session, network: NetworkSpec) -> bool:
    """Lose and delay the frames ``session`` sends as ``network`` says, when it is stepped by a
    :class:`RealtimeDriver` (its ``driver``, before the first frame: see
    :mod:`duplexeval.systems.realtime._driver`); ``False`` for any other session."""
    driver = getattr(session, "driver", None)
    if not isinstance(driver, RealtimeDriver):
        return False
    if driver.frames_sent:
        raise ValueError("a network impairment is set before the first frame")
    driver.network = network.link()
    return True


class DrivenSession(Session):
    """A wall-clock session stepped by ``self.driver`` (see the module docstring)."""

    driver: RealtimeDriver
    _secrets: tuple[str, ...] = ()

    @property
    def frames(self) -> int:
        """Frames sent so far."""
        return self.driver.frames_sent

    @abc.abstractmethod
    def _disconnect(self) -> None:
        """Close the transport (idempotent, never raises)."""

    def _failed(self, exc: SystemFailure) -> SystemFailure:
        """Close the transport, end the driver and name the frame (redacted)."""
        self._disconnect()
        return self.driver.failed(exc, self._secrets)

    def _drive(self, send: Sender, recv: Receiver, handle: Handler) -> np.ndarray:
        """One :meth:`RealtimeDriver.step`; a failure closes the session (see
        :meth:`_failed`)."""
        try:
            return self.driver.step(send, recv, handle)
        except SystemFailure as exc:
            raise self._failed(exc) from None
