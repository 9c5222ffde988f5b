"""The ``moshi-ws`` system: a client of a Moshi or PersonaPlex ``/api/chat`` server."""

from __future__ import annotations

from duplexeval.systems._base import Capabilities, ClockKind, Session, SessionSpec, System
from duplexeval.systems.adapters.moshi_ws._session import (
    FRAME,
    LockstepSession,
    MoshiWsSettings,
    RealtimeSession,
)
from duplexeval.systems.adapters.moshi_ws._wire import SAMPLE_RATE
from duplexeval.systems.realtime import _credentials as credentials

__all__ = ["MoshiWsSystem"]

MODES = ("lockstep", "realtime")


class MoshiWsSystem(System):
    """A Moshi-protocol WebSocket server (moshi ``python -m moshi.server``, PersonaPlex).

    Arguments (``--system-arg KEY=VALUE``):

    * ``url`` (required to run): ``ws://HOST:PORT/api/chat`` (``wss://`` for ``--ssl``); for
      PersonaPlex add its query, ``?text_prompt=...&voice_prompt=NAME.pt``.  No credentials in
      it: it is recorded in the run config.
    * ``mode``: ``lockstep`` (default; clock ``input``, deterministic, faster than real time)
      or ``realtime`` (clock ``wall``, deadline-paced); see :mod:`.session`.
    * ``init_frames`` (default 1): input frames the server consumes before its first output.
    * ``stall_timeout`` (s, default 30), ``handshake_timeout`` (s, default 120),
      ``connect_timeout`` (s, default 10).
    * ``api_key_env``: the name of an environment variable whose value is sent as
      ``Authorization: Bearer VALUE`` (for a server behind an authenticating proxy); the value
      is never recorded.

    Every session is a new connection (the server resets its model per connection and serves
    one at a time), so the system has no snapshot and no teacher forcing: multi-turn protocols
    replay each sample's context, and multi-ref is refused.  24 kHz mono, 80 ms frames.
    """

    name = "moshi-ws"
    version = "1"
    description = "client of a Moshi/PersonaPlex /api/chat WebSocket server (Ogg-Opus)"
    extra = "servers"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        mode = self.args.get("mode", "lockstep")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        url = self.args.get("url", "")
        if url:
            credentials.check_url(url)
        init = self.int_arg("init_frames", 1)
        if init < 0:
            raise ValueError("init_frames must be >= 0")
        self.settings = MoshiWsSettings(
            url=url, init_frames=init,
            stall_timeout=self.seconds_arg("stall_timeout", 30.0),
            handshake_timeout=self.seconds_arg("handshake_timeout", 120.0),
            connect_timeout=self.seconds_arg("connect_timeout", 10.0))
        clock = ClockKind.INPUT if mode == "lockstep" else ClockKind.WALL
        self.capabilities = Capabilities(sample_rate=SAMPLE_RATE, frame_size=FRAME, clock=clock)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ("url", "mode", "init_frames", "stall_timeout", "handshake_timeout",
                "connect_timeout", "api_key_env")

    def open(self, spec: SessionSpec) -> Session:
        if not self.settings.url:
            raise ValueError("moshi-ws needs --system-arg url=ws://HOST:PORT/api/chat")
        headers = credentials.bearer(self.args.get("api_key_env"))
        settings = MoshiWsSettings(**{**self.settings.__dict__, "headers": headers})
        if self.mode == "lockstep":
            return LockstepSession(settings)
        return RealtimeSession(settings)
