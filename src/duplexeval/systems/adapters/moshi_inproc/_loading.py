"""Loading a Moshi-family checkpoint (or a random-weight one) for in-process sessions.

What is loaded: the LM (``LMModel``), one Mimi for the user stream and the system output (its
encoder state is the user's, its decoder state the system's) and a second Mimi with the same
weights whose encoder takes the reference system audio under teacher forcing, so the two
streams never share an encoder state (M3's wrapper shares one, see the M3 notes), and the
checkpoint's SentencePiece tokenizer.  Mimi runs in float32, the LM in the chosen dtype.

Files come through moshi's own loader (``CheckpointInfo.from_hf_repo``): local paths are read
as they are; a repository name downloads from the Hugging Face hub on the user's machine.
``random_weights`` builds the architecture of ``config`` (default: Moshi 7B) and of
``mimi_config`` (default: Mimi) with weights drawn from ``weights_seed`` (moshi's own
initialisation; Mimi's codebooks, which moshi leaves at zero for training to fit, are fitted
by moshi's k-means on seeded test tones) and reads nothing but the configs and the tokenizer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from moshi.models import loaders

from duplexeval.systems.adapters.moshi_inproc._settings import MoshiSettings

__all__ = ["MoshiModels", "check_vocabulary", "load_models"]

SAMPLE_RATE = 24000
FRAME_RATE = 12.5
_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


@dataclass
class MoshiModels:
    """A loaded checkpoint, shared by every session of a system."""

    lm: Any
    mimi: Any
    """User encoder and system decoder."""
    mimi_ref: Any
    """Reference system encoder (teacher forcing)."""
    tokenizer: Any
    device: torch.device
    system_codebooks: int | None = None
    """The system's audio codebooks when the depformer predicts more (PersonaPlex)."""

    @property
    def dep_q(self) -> int:
        """The system audio codebooks the loop samples and the codec decodes."""
        return int(self.lm.dep_q if self.system_codebooks is None else self.system_codebooks)

    @property
    def silent_tokens(self) -> tuple[int, ...]:
        return (int(self.lm.text_padding_token_id), int(self.lm.end_of_text_padding_id))


def _device(settings: MoshiSettings) -> torch.device:
    if settings.device:
        return torch.device(settings.device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _dtype(settings: MoshiSettings, device: torch.device) -> torch.dtype:
    if settings.dtype:
        return _DTYPES[settings.dtype]
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def _checkpoint(settings: MoshiSettings) -> Any:
    mimi_config = Path(settings.mimi_config) if settings.mimi_config else None
    if settings.random_weights:
        if settings.config is None:
            info = loaders.CheckpointInfo(Path(), Path(), Path(str(settings.tokenizer)))
        else:
            info = loaders.CheckpointInfo.from_hf_repo(
                settings.hf_repo, moshi_weights="unused", mimi_weights="unused",
                tokenizer=settings.tokenizer, config_path=settings.config,
                mimi_config_path=mimi_config)
        if mimi_config is not None:
            info.mimi_config = json.loads(mimi_config.read_text(encoding="utf-8"))
        return info
    return loaders.CheckpointInfo.from_hf_repo(
        settings.hf_repo, moshi_weights=settings.moshi_weight,
        mimi_weights=settings.mimi_weight, tokenizer=settings.tokenizer,
        config_path=settings.config, mimi_config_path=mimi_config)


def _mimi_codebooks(info: Any, own: int | None) -> int:
    if info.lm_config is None:
        return 8
    own = info.lm_config["dep_q"] if own is None else own
    return max(own, info.lm_config["n_q"] - own)


def _fit_codebooks(mimi: Any, seconds: float = 8.0) -> None:
    """Give a random-weight Mimi usable codebooks.  A fresh Mimi's are zeros (training fits
    them by k-means on the first batch), so every frame would quantize to code 0; here moshi's
    own k-means initialisation runs once on the latents of seeded test audio: 80 ms tones of
    random pitch and loudness in noise (from the current generator)."""
    n = round(seconds * FRAME_RATE)
    size = round(SAMPLE_RATE / FRAME_RATE)
    t = torch.arange(size) / SAMPLE_RATE
    pitch = 100 + 2900 * torch.rand(n, 1)
    loud = 0.5 * torch.rand(n, 1)
    audio = loud * torch.sin(2 * torch.pi * pitch * t) + 0.05 * torch.randn(n, size)
    device = next(mimi.parameters()).device
    with torch.no_grad():
        latent = mimi.encode_to_latent(audio.reshape(1, 1, -1).to(device), quantize=False)
        mimi.quantizer.train()
        mimi.quantizer(latent, FRAME_RATE)
        mimi.quantizer.eval()


def check_vocabulary(text_card: int, pieces: int) -> None:
    """The LM's text vocabulary (``text_card``: the ids it samples) must be the tokenizer's:
    moshi's server turns every sampled id into a piece (an id past the tokenizer crashes it in
    ``IdToPiece``), and forced text embeds the tokenizer's ids (one past ``text_card`` would
    index outside the LM's embedding)."""
    if text_card != pieces:
        raise ValueError(f"the LM's text_card is {text_card} but the tokenizer has {pieces} "
                         "pieces; a checkpoint's config and tokenizer must agree")


LMLoader = Callable[[Any, torch.device, torch.dtype], Any]
"""Builds the LM of a ``CheckpointInfo`` with its weights on a device, in a dtype."""


def load_models(settings: MoshiSettings, system_codebooks: int | None = None,
                load_lm: LMLoader | None = None) -> MoshiModels:
    """The checkpoint named by ``settings`` on its device (see the module doc).
    ``system_codebooks``: the system's audio codebooks when the depformer predicts more;
    ``load_lm``: how weights are read into the LM (default: moshi's loader)."""
    device = _device(settings)
    dtype = _dtype(settings, device)
    info = _checkpoint(settings)
    if settings.random_weights:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(settings.weights_seed)
            lm = info.get_moshi(device=device, dtype=dtype, load_weight=False)
            mimi = loaders.get_mimi(None, info.mimi_config, device=device,
                                    num_codebooks=_mimi_codebooks(info, system_codebooks))
            _fit_codebooks(mimi)
    else:
        if load_lm is None:
            lm = info.get_moshi(device=device, dtype=dtype)
        else:
            lm = load_lm(info, device, dtype)
        mimi = info.get_mimi(device=device)
        if system_codebooks is not None:
            mimi.set_num_codebooks(_mimi_codebooks(info, system_codebooks))
    if mimi.sample_rate != SAMPLE_RATE or mimi.frame_rate != FRAME_RATE:
        raise ValueError(f"Mimi runs at {mimi.sample_rate} Hz and {mimi.frame_rate} Hz frames; "
                         f"the moshi system needs {SAMPLE_RATE} Hz and {FRAME_RATE} Hz")
    if lm.condition_provider is not None or lm.fuser is not None:
        raise ValueError("conditioned checkpoints (condition provider / fuser) are not "
                         "supported by the moshi system")
    tokenizer = info.get_text_tokenizer()
    check_vocabulary(int(lm.text_card), int(tokenizer.vocab_size()))
    lm.eval()
    mimi.eval()
    return MoshiModels(lm=lm, mimi=mimi, mimi_ref=copy.deepcopy(mimi),
                       tokenizer=tokenizer, device=device,
                       system_codebooks=system_codebooks)
