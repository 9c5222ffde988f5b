"""The ``moshi`` system: a Moshi-family checkpoint run in this process (``duplexeval[moshi]``).

torch and moshi are imported when the first session opens, so ``duplexeval systems`` lists the
system (and option errors are reported) without them.  The checkpoint is loaded once per
system and shared by its sessions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duplexeval.systems._base import (
    Capabilities,
    ClockKind,
    Session,
    SessionSpec,
    System,
    SystemFailure,
)
from duplexeval.systems.adapters.moshi_inproc._settings import (
    ARG_NAMES,
    MoshiSettings,
    parse_settings,
)

__all__ = ["MoshiSystem", "check_local_files"]

SAMPLE_RATE = 24000
FRAME = 1920


def check_local_files(settings: MoshiSettings) -> None:
    """A named local checkpoint file must exist (``hf://`` names are left to the loader)."""
    for name in ("moshi_weight", "mimi_weight", "tokenizer", "config", "mimi_config"):
        value = getattr(settings, name)
        if value is None or value.startswith("hf://"):
            continue
        if not Path(value.removeprefix("file://")).is_file():
            raise ValueError(f"system argument {name}: no such file {value!r}")


class MoshiSystem(System):
    """Moshi, Moshika, J-Moshi, LLM-jp-Moshi (any checkpoint moshi 0.2.13's loader reads).

    Options: see :mod:`.settings`.  Teacher forcing of the reference system audio (its own
    Mimi encoder state) and words (the checkpoint's tokenizer); snapshots of the whole
    streaming state; batched forks.  24 kHz mono, 80 ms frames.  Install it in its own
    environment (``make venv-moshi``): moshi pins torch, numpy and aiohttp.
    """

    name = "moshi"
    version = "1"
    description = "Moshi family in process (moshi 0.2.13): forcing, snapshots, batched forks"
    extra = "moshi"
    capabilities = Capabilities(sample_rate=SAMPLE_RATE, frame_size=FRAME,
                                teacher_forcing_audio=True, teacher_forcing_text=True,
                                snapshot=True, batch=True, clock=ClockKind.FRAME)

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.settings: MoshiSettings = parse_settings(self.args)
        check_local_files(self.settings)
        self._models: Any = None

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ARG_NAMES

    def models(self) -> Any:
        """The loaded checkpoint (loaded on first use)."""
        if self._models is None:
            try:
                load = self._loader()
            except ImportError as exc:
                raise SystemFailure(f"the {self.name} system needs moshi and torch ({exc}); "
                                    "run `make venv-moshi` or pip install "
                                    "'duplexeval[moshi]'") from None
            try:
                self._models = load()
            except (OSError, ValueError, RuntimeError) as exc:
                raise SystemFailure(f"{self.name}: cannot load the checkpoint: {exc}") from None
        return self._models

    def _loader(self) -> Any:
        """A function that loads the checkpoint (importing it needs torch and moshi)."""
        from duplexeval.systems.adapters.moshi_inproc._loading import load_models

        return lambda: load_models(self.settings)

    def open(self, spec: SessionSpec) -> Session:
        if spec.sample_rate != SAMPLE_RATE:
            raise ValueError(f"the moshi system runs at {SAMPLE_RATE} Hz, "
                             f"not {spec.sample_rate}")
        models = self.models()
        from duplexeval.systems.adapters.moshi_inproc._session import MoshiSession, Running
        from duplexeval.systems.adapters.moshi_inproc._stepper import Sampling

        s = self.settings
        sampling = Sampling(use_sampling=s.use_sampling, temp=s.temp, temp_text=s.temp_text,
                            top_k=s.top_k, top_k_text=s.top_k_text)
        return MoshiSession(models, sampling, spec.seed,
                            Running(compiled=s.compile, batch_codec=s.batch_codec),
                            spec.dialogue.language)
