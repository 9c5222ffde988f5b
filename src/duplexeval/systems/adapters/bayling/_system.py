"""The ``bayling-duplex`` system: the user's BayLing-Duplex checkout, in process."""

from __future__ import annotations

import importlib
import sys
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
from duplexeval.systems.adapters.bayling._session import (
    FRAME,
    IN_RATE,
    OUT_RATE,
    BayLingSession,
    Sampling,
)

__all__ = ["BayLingDuplexSystem"]

_PATHS = ("model_path", "speech_tokenizer_path", "decoder_path")


class BayLingDuplexSystem(System):
    """BayLing-Duplex (``bayling_duplex.BayLingDuplex``) driven by its streaming API.

    Arguments (``--system-arg KEY=VALUE``):

    * ``repo``: the BayLing-Duplex checkout (put first on ``sys.path``); or ``module``
      (default ``bayling_duplex``): any importable module with a ``BayLingDuplex`` class of the
      same API (``create_stream_state``, ``stream_audio_tokens``, ``tokenize_audio``,
      ``stream_tokens_to_audio``, ``time_offset``, ``x_ratio``).
    * ``model_path``, ``speech_tokenizer_path``, ``decoder_path`` (required to run): the
      downloaded model, GLM-4-Voice tokenizer and decoder folders.
    * ``device`` (default: the model's choice, CUDA when available), ``torch_dtype``
      (default ``auto``), ``interleave_ratio`` (default ``10:5:10``).
    * ``temperature`` (0.8), ``top_p`` (0.8), ``silence_penalty`` (0), ``max_epad_count``
      (50, as the M3 wrapper; the model's default is 1).

    22.05 kHz mono (the model's output rate; the runner resamples the dataset to it), 80 ms
    frames, clock ``frame``, snapshot (deep-copied stream state, :mod:`.session`).  The model
    is loaded once, at the first session.
    """

    name = "bayling-duplex"
    version = "1"
    description = "BayLing-Duplex in process on its streaming API (stream_audio_tokens), forkable"
    capabilities = Capabilities(sample_rate=OUT_RATE, frame_size=FRAME, clock=ClockKind.FRAME,
                                snapshot=True)

    def __init__(self, **args: str) -> None:
        super().__init__(**args)
        self.sampling = Sampling(
            temperature=self.float_arg("temperature", 0.8), top_p=self.float_arg("top_p", 0.8),
            silence_penalty=self.float_arg("silence_penalty", 0.0),
            max_epad_count=self.int_arg("max_epad_count", 50))
        if not 0 < self.sampling.top_p <= 1 or self.sampling.max_epad_count < 1:
            raise ValueError("top_p must be in (0, 1] and max_epad_count >= 1")
        for name in ("repo", *_PATHS):
            if name in self.args and not Path(self.args[name]).is_dir():
                raise ValueError(f"{name}: no such folder: {self.args[name]}")
        self._cls: Any = None
        self._model: Any = None
        if {"repo", "module", *_PATHS} & set(self.args):  # meant to run: check it all now
            self._require_paths()
            self._cls = self._import()

    @classmethod
    def arg_names(cls) -> tuple[str, ...]:
        return ("repo", "module", *_PATHS, "device", "torch_dtype", "interleave_ratio",
                "temperature", "top_p", "silence_penalty", "max_epad_count")

    def _import(self) -> Any:
        """The ``BayLingDuplex`` class of the checkout or module (a clear error otherwise)."""
        repo = self.args.get("repo")
        name = self.args.get("module", "bayling_duplex")
        if repo:
            top = Path(repo).resolve() / name.split(".")[0]
            if not (top.is_dir() or top.with_suffix(".py").is_file()):
                raise ValueError(f"cannot import {name} from {repo}: it has no "
                                 f"{name.split('.')[0]} package")
            loaded = getattr(sys.modules.get(name), "__file__", None)
            if loaded and not Path(loaded).resolve().is_relative_to(top.parent):
                raise ValueError(f"{name} is already imported from {loaded}; one checkout "
                                 "per process")
            if str(top.parent) not in sys.path:
                sys.path.insert(0, str(top.parent))
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            where = f" from {repo}" if repo else ""
            raise ValueError(f"cannot import {name}{where}: {exc}") from None
        cls = getattr(module, "BayLingDuplex", None)
        if cls is None:
            raise ValueError(f"module {name} has no BayLingDuplex class")
        return cls

    def _require_paths(self) -> None:
        missing = [p for p in _PATHS if p not in self.args]
        if missing:
            raise ValueError(f"bayling-duplex needs --system-arg {'=DIR, '.join(missing)}=DIR")

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        self._require_paths()
        cls = self._cls or self._import()
        kwargs: dict[str, Any] = {p: self.args[p] for p in _PATHS}
        for key in ("device", "torch_dtype", "interleave_ratio"):
            if key in self.args:
                kwargs[key] = self.args[key]
        try:
            model = cls(**kwargs)
        except Exception as exc:  # weights, CUDA, versions: the reason goes with every sample
            raise SystemFailure(f"cannot load BayLing-Duplex: {type(exc).__name__}: {exc}") \
                from None
        if model.sample_rate != IN_RATE or model.output_sample_rate != OUT_RATE:
            raise SystemFailure(f"BayLing-Duplex rates {model.sample_rate}/"
                                f"{model.output_sample_rate} Hz, expected {IN_RATE}/{OUT_RATE}")
        self._model = model
        return model

    def open(self, spec: SessionSpec) -> Session:
        return BayLingSession(self._load(), self.sampling, spec.seed)
