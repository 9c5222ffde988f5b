"""``vllm-omni-duplex``: vLLM-Omni's full-duplex Realtime endpoint as a wall-clock system.

``--system vllm-omni-duplex --system-arg url=ws://HOST:PORT/v1/realtime model=NAME``; the
settings are in :mod:`.system`, the protocol (session, playback acknowledgements, resume) in
:mod:`.session`, the timeline in :mod:`duplexeval.systems.realtime._driver`.  Needs the ``servers``
extra (``websockets``).
"""

from duplexeval.systems.adapters.vllm_omni._system import VllmOmniDuplexSystem

__all__ = ["VllmOmniDuplexSystem"]
