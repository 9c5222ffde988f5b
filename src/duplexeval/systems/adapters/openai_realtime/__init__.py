"""``openai-realtime``: the OpenAI Realtime API over WebSocket as a wall-clock system.

``--system openai-realtime [--system-arg model=gpt-realtime voice=marin ...]`` with the key in
``OPENAI_API_KEY`` (or the variable ``api_key_env`` names); settings in :mod:`.system`, pacing,
playout and barge-in (cancel + truncate with the amount played) in :mod:`.session`.  Needs the
``servers`` extra (``websockets``).
"""

from duplexeval.systems.adapters.openai_realtime._system import OpenAIRealtimeSystem

__all__ = ["OpenAIRealtimeSystem"]
