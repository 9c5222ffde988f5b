"""Loading a PersonaPlex checkpoint with moshi 0.2.13's modules.

PersonaPlex's LM is moshi's ``LMModel`` with ``dep_q = n_q`` (16): its depformer predicts the
user's 8 codebooks after the system's 8; nothing else differs in the modules its weights
fill (text + 16 audio embeddings, the 32-layer transformer, the depformer with weights per
codebook), so moshi 0.2.13 builds it from PersonaPlex's configuration
(``personaplex_7b.json``: moshi 7B's with ``dep_q`` 16).  PersonaPlex's files keep each
attention layer's weights as one matrix with the steps' rows one after the other
(``in_proj_weight``, ``out_proj.weight``); moshi 0.2.13 keeps one matrix
per step (``in_projs.{i}``, ``out_projs.{i}``) and converts the old layout in a load hook;
:func:`split_attention` does that conversion first, so that :func:`expand_depformer` can
apply PersonaPlex's loading rule to weights trained with an 8-codebook depformer: per-codebook
modules (``gating``, ``linears``, ``depformer_in``, ``depformer_emb``, the attention steps) of
codebook ``i >= own`` missing from the file are those of ``i - own`` (PersonaPlex's loader
repeats the attention rows and copies the modules ``0..7`` to ``8..15``); the one without a
source (``depformer_emb[own - 1]``, which PersonaPlex's loader leaves unfilled) serves only
the user's codebooks, which this loop never samples (see
:class:`..moshi_inproc.stepper.LMStepper`), and is zeros.  Any other mismatch is an error
naming the keys (PersonaPlex's loader would skip them silently).  Not checked against the
released weights (none here): that their other names are moshi's is read from PersonaPlex's
module code, which names them as moshi 0.2.13 does.

The system's codebooks are ``n_q // 2`` (8); the Mimi codec runs with that many.  A voice
prompt named without a folder comes from the repository's ``voices.tgz`` (downloaded and
unpacked next to it in the Hugging Face cache on first use, as PersonaPlex's server does).
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import torch
from moshi.models import loaders

from duplexeval.systems.adapters.moshi_inproc._loading import MoshiModels, load_models
from duplexeval.systems.adapters.personaplex_inproc._settings import PersonaPlexSettings

__all__ = ["expand_depformer", "load_lm", "load_personaplex", "split_attention",
           "voice_prompt_path"]

_PER_CODEBOOK = ("gating", "linears", "depformer_in", "depformer_emb", "in_projs", "out_projs")


def _codebook_of(name: str) -> tuple[str, int, str, str] | None:
    """(group, index, prefix, rest) of a per-codebook module's key, or ``None``."""
    for group in _PER_CODEBOOK:
        marker = f"{group}."
        at = name.find(marker)
        if at < 0:
            continue
        index, _, rest = name[at + len(marker):].partition(".")
        if index.isdigit():
            return group, int(index), name[:at] + marker, rest
    return None


def _fill(name: str, own: int, available: dict[str, Any], shape: Any) -> torch.Tensor | None:
    """A missing per-codebook weight: codebook ``i``'s is ``i - own``'s; one with no such
    source serves only the user's codebooks (``depformer_emb[own - 1]`` embeds the system's
    last code to predict the user's first), which the loop never runs: zeros."""
    found = _codebook_of(name)
    if found is None:
        return None
    group, index, prefix, rest = found
    codebook = index + 1 if group == "depformer_emb" else index
    if codebook < own:
        return None
    source = f"{prefix}{index - own}.{rest}"
    if index >= own and source in available:
        return available[source]
    return torch.zeros(tuple(shape))


_CONCATENATED = {"in_proj_weight": "in_projs", "in_proj.weight": "in_projs",
                 "out_proj.weight": "out_projs"}


def split_attention(state: dict[str, torch.Tensor],
                    model_state: dict[str, Any]) -> dict[str, torch.Tensor]:
    """PersonaPlex's attention weights (one matrix per layer, the steps' rows one after the
    other: ``in_proj_weight``, ``out_proj.weight``) as moshi 0.2.13's per-step matrices
    (``in_projs.{i}.weight``, ``out_projs.{i}.weight``), as many steps as the file has."""
    out = {}
    for name, tensor in state.items():
        prefix, suffix = next(((name[:-len(k)], v) for k, v in _CONCATENATED.items()
                               if name.endswith(k)), (None, None))
        first = f"{prefix}{suffix}.0.weight"
        if prefix is None or first not in model_state:
            out[name] = tensor
            continue
        rows = model_state[first].shape[0]
        if tensor.shape[0] % rows or tensor.shape[1:] != model_state[first].shape[1:]:
            raise ValueError(f"attention weight {name}: {tuple(tensor.shape)} in the file, "
                             f"steps of {tuple(model_state[first].shape)} in the model")
        for i, part in enumerate(tensor.split(rows)):
            out[f"{prefix}{suffix}.{i}.weight"] = part
    return out


def expand_depformer(state: dict[str, torch.Tensor], model_state: dict[str, Any],
                     own: int) -> dict[str, torch.Tensor]:
    """``state`` (a file's weights, either attention layout) completed for a model whose
    depformer predicts more codebooks (see the module doc); raises ``ValueError`` naming what
    cannot be matched."""
    out = split_attention(state, model_state)
    missing = []
    for name, target in model_state.items():
        if name in out:
            continue
        filled = _fill(name, own, out, target.shape)
        if filled is None:
            missing.append(name)
        else:
            out[name] = filled
    unexpected = sorted(set(out) - set(model_state))
    if missing or unexpected:
        raise ValueError(f"the weights do not fit PersonaPlex's LM: missing "
                         f"{missing[:4]}{'...' if len(missing) > 4 else ''}, unexpected "
                         f"{unexpected[:4]}{'...' if len(unexpected) > 4 else ''}")
    return out


def load_lm(weights: Path | str, lm_config: dict[str, Any], device: torch.device,
            dtype: torch.dtype) -> Any:
    """PersonaPlex's LM from a weights file (safetensors) and a moshi LM configuration."""
    from safetensors.torch import load_file

    lm = loaders.get_moshi_lm(None, lm_kwargs=lm_config, device="meta", dtype=dtype)
    own = int(lm_config["n_q"]) // 2
    state = load_file(str(weights), device="cpu")
    state = expand_depformer(state, lm.state_dict(), own)
    state = {k: v.to(device=device, dtype=dtype if v.dtype.is_floating_point else v.dtype)
             for k, v in state.items()}
    lm.load_state_dict(state, assign=True)
    return lm.to(device)


def _load_lm_of(info: Any, device: torch.device, dtype: torch.dtype) -> Any:
    return load_lm(info.moshi_weights, info.lm_config, device, dtype)


def load_personaplex(settings: PersonaPlexSettings) -> MoshiModels:
    """The checkpoint of ``settings`` (its LM, two Mimis, its tokenizer) on its device."""
    models = load_models(settings.moshi, load_lm=_load_lm_of,
                         system_codebooks=_own_codebooks(settings))
    if models.lm.dep_q < models.dep_q or models.lm.n_q - models.dep_q <= 0:
        raise ValueError(f"an LM with n_q {models.lm.n_q}, dep_q {models.lm.dep_q} "
                         "is not PersonaPlex-shaped")
    return models


def _own_codebooks(settings: PersonaPlexSettings) -> int:
    config = settings.moshi.config
    if config is None:
        return 8
    return int(json.loads(Path(config.removeprefix("file://")).read_text("utf-8"))["n_q"]) // 2


def voice_prompt_path(name: str, hf_repo: str) -> Path:
    """A local voice prompt, or one from ``hf_repo``'s ``voices.tgz`` by file name."""
    if "/" in name or "\\" in name:
        return Path(name)
    from huggingface_hub import hf_hub_download

    archive = Path(hf_hub_download(hf_repo, "voices.tgz"))
    folder = archive.parent / "voices"
    if not folder.is_dir():
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(path=archive.parent, filter="data")
    path = folder / name
    if not path.is_file():
        raise ValueError(f"voice prompt {name!r} is not in {hf_repo}'s voices.tgz")
    return path
