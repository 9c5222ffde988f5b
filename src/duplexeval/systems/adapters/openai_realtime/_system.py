"""The ``openai-realtime`` system: a WebSocket client of the OpenAI Realtime API (GA events)."""

from __future__ import annotations

from typing import Any

from duplexeval.systems._base import Capabilities, ClockKind, Session, SessionSpec, System
from duplexeval.systems.adapters.openai_realtime._session import (
    FRAME,
    RATE,
    RealtimeApiSession,
    RealtimeSettings,
)
from duplexeval.systems.realtime import _credentials as credentials

__all__ = ["OpenAIRealtimeSystem"]

DEFAULTS: dict[str, str] = {
    "url": "wss://api.openai.com/v1/realtime",
    "model": "gpt-realtime",
    "api_key_env": "OPENAI_API_KEY",
    "voice": "marin",
    "instructions": "",
    "vad": "server_vad",
    "vad_threshold": "0.5",
    "prefix_padding_ms": "300",
    "silence_duration_ms": "500",
    "interrupt_response": "true",
    "truncate": "true",
    "reasoning_effort": "",
    "stall_timeout": "30",
    "connect_timeout": "10",
}
"""Every setting and its default; the effective values are recorded in the run config (the
system's arguments), so a run says which voice, VAD and reasoning effort it used."""



class OpenAIRealtimeSystem(System):
    """OpenAI Realtime over WebSocket: PCM16 at 24 kHz both ways, 20 ms frames, clock ``wall``.

    Arguments (``--system-arg KEY=VALUE``; defaults in :data:`DEFAULTS`): ``model``, ``url``,
    ``api_key_env`` (the *name* of the variable holding the key), ``voice``, ``instructions``,
    ``vad`` (``server_vad`` or ``semantic_vad``), ``vad_threshold``, ``prefix_padding_ms``,
    ``silence_duration_ms``, ``interrupt_response``, ``reasoning_effort`` (sent only when set),
    ``truncate`` (``false`` for models without client cancel/truncate: the adapter then never
    sends them), ``stall_timeout`` and ``connect_timeout`` (s).  The session is real time:
    see :mod:`.session` for pacing, playout and barge-in.
    """

    name = "openai-realtime"
    version = "1"
    description = "client of the OpenAI Realtime API (server VAD, playout, cancel + truncate)"
    extra = "servers"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.args = {**DEFAULTS, **self.args}
        credentials.check_url(self.args["url"])
        if self.args["vad"] not in ("server_vad", "semantic_vad"):
            raise ValueError(f"vad must be server_vad or semantic_vad, got {self.args['vad']!r}")
        for key in ("interrupt_response", "truncate"):
            self.bool_arg(key, True)
        self.capabilities = Capabilities(sample_rate=RATE, frame_size=FRAME,
                                         clock=ClockKind.WALL)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return tuple(DEFAULTS)

    def session_config(self) -> dict[str, Any]:
        """The ``session`` object of the ``session.update`` event."""
        a = self.args
        vad: dict[str, Any] = {"type": a["vad"], "create_response": True,
                               "interrupt_response": self.bool_arg("interrupt_response", True)}
        if a["vad"] == "server_vad":
            vad.update(threshold=self.float_arg("vad_threshold", 0.5),
                       prefix_padding_ms=self.int_arg("prefix_padding_ms", 300),
                       silence_duration_ms=self.int_arg("silence_duration_ms", 500))
        pcm = {"type": "audio/pcm", "rate": RATE}
        session: dict[str, Any] = {
            "type": "realtime", "model": a["model"], "output_modalities": ["audio"],
            "audio": {"input": {"format": pcm, "turn_detection": vad},
                      "output": {"format": pcm, "voice": a["voice"]}}}
        if a["instructions"]:
            session["instructions"] = a["instructions"]
        if a["reasoning_effort"]:
            session["reasoning"] = {"effort": a["reasoning_effort"]}
        return session

    def open(self, spec: SessionSpec) -> Session:
        key = credentials.api_key(self.args["api_key_env"])
        url = self.args["url"]
        url += ("&" if "?" in url else "?") + f"model={self.args['model']}"
        settings = RealtimeSettings(
            url=url, headers=(("Authorization", f"Bearer {key}"),),
            session=self.session_config(), truncate=self.bool_arg("truncate", True),
            stall_timeout=self.seconds_arg("stall_timeout", 30.0),
            connect_timeout=self.seconds_arg("connect_timeout", 10.0))
        return RealtimeApiSession(settings)
