"""Speech engines: voice activity, ASR (Whisper), TTS engines, Japanese text handling and the
packaged clip bank.  The lowest stage above the core: it knows audio and text, not dialogues.

Importing it pins the CPU kernels of CTranslate2 (:mod:`duplexeval.speech._kernels`) before
anything here imports faster-whisper, so that transcripts do not depend on the machine, and
turns onnxruntime's telemetry off (:mod:`duplexeval.speech._onnx`) before anything imports it."""

from contextlib import suppress

from duplexeval.errors import DuplexevalError
from duplexeval.speech._kernels import pin_kernels
from duplexeval.speech._onnx import telemetry_off

telemetry_off()

with suppress(DuplexevalError):  # a bad DUPLEXEVAL_CPU_KERNELS is reported where ASR is used
    pin_kernels()
