"""The resolved versions of the numeric stack, recorded in every results file and run config.

The same audio can give other transcripts, speech boundaries or scores under another numpy,
onnxruntime (Silero VAD, DNSMOS, piper), CTranslate2 (Whisper) or torch (Moshi), so a number
is only reproducible together with these versions.  ``make`` installs them from
``requirements.lock``; :func:`numeric_stack` says what this process actually imports.
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

__all__ = ["NUMERIC_STACK", "numeric_stack"]

NUMERIC_STACK = ("numpy", "scipy", "soxr", "onnxruntime", "ctranslate2", "faster-whisper",
                 "torch")
"""The distributions whose versions change numbers (their PyPI names)."""


def numeric_stack() -> dict[str, str | None]:
    """``{"python": "3.11.7", "numpy": "2.4.6", ..., "torch": None}``: the Python version and
    each distribution of :data:`NUMERIC_STACK` as installed (``None`` where it is not)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in NUMERIC_STACK:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out
