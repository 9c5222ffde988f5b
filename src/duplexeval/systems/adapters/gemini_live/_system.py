"""The ``gemini-live`` system: our own thin client of the Gemini Live API over WebSocket."""

from __future__ import annotations

import os
from typing import Any

from duplexeval.systems._base import Capabilities, ClockKind, Session, SessionSpec, System
from duplexeval.systems.adapters.gemini_live._session import (
    FRAME,
    RATE,
    GeminiLiveSession,
    GeminiLiveSettings,
)
from duplexeval.systems.realtime import _credentials as credentials

__all__ = ["GeminiLiveSystem"]

URL = ("wss://generativelanguage.googleapis.com/ws/"
       "google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent")

DEFAULTS: dict[str, str] = {
    "url": URL,
    "model": "models/gemini-2.5-flash-native-audio-preview-12-2025",
    "api_key_env": "",
    "voice": "",
    "instructions": "",
    "start_sensitivity": "",
    "end_sensitivity": "",
    "prefix_padding_ms": "",
    "silence_duration_ms": "",
    "activity_handling": "START_OF_ACTIVITY_INTERRUPTS",
    "resume": "true",
    "resume_attempts": "2",
    "stall_timeout": "10",
    "connect_timeout": "10",
    "setup_timeout": "30",
}
"""Every setting and its default; the effective values are recorded in the run config (an
empty value is left to the server's default and not sent)."""

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""Where the key is looked for when ``api_key_env`` names no variable."""
_SENSITIVITY = {"start_sensitivity": ("START_SENSITIVITY_HIGH", "START_SENSITIVITY_LOW"),
                "end_sensitivity": ("END_SENSITIVITY_HIGH", "END_SENSITIVITY_LOW")}
_HANDLING = ("START_OF_ACTIVITY_INTERRUPTS", "NO_INTERRUPTION")


class GeminiLiveSystem(System):
    """Gemini Live (``BidiGenerateContent``): 16 kHz PCM16 in, 24 kHz out, clock ``wall``.

    Arguments (``--system-arg KEY=VALUE``; defaults in :data:`DEFAULTS`): ``model``, ``url``,
    ``api_key_env`` (the *name* of the variable with the key; default ``GEMINI_API_KEY``, then
    ``GOOGLE_API_KEY``), ``voice`` (a prebuilt voice name), ``instructions``,
    ``start_sensitivity`` / ``end_sensitivity`` (``..._HIGH`` or ``..._LOW``),
    ``prefix_padding_ms``, ``silence_duration_ms``, ``activity_handling``
    (``START_OF_ACTIVITY_INTERRUPTS``: barge-in; ``NO_INTERRUPTION``), ``resume`` (session
    resumption on a dropped transport), ``resume_attempts``, ``stall_timeout`` (s, how long a
    reply may pause mid-generation), ``connect_timeout``, ``setup_timeout`` (s).

    The server's automatic activity detection is always on (manual ``activityStart`` /
    ``activityEnd`` would need the reference turn times: oracle data).  24 kHz session audio
    in 20 ms frames; the output is exactly as long as the input (see
    :mod:`duplexeval.systems.realtime._driver`).  No snapshot, no teacher forcing.
    """

    name = "gemini-live"
    version = "1"
    description = "client of the Gemini Live API (16 kHz in, 24 kHz out, interrupted, resumption)"
    extra = "servers"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.args = {**DEFAULTS, **self.args}
        a = self.args
        credentials.check_url(a["url"])
        for key, allowed in _SENSITIVITY.items():
            if a[key] and a[key] not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}, got {a[key]!r}")
        if a["activity_handling"] not in _HANDLING:
            raise ValueError(f"activity_handling must be one of {', '.join(_HANDLING)}")
        self.bool_arg("resume", True)
        for key in ("prefix_padding_ms", "silence_duration_ms"):
            if a[key]:
                self.int_arg(key, 0)
        self.capabilities = Capabilities(sample_rate=RATE, frame_size=FRAME,
                                         clock=ClockKind.WALL)

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return tuple(DEFAULTS)

    def setup(self) -> dict[str, Any]:
        """The ``setup`` message's body."""
        a = self.args
        generation: dict[str, Any] = {"responseModalities": ["AUDIO"]}
        if a["voice"]:
            generation["speechConfig"] = {
                "voiceConfig": {"prebuiltVoiceConfig": {"voiceName": a["voice"]}}}
        detection: dict[str, Any] = {"disabled": False}
        for arg, field in (("start_sensitivity", "startOfSpeechSensitivity"),
                           ("end_sensitivity", "endOfSpeechSensitivity")):
            if a[arg]:
                detection[field] = a[arg]
        for arg, field in (("prefix_padding_ms", "prefixPaddingMs"),
                           ("silence_duration_ms", "silenceDurationMs")):
            if a[arg]:
                detection[field] = self.int_arg(arg, 0)
        setup: dict[str, Any] = {
            "model": a["model"], "generationConfig": generation,
            "realtimeInputConfig": {"automaticActivityDetection": detection,
                                    "activityHandling": a["activity_handling"]},
            "outputAudioTranscription": {}}
        if a["instructions"]:
            setup["systemInstruction"] = {"parts": [{"text": a["instructions"]}]}
        if self.bool_arg("resume", True):
            setup["sessionResumption"] = {}
        return setup

    def _key(self) -> str:
        variable = self.args["api_key_env"]
        if variable:
            return credentials.api_key(variable)
        for name in KEY_VARIABLES:
            if os.environ.get(name):
                return credentials.api_key(name)
        return credentials.api_key(KEY_VARIABLES[0])  # fails, naming the variable

    def open(self, spec: SessionSpec) -> Session:
        settings = GeminiLiveSettings(
            url=self.args["url"], setup=self.setup(),
            headers=(("x-goog-api-key", self._key()),),
            stall_timeout=self.seconds_arg("stall_timeout", 10),
            connect_timeout=self.seconds_arg("connect_timeout", 10),
            setup_timeout=self.seconds_arg("setup_timeout", 30),
            resume_attempts=self.int_arg("resume_attempts", 2))
        return GeminiLiveSession(settings)
