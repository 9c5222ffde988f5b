"""onnxruntime without telemetry: every ONNX session here (Silero VAD inside faster-whisper,
piper voices, DNSMOS, the cascade's Smart Turn) is made after :func:`telemetry_off`.

onnxruntime writes a device id under ``$XDG_CACHE_HOME/Microsoft/DeveloperTools/`` (default
``~/.cache``) when it is imported, unless ``ORT_DISABLE_TELEMETRY`` is set: a run must write
nothing outside its output folder and the duplexeval cache.  The variable is set (unless the
user set it) when :mod:`duplexeval.speech` is imported, before anything imports onnxruntime,
and is inherited by worker processes; the telemetry events of an onnxruntime already imported
are turned off too.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["onnxruntime", "telemetry_off"]


def telemetry_off() -> None:
    """Turn onnxruntime's telemetry off, for this process and the ones it starts."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    ort = sys.modules.get("onnxruntime")
    if ort is not None and hasattr(ort, "disable_telemetry_events"):
        ort.disable_telemetry_events()


def onnxruntime() -> Any:
    """The ``onnxruntime`` module, imported with its telemetry off."""
    telemetry_off()
    import onnxruntime as ort

    ort.disable_telemetry_events()
    return ort
