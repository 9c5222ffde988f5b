"""English fallback TTS: the ``espeak-ng`` program (formant synthesis, 22.05 kHz), no weights.

Robotic but intelligible; useful where piper is not installed (espeak-ng is GPL-3.0 and is a
system package, e.g. ``apt-get install espeak-ng``; it is run as a subprocess).  Voices are
espeak voice names, some with a variant: ``en-us`` (default, male), ``en-us+f3`` (female),
``en-us+m3``, ``en-gb-x-rp`` (British) and ``en-gb-x-rp+f3``.  (espeak-ng 1.51 ignores a variant
on ``en-gb``: ``en-gb+f3`` sounds exactly like ``en-gb``.)
``speed`` scales the rate of 175 words per minute.  No word timing.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from duplexeval.speech._tts import TtsEngine, TtsError, TtsUnavailable, Utterance

__all__ = ["EspeakEngine"]

PROGRAM = "espeak-ng"
BASE_WPM = 175  # espeak-ng's default rate, words per minute
TIMEOUT_S = 120.0


class EspeakEngine(TtsEngine):
    """espeak-ng via subprocess; English; 22.05 kHz; deterministic; no word timing.

    ``program``: the espeak-ng executable (default: ``espeak-ng`` on ``PATH``).
    """

    name = "espeak"
    language = "en"
    install_hint = "install the espeak-ng program, e.g. 'apt-get install espeak-ng'"
    VOICES: ClassVar[tuple[str, ...]] = ("en-us", "en-us+f3", "en-us+m3", "en-gb-x-rp",
                                         "en-gb-x-rp+f3")

    def __init__(self, program: str | Path | None = None) -> None:
        found = shutil.which(str(program) if program is not None else PROGRAM)
        if found is None:
            raise TtsUnavailable(self.unavailable_reason() if program is None else
                                 f"TTS engine 'espeak': program {str(program)!r} not found")
        self.program = found
        self._version: str | None = None

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if shutil.which(PROGRAM) is not None:
            return None
        return f"TTS engine 'espeak' needs the {PROGRAM} program (not on PATH): {cls.install_hint}"

    def voices(self) -> list[str]:
        return list(self.VOICES)

    def _parameters(self) -> dict[str, Any]:
        if self._version is None:
            result = subprocess.run([self.program, "--version"], capture_output=True,
                                    timeout=TIMEOUT_S, check=False)
            self._version = result.stdout.decode("utf-8", "replace").strip()
        return {"program_version": self._version, "base_wpm": BASE_WPM}

    def _synthesize(self, text: str, voice: str, speed: float) -> Utterance:
        command = [self.program, "-v", voice, "-s", str(round(BASE_WPM * speed)), "-b", "1",
                   "--stdout"]
        try:
            result = subprocess.run(command, input=text.encode("utf-8"), capture_output=True,
                                    timeout=TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TtsError(f"espeak-ng failed: {exc}") from exc
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip().splitlines()
            raise TtsError(f"espeak-ng exited with code {result.returncode}: "
                           f"{message[-1] if message else 'no message'}")
        audio, rate = _read_wav(result.stdout)
        return Utterance(audio=audio, sample_rate=rate)


def _read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Mono 16-bit PCM WAV bytes -> (float32 audio, sample rate).

    Writing to a pipe, espeak-ng cannot fill in the RIFF and data sizes (it leaves
    placeholders), so a data chunk that claims more than the stream holds runs to its end.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise TtsError("espeak-ng did not produce a WAV stream")
    position = 12
    rate = channels = bits = 0
    while position + 8 <= len(data):
        chunk = data[position:position + 4]
        (size,) = struct.unpack("<I", data[position + 4:position + 8])
        body = position + 8
        if chunk == b"fmt ":
            _, channels, rate, _, _, bits = struct.unpack("<HHIIHH", data[body:body + 16])
        elif chunk == b"data":
            if channels != 1 or bits != 16 or rate <= 0:
                raise TtsError(f"espeak-ng produced unsupported WAV: {channels} channel(s), "
                               f"{bits} bit, {rate} Hz")
            pcm = data[body:body + min(size, len(data) - body)]
            pcm = pcm[:len(pcm) - len(pcm) % 2]
            audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
            return audio, rate
        position = body + size + size % 2
    raise TtsError("espeak-ng WAV stream has no data chunk")
