"""``gemini-live``: the Gemini Live API (``BidiGenerateContent``) as a wall-clock system.

``--system gemini-live [--system-arg model=... voice=...]`` with the key in ``GEMINI_API_KEY``
or ``GOOGLE_API_KEY`` (or the variable ``api_key_env`` names); settings in :mod:`.system`, the
protocol (setup, 16 kHz in / 24 kHz out, ``interrupted``, resumption) in :mod:`.session`, the
timeline in :mod:`duplexeval.systems.realtime._driver`.  Needs the ``servers`` extra
(``websockets``).
"""

from duplexeval.systems.adapters.gemini_live._system import GeminiLiveSystem

__all__ = ["GeminiLiveSystem"]
