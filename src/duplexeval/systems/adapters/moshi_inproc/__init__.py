"""``moshi``: the Moshi family in process (moshi 0.2.13; the ``moshi`` extra, own environment).

``--system moshi [--system-arg hf_repo=kyutai/moshiko-pytorch-bf16]`` or local files
(``moshi_weight``, ``mimi_weight``, ``tokenizer``, ``config``); ``random_weights=1`` with a
``config`` for weight-free tests.  Modules: options (:mod:`.settings`, no torch), loading
(:mod:`.loading`), the generation loop with teacher forcing and per-row generators
(:mod:`.stepper`), the text stream (:mod:`.text`), streaming states as values
(:mod:`.streams`), sessions and batched forks (:mod:`.session`).  Only :mod:`.settings` and
:mod:`.system` import without torch.
"""

from duplexeval.systems.adapters.moshi_inproc._system import MoshiSystem

__all__ = ["MoshiSystem"]
