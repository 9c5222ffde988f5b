"""The ``personaplex`` system's options, parsed without torch or moshi.

Every option of the ``moshi`` system (:mod:`..moshi_inproc.settings`: checkpoint files,
``random_weights``, device, dtype, sampling, ``compile``, ``batch_codec``) with PersonaPlex's
defaults: ``hf_repo`` ``nvidia/personaplex-7b-v1`` and, without ``config``, PersonaPlex's LM
(moshi 7B with a depformer over all 16 audio codebooks, ``personaplex_7b.json``).  And:

* ``text_prompt``: the persona, fed in system tags (``<system> TEXT <system>``, as
  PersonaPlex's server wraps it; a text already in tags is kept).  Default: by the dialogue's
  domain as M3's wrapper does: ``chat`` -> :data:`CHAT_PROMPT`, any other -> PersonaPlex's own
  default :data:`ASSISTANT_PROMPT`.  ``text_prompt=none``: no text-prompt phase.
* ``voice_prompt``: a ``.pt`` of cached prompt embeddings (PersonaPlex's voices: ``NATF2.pt``,
  ...) or an audio file (wav, flac) encoded with Mimi; a bare file name is looked up in the
  checkpoint repository's ``voices.tgz`` (downloaded on the user's machine, as PersonaPlex's
  server does), a path is read as it is.  Default ``NATF2.pt`` (M3's), or ``none`` with
  ``random_weights=1``; ``none``: no voice-prompt phase.
* ``output_delay`` (1): the frames between a user frame and the system frame returned with it.
  PersonaPlex's ``LMGen`` returns the model's frame ``t`` one call after the user's frame ``t``
  (1, its server's and offline script's timing); 0 returns it in the same call, on the model's
  own time axis, as the ``moshi`` system does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from duplexeval.systems.adapters.moshi_inproc._settings import ARG_NAMES as MOSHI_ARG_NAMES
from duplexeval.systems.adapters.moshi_inproc._settings import MoshiSettings, parse_settings

__all__ = ["ARG_NAMES", "ASSISTANT_PROMPT", "CHAT_PROMPT", "DEFAULT_REPO", "DEFAULT_VOICE",
           "PersonaPlexSettings", "parse_personaplex", "text_prompt_for", "wrap_system_tags"]

DEFAULT_REPO = "nvidia/personaplex-7b-v1"
DEFAULT_VOICE = "NATF2.pt"
ASSISTANT_PROMPT = ("You are a wise and friendly teacher. Answer questions or provide advice "
                    "in a clear and engaging way.")
"""PersonaPlex's default text prompt (``moshi.offline``), M3's for the assistant (QA) domain."""
CHAT_PROMPT = "You enjoy having a good conversation."
"""M3's text prompt for the chat domain."""
ARG_NAMES = (*MOSHI_ARG_NAMES, "text_prompt", "voice_prompt", "output_delay")
BUILTIN_CONFIG = Path(__file__).with_name("personaplex_7b.json")
VOICE_SUFFIXES = (".pt", ".wav", ".flac", ".mp3", ".ogg")


@dataclass(frozen=True)
class PersonaPlexSettings:
    """The checkpoint and sampling (``moshi``), the prompts and the output timing."""

    moshi: MoshiSettings
    text_prompt: str | None
    """``None``: by the dialogue's domain; ``""``: no text prompt."""
    voice_prompt: str | None
    """A path or a name in the repository's voices; ``None``: no voice prompt."""
    output_delay: int = 1

    def to_json(self) -> dict[str, object]:
        return {**self.moshi.to_json(), "text_prompt": self.text_prompt,
                "voice_prompt": self.voice_prompt, "output_delay": self.output_delay}


def wrap_system_tags(text: str) -> str:
    """``<system> TEXT <system>`` unless the text already starts and ends with the tag."""
    cleaned = text.strip()
    if cleaned.startswith("<system>") and cleaned.endswith("<system>"):
        return cleaned
    return f"<system> {cleaned} <system>"


def text_prompt_for(settings: PersonaPlexSettings, domain: str | None) -> str:
    """The text prompt of a session ("" for none), before the system tags."""
    if settings.text_prompt is not None:
        return settings.text_prompt
    return CHAT_PROMPT if domain == "chat" else ASSISTANT_PROMPT


def _voice(value: str | None, random_weights: bool) -> str | None:
    if value is None:
        return None if random_weights else DEFAULT_VOICE
    if value.strip().lower() in ("", "none"):
        return None
    if not value.lower().endswith(VOICE_SUFFIXES):
        raise ValueError(f"system argument voice_prompt must be a .pt of prompt embeddings or "
                         f"an audio file ({', '.join(VOICE_SUFFIXES)}), got {value!r}")
    is_path = "/" in value or "\\" in value
    if is_path and not Path(value).is_file():
        raise ValueError(f"system argument voice_prompt: no such file {value!r}")
    return value


def parse_personaplex(args: Mapping[str, str]) -> PersonaPlexSettings:
    """Settings from ``--system-arg`` strings; a bad value raises ``ValueError`` naming it."""
    moshi_args = {k: v for k, v in args.items() if k in MOSHI_ARG_NAMES}
    moshi_args.setdefault("hf_repo", DEFAULT_REPO)
    random_weights = moshi_args.get("random_weights", "0").strip().lower() in (
        "1", "true", "yes", "on")
    if not random_weights and not moshi_args.get("config"):
        moshi_args["config"] = str(BUILTIN_CONFIG)
    moshi = parse_settings(moshi_args)
    delay = args.get("output_delay", "1").strip()
    if delay not in ("0", "1"):
        raise ValueError(f"system argument output_delay must be 0 or 1, got {delay!r}")
    text = args.get("text_prompt")
    if text is not None and text.strip().lower() == "none":
        text = ""
    return PersonaPlexSettings(moshi=moshi, text_prompt=text,
                               voice_prompt=_voice(args.get("voice_prompt"), random_weights),
                               output_delay=int(delay))
