"""``personaplex``: NVIDIA's PersonaPlex in process, on the ``moshi`` system's generation loop
(moshi 0.2.13's modules; the ``moshi`` extra, its own environment).

``--system personaplex [--system-arg voice_prompt=NATF2.pt text_prompt="..."]``.  Modules:
options (:mod:`.settings`, no torch), loading PersonaPlex's LM (a depformer over all 16 audio
codebooks) with moshi's modules (:mod:`.loading`), the prompt phase (:mod:`.prompt`),
sessions with PersonaPlex's output delay (:mod:`.session`).  Only :mod:`.settings` and
:mod:`.system` import without torch.
"""

from duplexeval.systems.adapters.personaplex_inproc._system import PersonaPlexSystem

__all__ = ["PersonaPlexSystem"]
