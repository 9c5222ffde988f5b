"""The ``vllm-omni-duplex`` system: a client of vLLM-Omni's full-duplex Realtime endpoint."""

from __future__ import annotations

from typing import Any

from duplexeval.systems._base import Capabilities, ClockKind, Session, SessionSpec, System
from duplexeval.systems.adapters.vllm_omni._session import (
    FRAME,
    RATE,
    VllmDuplexSession,
    VllmDuplexSettings,
)
from duplexeval.systems.adapters.vllm_omni._wire import with_query
from duplexeval.systems.realtime import _credentials as credentials

__all__ = ["VllmOmniDuplexSystem"]

PRESETS: dict[str, dict[str, Any]] = {
    "minicpmo-4.5": {"input": ("pcm16", 16000),
                     "session": {"overlap_policy": "listen_only",
                                 "playback_commit_policy": "ack_only"},
                     "extra_body": {"native_duplex": True, "force_listen_count": 0}},
    "personaplex": {"input": ("pcm_f32le", 24000), "session": {"voice": "NATF2.pt"},
                    "extra_body": {}},
    "generic": {"input": ("pcm16", 16000), "session": {}, "extra_body": {}},
}
"""The session settings of vllm-omni's client presets (``vllm_omni/clients/minicpmo_4_5.py``,
``personaplex.py``); ``generic`` is the client's defaults (NVIDIA's Nemotron VoiceChat: 16 kHz
in, its 22.05 kHz replies resampled to 24 kHz from the rate each delta declares)."""

DEFAULTS: dict[str, str] = {
    "url": "",
    "model": "",
    "preset": "minicpmo-4.5",
    "instructions": "",
    "voice": "",
    "ref_audio": "",
    "temperature": "",
    "api_key_env": "",
    "ack_interval_ms": "100",
    "heartbeat_s": "30",
    "stall_timeout": "10",
    "connect_timeout": "10",
    "handshake_timeout": "60",
    "resume_attempts": "2",
}
"""Every setting and its default; the effective values are recorded in the run config."""


class VllmOmniDuplexSystem(System):
    """vLLM-Omni's ``/v1/realtime?duplex=1`` (MiniCPM-o 4.5, PersonaPlex, Nemotron VoiceChat).

    Arguments (``--system-arg KEY=VALUE``; defaults in :data:`DEFAULTS`):

    * ``url`` (required to run): ``ws://HOST:PORT/v1/realtime`` (no credentials in it; the
      client adds ``duplex=1``, ``autostart=0`` and, on a resume, ``resume=1``);
    * ``model`` (required to run): the served model's name, sent in the URL and the session;
    * ``preset``: ``minicpmo-4.5`` (default: native duplex, ``pcm16`` at 16 kHz in),
      ``personaplex`` (``pcm_f32le`` at 24 kHz in, voice ``NATF2.pt``) or ``generic`` (see
      :data:`PRESETS`);
    * ``instructions``, ``voice``, ``ref_audio`` (a ``data:audio/wav;base64,...`` URL or a
      server-side path: MiniCPM-o needs one to speak), ``temperature``: sent when set;
    * ``ack_interval_ms`` (default 100): how often played progress is acknowledged;
    * ``heartbeat_s`` (default 30): how often ``session.heartbeat`` is sent;
    * ``stall_timeout`` (s, default 10: the model decides once a second), ``connect_timeout``,
      ``handshake_timeout`` (s), ``resume_attempts`` (default 2);
    * ``api_key_env``: a variable whose value is sent as ``Authorization: Bearer VALUE``.

    Clock ``wall`` (the server's model runs in real time on what it is sent): 24 kHz session
    audio in 20 ms frames, sent in the preset's input format, replies asked for at 24 kHz
    (another rate the server declares per delta is resampled); the output is exactly as long
    as the input (see :mod:`duplexeval.systems.realtime._driver`).  No snapshot, no teacher forcing.
    """

    name = "vllm-omni-duplex"
    version = "1"
    description = "client of vLLM-Omni's full-duplex Realtime endpoint (acks, session resume)"
    extra = "servers"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.args = {**DEFAULTS, **self.args}
        if self.args["url"]:
            credentials.check_url(self.args["url"])
        if self.args["preset"] not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}, "
                             f"got {self.args['preset']!r}")
        if self.int_arg("resume_attempts", 2) < 0:
            raise ValueError("resume_attempts must be >= 0")
        if self.float_arg("ack_interval_ms", 100) < 0:
            raise ValueError("ack_interval_ms must be >= 0")
        if self.float_arg("heartbeat_s", 30) <= 0:
            raise ValueError("heartbeat_s must be > 0")
        self.capabilities = Capabilities(sample_rate=RATE, frame_size=FRAME,
                                         clock=ClockKind.WALL)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return tuple(DEFAULTS)

    def session_config(self) -> dict[str, Any]:
        """The ``session`` object of ``session.update``."""
        a = self.args
        preset = PRESETS[a["preset"]]
        encoding, rate = preset["input"]
        session: dict[str, Any] = {
            "model": a["model"], "modalities": ["audio", "text"],
            "input_audio_format": encoding, "output_audio_format": "pcm16",
            "sample_rate_hz": rate,
            "audio": {"input": {"sample_rate_hz": rate}, "output": {"sample_rate_hz": RATE}},
            "turn_detection": None, **preset["session"],
            "extra_body": {"auto_response": True, **preset["extra_body"]}}
        for key in ("instructions", "voice", "ref_audio"):
            if a[key]:
                session[key] = a[key]
        if a["temperature"]:
            session["temperature"] = self.float_arg("temperature", 0.0)
        return session

    def open(self, spec: SessionSpec) -> Session:
        if not self.args["url"] or not self.args["model"]:
            raise ValueError("vllm-omni-duplex needs --system-arg url=ws://HOST:PORT/v1/realtime "
                             "and model=NAME")
        headers = credentials.bearer(self.args["api_key_env"])
        settings = VllmDuplexSettings(
            url=with_query(self.args["url"], model=self.args["model"]),
            session=self.session_config(), headers=headers,
            input_format=PRESETS[self.args["preset"]]["input"][0],
            input_rate=PRESETS[self.args["preset"]]["input"][1],
            ack_interval=self.float_arg("ack_interval_ms", 100) / 1000,
            heartbeat=self.seconds_arg("heartbeat_s", 30),
            stall_timeout=self.seconds_arg("stall_timeout", 10),
            connect_timeout=self.seconds_arg("connect_timeout", 10),
            handshake_timeout=self.seconds_arg("handshake_timeout", 60),
            resume_attempts=self.int_arg("resume_attempts", 2))
        return VllmDuplexSession(settings)
