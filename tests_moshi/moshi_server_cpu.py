"""Start moshi's own ``moshi.server`` on a CPU: its warm-up calls ``torch.cuda.synchronize()``
unconditionally, which fails without a GPU, so this wrapper makes that one call a no-op and then
runs the unmodified server module with the command line it was given (nothing of the server is
copied or changed)::

    python tests_moshi/moshi_server_cpu.py --static none --device cpu --port PORT ...

With ``DUPLEXEVAL_MOSHI_PROBE=FILE`` it also records, as JSON lines in ``FILE``, what the
server's models see and make (the calls are wrapped, their arguments and results untouched):

* ``{"call": "lm_reset"}``: ``LMGen.reset_streaming`` (once per connection, and never during
  the warm-up: a connection's records are those after its ``lm_reset``);
* ``{"call": "mimi_reset"}``: ``MimiModel.reset_streaming`` (per connection, and after the
  first input frame is encoded);
* ``{"call": "encode", "pcm": B64, "codes": [[...]]}``: ``MimiModel.encode`` of one input frame
  (the PCM the server decoded from the client's Opus; float32 little-endian, base64) and its
  codes ``[codebook][time]``;
* ``{"call": "step", "codes": [...], "tokens": [...] | null}``: ``LMGen.step`` with the user
  codes it was given and the text + audio tokens it returned (``null`` while the model has not
  produced its first frame);
* ``{"call": "decode", "pcm": B64}``: ``MimiModel.decode`` of those tokens (before Opus).
"""

import base64
import functools
import json
import os
import runpy
import sys
from typing import Any

import torch

torch.cuda.synchronize = lambda *args, **kwargs: None  # type: ignore[assignment]


def _pcm(x: torch.Tensor) -> str:
    return base64.b64encode(x.detach().float().cpu().numpy().astype("<f4").tobytes()).decode()


def _probe(path: str) -> None:
    from moshi.models import LMGen, MimiModel

    out = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the server's lifetime

    def record(**fields: Any) -> None:
        out.write(json.dumps(fields) + "\n")
        out.flush()

    def wrap(cls: type, name: str, log: Any) -> None:
        original = getattr(cls, name)

        @functools.wraps(original)
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            log(args, result)
            return result

        setattr(cls, name, wrapped)

    wrap(LMGen, "reset_streaming", lambda a, r: record(call="lm_reset"))
    wrap(MimiModel, "reset_streaming", lambda a, r: record(call="mimi_reset"))
    wrap(MimiModel, "encode", lambda a, r: record(call="encode", pcm=_pcm(a[0]),
                                                  codes=r[0].tolist()))
    wrap(LMGen, "step", lambda a, r: record(
        call="step", codes=a[0][0, :, 0].tolist(),
        tokens=None if r is None else r[0, :, 0].tolist()))
    wrap(MimiModel, "decode", lambda a, r: record(call="decode", pcm=_pcm(r)))


if os.environ.get("DUPLEXEVAL_MOSHI_PROBE"):
    _probe(os.environ["DUPLEXEVAL_MOSHI_PROBE"])
sys.argv = ["moshi.server", *sys.argv[1:]]
runpy.run_module("moshi.server", run_name="__main__")
