"""The CPU kernels Whisper (CTranslate2) decodes with: pinned, so that a transcript depends on
the audio and the settings, not on the machine.

Why
---
CTranslate2 picks its matrix library and instruction set from the CPU it runs on: Intel MKL on
Intel CPUs and oneDNN elsewhere (``CT2_USE_MKL`` overrides it), its own kernels for the widest
ISA it trusts (AVX2 on the AMD EPYC measured here, although it has AVX-512), and oneDNN its
widest JIT kernels (AVX-512 with VNNI on that CPU, by ``ONEDNN_VERBOSE``).  Each choice
rounds floats differently, and Whisper's beam search turns a last-bit difference into another
word or another word time now and then.  Measured on the ``reference`` multi-ref run of the
voiced sample (22 samples, timing scope, one 2-core AMD EPYC with AVX-512): the default kernels,
oneDNN limited to AVX2, CTranslate2 forced to AVX-512 and MKL gave **four different** analysis
folders; with the pins below, 1, 2, 3 and 4 threads, ``OMP_NUM_THREADS=1``/``MKL_NUM_THREADS=1``
(what a Dask nanny sets in its workers) and a loaded machine all gave the same bytes.  A Dask
cluster whose workers are different CPUs, or a colleague's laptop, would otherwise analyse the
same sample differently.

What
----
``portable`` (the default) sets, in this process's environment:

* ``CT2_USE_MKL=0``: oneDNN on every x86-64 CPU (read when ``ctranslate2`` is imported, so
  :mod:`duplexeval.speech` sets it on import, before anything of duplexeval imports
  faster-whisper);
* ``CT2_FORCE_CPU_ISA=AVX2`` and ``ONEDNN_MAX_CPU_ISA=AVX2``: the instruction set every x86-64
  CPU of the last decade has (read when the first model runs).

Thread counts then change speed only (measured as above; ``tests/test_asr_determinism.py``
checks it on every run of the tests).  On the 2-core machine above the pins cost about 20 % of
the ASR time (AVX-512 VNNI is faster than AVX2).  ``DUPLEXEVAL_CPU_KERNELS=native`` leaves
CTranslate2 its own choice (fastest, machine-dependent); the mode is part of the ASR settings
(:func:`kernel_settings`), so cached analyses and results never mix the two.  ARM CPUs use
CTranslate2's ruy backend, whatever the mode.  Silero VAD (onnxruntime) runs one thread per
session, as faster-whisper sets it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from duplexeval.errors import DuplexevalError

__all__ = ["MODE_VARIABLE", "PORTABLE", "kernel_mode", "kernel_settings", "pin_kernels"]

MODE_VARIABLE = "DUPLEXEVAL_CPU_KERNELS"
"""``portable`` (default) or ``native``."""
PORTABLE = {"CT2_USE_MKL": "0", "CT2_FORCE_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
"""The environment of the portable kernels."""

_state: dict[str, bool] = {}


def kernel_mode() -> str:
    """The mode :data:`MODE_VARIABLE` asks for; a one-line error for anything else."""
    mode = os.environ.get(MODE_VARIABLE, "portable").strip().lower() or "portable"
    if mode not in ("portable", "native"):
        raise DuplexevalError(f"{MODE_VARIABLE}={os.environ[MODE_VARIABLE]!r}: expected "
                              "'portable' (the default) or 'native'")
    return mode


def pin_kernels() -> None:
    """Set the portable kernels' environment (:data:`PORTABLE`) unless the mode is
    ``native``; remembers whether ``ctranslate2`` was already imported (then its matrix
    library is whatever it chose)."""
    if kernel_mode() == "native":
        return
    _state.setdefault("ct2_imported_first", "ctranslate2" in sys.modules)
    os.environ.update(PORTABLE)


def kernel_settings() -> dict[str, Any]:
    """What the ASR settings record: the mode and the variables in force (pinning first)."""
    mode = kernel_mode()
    if mode == "portable":
        pin_kernels()
    out: dict[str, Any] = {"mode": mode, **{k: os.environ.get(k) for k in PORTABLE}}
    if mode == "portable" and _state.get("ct2_imported_first"):
        out["CT2_USE_MKL"] = "unpinned: ctranslate2 was imported before duplexeval.speech"
    return out
