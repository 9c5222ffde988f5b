"""The ``moshi`` system's options (``--system-arg KEY=VALUE``), parsed without torch or moshi.

Checkpoint (each file a local path or ``hf://OWNER/REPO/FILE``, as moshi's loader reads them;
an omitted file is the one ``hf_repo``'s config names; hub downloads happen only on the machine
of a user who names a repository or an ``hf://`` file):

* ``hf_repo`` (default ``kyutai/moshiko-pytorch-bf16``): the checkpoint repository (Moshi,
  Moshika, J-Moshi ``nu-dialogue/j-moshi``, LLM-jp-Moshi, ...).
* ``moshi_weight``, ``mimi_weight``, ``tokenizer``: the LM weights, the Mimi codec weights, the
  SentencePiece model of the checkpoint (text forcing and text output use it).
* ``config``: the LM ``config.json`` (moshi's format: LM keyword arguments plus file names);
  without it the repository's, or moshi's built-in 7B configuration.
* ``mimi_config``: a Mimi configuration JSON (``seanet``, ``quantizer``, ``transformer``,
  ``sample_rate``, ``channels``, ``frame_rate``); default: moshi's Mimi.
* ``random_weights=1``: do not load weights; the LM and Mimi are initialised from
  ``weights_seed`` (tests and speed measurements; needs a local ``tokenizer``, and takes no
  ``moshi_weight`` or ``mimi_weight``).

Running: ``device`` (default ``cuda`` when available, else ``cpu``), ``dtype`` (``bfloat16``,
``float16`` or ``float32``; default ``bfloat16`` on CUDA, ``float32`` on CPU), ``compile``
(0; 1 lets moshi ``torch.compile`` its kernels, worth it only on a GPU), ``batch_codec``
(0; 1 runs the Mimi of batched forks as one batch: the same tokens, the audio within
rounding of single forks, fewer kernel launches on a GPU).

Sampling (moshi's defaults): ``use_sampling`` (1; 0 = greedy), ``temp`` (0.8, audio),
``temp_text`` (0.7), ``top_k`` (250, audio), ``top_k_text`` (25).  Classifier-free guidance
(``cfg_coef``) is not offered: it needs a conditioned checkpoint, and Moshi's have no
conditioner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from duplexeval.errors import number_problem

__all__ = ["ARG_NAMES", "DEFAULT_REPO", "MoshiSettings", "parse_settings"]

DEFAULT_REPO = "kyutai/moshiko-pytorch-bf16"
DTYPES = ("bfloat16", "float16", "float32")
ARG_NAMES = ("hf_repo", "moshi_weight", "mimi_weight", "tokenizer", "config", "mimi_config",
             "random_weights", "weights_seed", "device", "dtype", "use_sampling", "temp",
             "temp_text", "top_k", "top_k_text", "compile", "batch_codec")


@dataclass(frozen=True)
class MoshiSettings:
    """Where the checkpoint comes from, where it runs, and how it samples."""

    hf_repo: str = DEFAULT_REPO
    moshi_weight: str | None = None
    mimi_weight: str | None = None
    tokenizer: str | None = None
    config: str | None = None
    mimi_config: str | None = None
    random_weights: bool = False
    weights_seed: int = 0
    device: str | None = None
    """``None``: CUDA when available, else CPU (decided when the model loads)."""
    dtype: str | None = None
    """``None``: ``bfloat16`` on CUDA, ``float32`` on CPU."""
    use_sampling: bool = True
    temp: float = 0.8
    temp_text: float = 0.7
    top_k: int = 250
    top_k_text: int = 25
    compile: bool = False
    """Let moshi ``torch.compile`` its kernels (GPU; compiling takes a while per shape)."""
    batch_codec: bool = False
    """Run the Mimi of batched forks as one batch (GPU throughput; audio within rounding)."""

    def to_json(self) -> dict[str, object]:
        """Plain data, as recorded in the run config (paths and names only)."""
        return dict(self.__dict__)


def _flag(args: Mapping[str, str], name: str, default: bool) -> bool:
    value = args.get(name)
    if value is None:
        return default
    if value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if value.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"system argument {name} must be 0 or 1, got {value!r}")


def _number(args: Mapping[str, str], name: str, default: float, kind: type) -> float:
    value = args.get(name)
    if value is None:
        return default
    try:
        number = kind(value)
    except ValueError:
        raise ValueError(f"system argument {name} must be a number, got {value!r}") from None
    problem = number_problem(number)  # NaN passes a plain "< 0"
    if problem is not None:
        raise ValueError(f"system argument {name} {problem}, got {value!r}")
    if number < 0:
        raise ValueError(f"system argument {name} must be >= 0, got {value!r}")
    return number


def parse_settings(args: Mapping[str, str]) -> MoshiSettings:
    """Settings from ``--system-arg`` strings; a bad value raises ``ValueError`` naming it."""
    dtype = args.get("dtype")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"system argument dtype must be one of {', '.join(DTYPES)}, "
                         f"got {dtype!r}")
    random_weights = _flag(args, "random_weights", False)
    if random_weights and not args.get("tokenizer"):
        raise ValueError("random_weights=1 needs tokenizer=PATH (a SentencePiece model)")
    for name in ("moshi_weight", "mimi_weight"):
        if random_weights and args.get(name):
            raise ValueError(f"system argument {name} is not used with random_weights=1")
    return MoshiSettings(
        hf_repo=args.get("hf_repo") or DEFAULT_REPO,
        moshi_weight=args.get("moshi_weight") or None,
        mimi_weight=args.get("mimi_weight") or None,
        tokenizer=args.get("tokenizer") or None,
        config=args.get("config") or None,
        mimi_config=args.get("mimi_config") or None,
        random_weights=random_weights,
        weights_seed=int(_number(args, "weights_seed", 0, int)),
        device=args.get("device") or None,
        dtype=dtype,
        use_sampling=_flag(args, "use_sampling", True),
        temp=_number(args, "temp", 0.8, float),
        temp_text=_number(args, "temp_text", 0.7, float),
        top_k=int(_number(args, "top_k", 250, int)),
        top_k_text=int(_number(args, "top_k_text", 25, int)),
        compile=_flag(args, "compile", False),
        batch_codec=_flag(args, "batch_codec", False),
    )
