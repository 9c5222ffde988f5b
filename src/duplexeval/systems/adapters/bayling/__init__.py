"""``bayling-duplex``: BayLing-Duplex in process, driven through its streaming API
(``BayLingDuplex.stream_audio_tokens`` with a ``DuplexStreamState``), so that a session can be
snapshot, restored and forked.

BayLing-Duplex is not on PyPI: the system imports the user's checkout (``repo=PATH``) or any
importable module that provides the same API.  The conventions (rates, blocks, the causal
re-tokenisation, the decoder's hold-back) are in :mod:`.session` and :mod:`.tokens`.

Only a deterministic toy module with the same API surface was run here (tests); the real model
(a 9B LM, the GLM-4-Voice tokenizer and decoder, a GPU) was not.
"""

from duplexeval.systems.adapters.bayling._system import BayLingDuplexSystem

__all__ = ["BayLingDuplexSystem"]
