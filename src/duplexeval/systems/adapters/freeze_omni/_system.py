"""The ``freeze-omni`` system: a client of the Freeze-Omni demo server (Socket.IO)."""

from __future__ import annotations

from urllib.parse import urlsplit

from duplexeval.systems._base import Capabilities, ClockKind, Session, SessionSpec, System
from duplexeval.systems.adapters.freeze_omni._session import (
    STOP_MODES,
    FreezeOmniSession,
    FreezeOmniSettings,
)
from duplexeval.systems.adapters.freeze_omni._wire import CHUNK, IN_RATE
from duplexeval.systems.realtime import _credentials as credentials

__all__ = ["FreezeOmniSystem"]



class FreezeOmniSystem(System):
    """The Freeze-Omni demo server (``bin/server.py``), in real time.

    Arguments (``--system-arg KEY=VALUE``):

    * ``url`` (required to run): ``https://HOST:PORT`` (the server runs HTTPS only, with a
      certificate it made itself) or ``http://HOST:PORT``; no credentials in it.
    * ``verify`` (default 1): ``0`` accepts the server's self-signed certificate (the M3
      client's default); only for a server you run yourself.
    * ``prompt``: a system prompt sent as ``prompt_text`` before recording starts (default:
      none, the server's own "helpful voice assistant" prompt).
    * ``on_stop`` (default ``flush``): what ``stop_tts`` does: ``flush`` drops the queued
      reply as the web client does, ``ignore`` keeps it, as the M3 client does.
    * ``stall_timeout`` (s, default 30): fail when the server acknowledges no message for so
      long; ``connect_timeout`` (s, default 10).
    * ``api_key_env``: an environment variable sent as ``Authorization: Bearer`` (a server
      behind an authenticating proxy); never recorded.

    16 kHz mono, 256-sample (16 ms) frames, clock ``wall``: deadline-paced, replies (24 kHz,
    resampled to 16 kHz) through a playout buffer (:mod:`.session`).  A connection per session;
    no snapshot, no teacher forcing.
    """

    name = "freeze-omni"
    version = "1"
    description = "client of the Freeze-Omni demo server (Socket.IO over HTTPS)"
    extra = "servers"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        url = self.args.get("url", "")
        if url:
            credentials.check_url(url, ("https", "http"))
            if urlsplit(url).path not in ("", "/"):
                raise ValueError(f"url must be the server's root (https://HOST:PORT), got "
                                 f"{url!r}")
        on_stop = self.args.get("on_stop", "flush")
        if on_stop not in STOP_MODES:
            raise ValueError(f"on_stop must be one of {', '.join(STOP_MODES)}, got {on_stop!r}")
        self.settings = FreezeOmniSettings(
            url=url, verify=self.bool_arg("verify", True), prompt=self.args.get("prompt"),
            on_stop=on_stop,
            stall_timeout=self.seconds_arg("stall_timeout", 30.0),
            connect_timeout=self.seconds_arg("connect_timeout", 10.0))
        if self.settings.stall_timeout <= 0:
            raise ValueError("stall_timeout must be > 0")
        self.capabilities = Capabilities(sample_rate=IN_RATE, frame_size=CHUNK,
                                         clock=ClockKind.WALL)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ("url", "verify", "prompt", "on_stop", "stall_timeout", "connect_timeout",
                "api_key_env")

    def open(self, spec: SessionSpec) -> Session:
        if not self.settings.url:
            raise ValueError("freeze-omni needs --system-arg url=https://HOST:PORT")
        headers = credentials.bearer(self.args.get("api_key_env"))
        settings = FreezeOmniSettings(**{**self.settings.__dict__, "headers": headers})
        return FreezeOmniSession(settings)
