"""The resolved versions of the numeric stack, recorded in every results file and run config.

The same audio can give other transcripts, speech boundaries or scores under another numpy,
onnxruntime (Silero VAD, DNSMOS, piper), CTranslate2 (Whisper) or torch (Moshi), so a number
is only reproducible together with these versions.  ``make`` installs them from
``requirements.lock``; :func:`numeric_stack` says what this process actually imports.
"""

from __future__ import annotations

import functools
import platform
from importlib.metadata import PackageNotFoundError, version

__all__ = ["NUMERIC_STACK", "installed_version", "numeric_stack"]

NUMERIC_STACK = ("numpy", "scipy", "soxr", "onnxruntime", "ctranslate2", "faster-whisper",
                 "torch")
"""The distributions whose versions change numbers (their PyPI names)."""


def numeric_stack() -> dict[str, str | None]:
    """``{"python": "3.11.7", "numpy": "2.4.6", ..., "torch": None}``: the Python version and
    each distribution of :data:`NUMERIC_STACK` as installed (``None`` where it is not)."""
    return {"python": platform.python_version(),
            **{name: installed_version(name) for name in NUMERIC_STACK}}


@functools.cache
def installed_version(name: str) -> str | None:
    """The installed version of the distribution ``name`` (its PyPI name), ``None`` where it is
    not installed.  Read once per process: ``importlib.metadata`` parses the distribution's
    metadata file on every call (about 1 ms), and provenance asks for the same few versions
    once per analysed channel."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None
