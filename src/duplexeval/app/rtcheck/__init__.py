"""``duplexeval rtcheck``: can a system run live on this hardware?

* In-process systems (clock ``frame`` or ``file``): :mod:`~duplexeval.app.rtcheck._compute`
  times every ``Session.step`` against the frame's duration, unbatched and, for systems with
  the ``batch`` capability, as batch rows.
* Wall-clock systems (servers through the real-time driver):
  :mod:`~duplexeval.app.rtcheck._sessions` drives 1, 2, 4 and 8 concurrent sessions of the
  stimulus of :mod:`~duplexeval.app.rtcheck._stimulus` and applies the gates of
  :mod:`~duplexeval.app.rtcheck.gates`.

Every figure names its measurement origin; :mod:`~duplexeval.app.rtcheck._report` prints the
tables and writes the strict JSON.
"""

from duplexeval.app.rtcheck._compute import ComputeCheck, check_compute
from duplexeval.app.rtcheck._sessions import ConcurrencyLevel, check_sessions

__all__ = ["ComputeCheck", "ConcurrencyLevel", "check_compute", "check_sessions"]
