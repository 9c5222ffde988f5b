"""The ``personaplex`` system: NVIDIA's PersonaPlex in this process, on moshi 0.2.13's modules
(``duplexeval[moshi]``, the ``moshi`` system's environment).

torch and moshi are imported when the first session opens.  The checkpoint and the voice
prompt are loaded once per system; the prompt phase runs once per text prompt (one per
domain by default) and every session starts from its state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duplexeval.systems._base import Capabilities, ClockKind, Session, SessionSpec, SystemFailure
from duplexeval.systems.adapters.moshi_inproc._system import (
    FRAME,
    SAMPLE_RATE,
    MoshiSystem,
    check_local_files,
)
from duplexeval.systems.adapters.personaplex_inproc._settings import (
    ARG_NAMES,
    PersonaPlexSettings,
    parse_personaplex,
    text_prompt_for,
)

__all__ = ["PersonaPlexSystem"]


class PersonaPlexSystem(MoshiSystem):
    """PersonaPlex (``nvidia/personaplex-7b-v1`` or its local files) with its voice and text
    prompts fed natively before the dialogue (:mod:`.prompt`), teacher forcing of the
    reference system audio and words, snapshots of the whole streaming state (prompt
    included) and batched forks.  24 kHz mono, 80 ms frames.  Options: :mod:`.settings`.
    """

    name = "personaplex"
    version = "1"
    description = ("PersonaPlex in process (moshi 0.2.13): voice/text prompts, forcing, "
                   "snapshots, batched forks")
    extra = "moshi"
    capabilities = Capabilities(sample_rate=SAMPLE_RATE, frame_size=FRAME,
                                teacher_forcing_audio=True, teacher_forcing_text=True,
                                snapshot=True, batch=True, clock=ClockKind.FRAME)

    def __init__(self, **args: str) -> None:
        super(MoshiSystem, self).__init__(**args)
        self.plex: PersonaPlexSettings = parse_personaplex(self.args)
        self.settings = self.plex.moshi
        check_local_files(self.settings)
        self._models: Any = None
        self._voice: Any = None
        self._prompts: dict[str, Any] = {}

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ARG_NAMES

    def _loader(self) -> Any:
        from duplexeval.systems.adapters.personaplex_inproc._loading import load_personaplex

        return lambda: load_personaplex(self.plex)

    def _prompt(self, text: str) -> Any:
        """The prompt state of a text prompt (built on first use)."""
        if text not in self._prompts:
            from duplexeval.systems.adapters.personaplex_inproc._prompt import build_prompt
            from duplexeval.systems.adapters.personaplex_inproc._settings import wrap_system_tags

            models = self.models()
            tokens = [int(t) for t in models.tokenizer.encode(wrap_system_tags(text))] \
                if text else []
            self._prompts[text] = build_prompt(models, self._voice_prompt(), text, tokens,
                                               loaded=not self.settings.random_weights)
        return self._prompts[text]

    def _voice_prompt(self) -> Any:
        if self._voice is None and self.plex.voice_prompt is not None:
            from duplexeval.systems.adapters.personaplex_inproc._loading import voice_prompt_path
            from duplexeval.systems.adapters.personaplex_inproc._prompt import read_voice_prompt

            try:
                path = voice_prompt_path(self.plex.voice_prompt, self.settings.hf_repo)
                self._voice = read_voice_prompt(self.models(), Path(path))
            except (OSError, ValueError, RuntimeError) as exc:
                raise SystemFailure(f"personaplex: voice prompt: {exc}") from None
        return self._voice

    def open(self, spec: SessionSpec) -> Session:
        if spec.sample_rate != SAMPLE_RATE:
            raise ValueError(f"the personaplex system runs at {SAMPLE_RATE} Hz, "
                             f"not {spec.sample_rate}")
        models = self.models()
        prompt = self._prompt(text_prompt_for(self.plex, spec.dialogue.domain))
        from duplexeval.systems.adapters.moshi_inproc._session import Running
        from duplexeval.systems.adapters.moshi_inproc._stepper import Sampling
        from duplexeval.systems.adapters.personaplex_inproc._session import PersonaPlexSession

        s = self.settings
        sampling = Sampling(use_sampling=s.use_sampling, temp=s.temp, temp_text=s.temp_text,
                            top_k=s.top_k, top_k_text=s.top_k_text)
        return PersonaPlexSession(models, sampling, spec.seed, prompt, self.plex.output_delay,
                                  Running(compiled=s.compile, batch_codec=s.batch_codec),
                                  spec.dialogue.language)
