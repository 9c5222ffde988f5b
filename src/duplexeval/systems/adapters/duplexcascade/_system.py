"""The ``duplexcascade`` system: a client of a DuplexCascade (``KyutaiBridgeServer``) server."""

from __future__ import annotations

from duplexeval.systems._base import Capabilities, ClockKind, Session, SessionSpec, System
from duplexeval.systems.adapters.duplexcascade._session import (
    DuplexCascadeSession,
    DuplexCascadeSettings,
)
from duplexeval.systems.adapters.duplexcascade._wire import FRAME, SAMPLE_RATE
from duplexeval.systems.realtime import _credentials as credentials

__all__ = ["DuplexCascadeSystem"]



class DuplexCascadeSystem(System):
    """A DuplexCascade server over a WebSocket, in real time.

    Arguments (``--system-arg KEY=VALUE``):

    * ``url`` (required to run): ``wss://HOST:31606`` (the M3 patch serves TLS) or
      ``ws://HOST:PORT``; no credentials in it (it is recorded in the run config).
    * ``verify`` (default 1): ``0`` accepts a self-signed TLS certificate (the M3 client's
      default, ``ssl_verify=False``); say so only for a server you run yourself.
    * ``startup_delay`` (s, default 1): the wait after connecting, before the first frame.
    * ``stall_timeout`` (s, default 30): fail when the server answers no keepalive ping for so
      long; ``connect_timeout`` (s, default 10).
    * ``api_key_env``: an environment variable whose value is sent as ``Authorization: Bearer``
      (a server behind an authenticating proxy); never recorded.

    24 kHz mono, 80 ms frames, clock ``wall``: deadline-paced, output through a playout buffer
    (:mod:`duplexeval.systems.realtime._driver`).  The runner resamples the dataset to 24 kHz (the
    M3 client sends the input at its own rate, right only for 24 kHz data).  Each session is a new
    connection; no snapshot, no teacher forcing (multi-turn protocols replay the context).
    """

    name = "duplexcascade"
    version = "1"
    description = "client of a DuplexCascade server (float32 PCM WebSocket, audio_control stop)"
    extra = "servers"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        url = self.args.get("url", "")
        if url:
            credentials.check_url(url)
        self.settings = DuplexCascadeSettings(
            url=url, verify=self.bool_arg("verify", True),
            startup_delay=self.float_arg("startup_delay", 1.0, 0.0),
            stall_timeout=self.seconds_arg("stall_timeout", 30.0),
            connect_timeout=self.seconds_arg("connect_timeout", 10.0))
        if self.settings.stall_timeout <= 0 or self.settings.startup_delay < 0:
            raise ValueError("stall_timeout must be > 0 and startup_delay >= 0")
        self.capabilities = Capabilities(sample_rate=SAMPLE_RATE, frame_size=FRAME,
                                         clock=ClockKind.WALL)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ("url", "verify", "startup_delay", "stall_timeout", "connect_timeout",
                "api_key_env")

    def open(self, spec: SessionSpec) -> Session:
        if not self.settings.url:
            raise ValueError("duplexcascade needs --system-arg url=wss://HOST:PORT")
        headers = credentials.bearer(self.args.get("api_key_env"))
        settings = DuplexCascadeSettings(**{**self.settings.__dict__, "headers": headers})
        return DuplexCascadeSession(settings)
