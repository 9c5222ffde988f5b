"""The ``command`` system: any offline (whole-file) inference command, run once per sample.

::

    duplexeval run --system command \\
        --system-arg cmd="python infer.py --in {input_wav} --out {output_wav}" \\
        --system-arg sample_rate=16000 [--system-arg out_rate=22050] ...

Per sample the runner hands the session the sample's whole input (clock ``file``,
:meth:`~duplexeval.systems._base.Session.load_input`): under ``single`` the input window
``[input_start, input_end]``; under the multi-turn protocols the context plus the window
``[context_start, input_end]``; the user muted from ``mute_start`` as for every system.  The
session writes it to ``{input_wav}`` and runs the command once.

Arguments (``--system-arg KEY=VALUE``):

* ``cmd``: the command line, split like a POSIX shell (no shell runs it: no pipes, no ``$VAR``);
  ``{input_wav}`` and ``{output_wav}`` are required; ``{sample_rate}`` (Hz), ``{seed}``,
  ``{language}`` (ISO 639-1 or empty) and ``{workdir}`` (the sample's temporary folder) are
  replaced too; other braces are left alone.  It runs in the current directory with the
  current environment (keys stay in environment variables).
* ``sample_rate`` (Hz, default 16000): the rate of ``{input_wav}`` and the system's native rate.
* ``channels``: ``user`` (default; mono: the user channel) or ``user+system`` (stereo: ch0 the
  user, ch1 the reference system audio the protocol forces before the fork, silence after;
  then the system declares audio teacher forcing and runs under ``multi-ref``).
* ``out_rate`` (Hz, default ``sample_rate``): the rate the command writes; a file at any other
  rate fails the sample.  Output at another rate than ``sample_rate`` is resampled (soxr).
* ``out_channel``: which channel of a multi-channel output is the system (a mono output needs
  none; a multi-channel one without it fails).
* ``timeout`` (s, default 3600).

The input is 16-bit PCM wav.  A missing, empty, unreadable or wrong-rate output, a non-zero
exit or a timeout fails the sample with the reason (the command's last stderr lines, redacted
of secret-looking environment values).  The output is trimmed or zero-padded at its end to
exactly the input length (output sample ``i`` is the system at input sample ``i``, the
offline scripts' convention); the trace records how many samples were padded or trimmed.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soxr

from duplexeval._audio import AudioReadError, read_audio, write_audio
from duplexeval._cache import scratch_folder
from duplexeval.systems._base import (
    Capabilities,
    ClockKind,
    Forced,
    Session,
    SessionSpec,
    StepOutput,
    System,
    SystemFailure,
)
from duplexeval.systems.realtime._credentials import redact

__all__ = ["CommandSystem"]

LAYOUTS = ("user", "user+system")
_PLACEHOLDER = re.compile(r"\{(input_wav|output_wav|sample_rate|seed|language|workdir)\}")
_STDERR_LINES = 8


@dataclass(frozen=True)
class CommandSettings:
    """One ``command`` system's settings (rates in Hz, ``timeout`` in s)."""

    argv: tuple[str, ...]
    sample_rate: int
    layout: str
    out_rate: int
    out_channel: int | None
    timeout: float
    frame_size: int


class CommandSystem(System):
    """An offline inference command per sample (see the module docstring)."""

    name = "command"
    version = "1"
    description = "runs an offline inference command per sample: {input_wav} in, {output_wav} out"

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        rate = self.rate_arg("sample_rate", 16000)
        layout = self.args.get("channels", "user")
        if layout not in LAYOUTS:
            raise ValueError(f"channels must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        argv = tuple(shlex.split(self.args.get("cmd", "")))
        if "cmd" in self.args and not argv:  # given, but blank: refused before any sample
            raise ValueError('cmd is empty: give cmd="PROGRAM ... {input_wav} ... '
                             '{output_wav}"')
        if argv and not {"input_wav", "output_wav"} <= set(_PLACEHOLDER.findall(" ".join(argv))):
            raise ValueError("cmd must name {input_wav} and {output_wav}")
        out_channel = self.args.get("out_channel")
        self.settings = CommandSettings(
            argv=argv, sample_rate=rate, layout=layout,
            out_rate=self.rate_arg("out_rate", rate),
            out_channel=None if out_channel is None else self.int_arg("out_channel", 0),
            timeout=self.seconds_arg("timeout", 3600.0),
            frame_size=self.int_arg("frame_size", rate // 50, 1))
        self.capabilities = Capabilities(
            sample_rate=rate, frame_size=self.settings.frame_size, clock=ClockKind.FILE,
            teacher_forcing_audio=layout == "user+system")

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ("cmd", "sample_rate", "channels", "out_rate", "out_channel", "timeout",
                "frame_size")

    def open(self, spec: SessionSpec) -> Session:
        if not self.settings.argv:
            raise ValueError('command needs --system-arg cmd="PROGRAM ... {input_wav} ... '
                             '{output_wav}"')
        return _CommandSession(self.settings, spec)


class _CommandSession(Session):
    def __init__(self, settings: CommandSettings, spec: SessionSpec) -> None:
        self.settings, self.spec = settings, spec
        self.frames = 0
        self._out: np.ndarray | None = None
        self._facts: dict[str, Any] = {}

    def load_input(self, user: np.ndarray, reference: np.ndarray | None = None) -> None:
        s = self.settings
        with scratch_folder("command") as tmp:
            folder = Path(tmp)
            wav_in, wav_out = folder / "input.wav", folder / "output.wav"
            data = user if s.layout == "user" else np.stack(
                [user, reference if reference is not None else np.zeros_like(user)], axis=1)
            write_audio(wav_in, np.clip(data, -1.0, 1.0), s.sample_rate, subtype="PCM_16")
            fields = {"input_wav": str(wav_in), "output_wav": str(wav_out),
                      "sample_rate": str(s.sample_rate), "seed": str(self.spec.seed),
                      "language": self.spec.dialogue.language or "", "workdir": str(folder)}
            argv = [_PLACEHOLDER.sub(lambda m: fields[m.group(1)], part) for part in s.argv]
            started = time.monotonic()
            _run(argv, s.timeout)
            seconds = time.monotonic() - started
            out = _read_output(wav_out, s)
        if s.out_rate != s.sample_rate:
            out = soxr.resample(out, s.out_rate, s.sample_rate).astype(np.float32)
        n = len(user)
        self._facts = {"seconds": round(seconds, 3), "output_samples": len(out),
                       "padded": max(0, n - len(out)), "trimmed": max(0, len(out) - n)}
        fitted = np.zeros(n, dtype=np.float32)
        fitted[:min(n, len(out))] = out[:n]
        self._out = fitted

    def step(self, user: np.ndarray, force: Forced | None = None) -> StepOutput:
        if self._out is None:
            raise SystemFailure("the command system was stepped before its input was loaded")
        f = self.settings.frame_size
        chunk = self._out[self.frames * f:(self.frames + 1) * f]
        self.frames += 1
        if len(chunk) < f:
            chunk = np.concatenate([chunk, np.zeros(f - len(chunk), dtype=np.float32)])
        return StepOutput(chunk)

    def trace(self) -> dict[str, Any]:
        return {"sample_rate": self.settings.sample_rate, "command": self._facts}


def _run(argv: list[str], timeout: float) -> None:
    """Run the command; a failure to start, a timeout or a non-zero exit fails the sample."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              errors="replace", check=False)
    except FileNotFoundError:
        raise SystemFailure(f"command not found: {argv[0]}") from None
    except subprocess.TimeoutExpired:
        raise SystemFailure(f"command timed out after {timeout:g} s") from None
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-_STDERR_LINES:])
        raise SystemFailure(redact(f"command exited with status {done.returncode}: {tail}"))


def _read_output(path: Path, s: CommandSettings) -> np.ndarray:
    """The system channel of the command's output, checked (float32 at ``out_rate``)."""
    if not path.exists():
        raise SystemFailure("the command wrote no output file ({output_wav})")
    try:
        x, rate = read_audio(path)
    except AudioReadError as exc:
        raise SystemFailure(f"the command's output is not a readable audio file: "
                            f"{exc.reason}") from None
    if len(x) == 0:
        raise SystemFailure("the command's output file is empty (0 samples)")
    if rate != s.out_rate:
        raise SystemFailure(f"the command's output is at {rate} Hz, expected {s.out_rate} Hz "
                            "(set out_rate if the model writes another rate)")
    if x.shape[1] > 1 and s.out_channel is None:
        raise SystemFailure(f"the command's output has {x.shape[1]} channels; name the "
                            "system's with out_channel")
    channel = 0 if s.out_channel is None else s.out_channel
    if not 0 <= channel < x.shape[1]:
        raise SystemFailure(f"out_channel {channel} is not in the command's "
                            f"{x.shape[1]}-channel output")
    return np.ascontiguousarray(x[:, channel])
