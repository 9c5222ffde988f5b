"""Start moshi's own ``moshi.server`` on a CPU: its warm-up calls ``torch.cuda.synchronize()``
unconditionally, which fails without a GPU, so this wrapper makes that one call a no-op and then
runs the unmodified server module with the command line it was given (nothing of the server is
copied or changed)::

    python tests_moshi/moshi_server_cpu.py --static none --device cpu --port PORT ...
"""

import runpy
import sys

import torch

torch.cuda.synchronize = lambda *args, **kwargs: None  # type: ignore[assignment]
sys.argv = ["moshi.server", *sys.argv[1:]]
runpy.run_module("moshi.server", run_name="__main__")
