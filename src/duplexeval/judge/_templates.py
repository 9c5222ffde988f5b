"""Versioned judge prompts shipped as package data (``judge/prompt_texts/*.toml``).

One TOML file per prompt, named after its id (``m3.relevance.toml``)::

    id = "m3.relevance"
    version = 1                 # bump on any change of wording or scale
    score_min = 0               # the answer's integer score range, both ends inclusive
    score_max = 2
    fields = ["user", "response"]
    answer = "score"            # "score": {"score", "reason"}; "json": any JSON object
    score_step = 1              # optional: 0.5 allows half points (MTR's quality)
    scale = "normalised"        # optional: "own" keeps the prompt's scale in the aggregates

    [text.en]
    system = "..."
    user = "... $user ... $response ..."

    [text.ja]                   # where the judged text is Japanese
    system = "..."
    user = "..."

Conventions:

* Placeholders are ``string.Template`` ones (``$name`` or ``${name}``), so JSON examples in the
  wording need no escaping; ``$$`` is a literal dollar.  Every language's texts must use
  exactly the declared ``fields`` (checked when the prompt is loaded).
* :meth:`PromptTemplate.render` picks the text of the requested language and falls back to
  English when the prompt has none for it; the language used is part of the rendered
  messages, hence of the cache key.
"""

from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from duplexeval.judge._records import JudgeItem, JudgePrompt

__all__ = ["PromptTemplate", "load_prompt", "prompt_ids"]

FALLBACK_LANGUAGE = "en"
_PACKAGE = f"{__package__}.prompt_texts"


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt's identity, its answer format and its texts per language."""

    prompt: JudgePrompt
    fields: frozenset[str]
    texts: dict[str, tuple[str, str]]
    """language -> (system text, user text)."""
    answer: Literal["score", "json"] = "score"

    @property
    def languages(self) -> list[str]:
        """The languages the prompt has a text for, sorted."""
        return sorted(self.texts)

    def language_for(self, language: str) -> str:
        """``language`` if the prompt has a text for it, else English."""
        return language if language in self.texts else FALLBACK_LANGUAGE

    def render(self, item_id: str, language: str, **values: str) -> JudgeItem:
        """The item to judge: the system and user messages with ``values`` filled in
        (exactly the declared fields; a missing or unknown one is a ``KeyError``)."""
        if set(values) != self.fields:
            missing, unknown = self.fields - set(values), set(values) - self.fields
            raise KeyError(f"prompt {self.prompt.prompt_id}: missing {sorted(missing)}, "
                           f"unknown {sorted(unknown)}")
        system, user = self.texts[self.language_for(language)]
        messages = (("system", string.Template(system).substitute(values)),
                    ("user", string.Template(user).substitute(values)))
        return JudgeItem(item_id=item_id, prompt=self.prompt, messages=messages)


def _placeholders(text: str) -> set[str]:
    names = set()
    for match in string.Template.pattern.finditer(text):
        name = match.group("named") or match.group("braced")
        if name:
            names.add(name)
        elif match.group("invalid") is not None:
            raise ValueError(f"invalid placeholder at offset {match.start()}")
    return names


def _parse(name: str, text: str) -> PromptTemplate:
    data = tomllib.loads(text)
    answer = data.get("answer", "score")
    if answer not in ("score", "json"):
        raise ValueError(f"prompt {name}: answer must be 'score' or 'json'")
    prompt = JudgePrompt(prompt_id=data["id"], version=int(data["version"]),
                         score_min=int(data.get("score_min", 0)),
                         score_max=int(data.get("score_max", 0)), answer=answer,
                         score_step=float(data.get("score_step", 1.0)),
                         scale=str(data.get("scale", "normalised")))
    if prompt.prompt_id != name:
        raise ValueError(f"prompt file {name}.toml declares id {prompt.prompt_id!r}")
    fields = frozenset(data.get("fields", []))
    texts: dict[str, tuple[str, str]] = {}
    for language, parts in data["text"].items():
        system, user = parts["system"], parts["user"]
        used = _placeholders(system) | _placeholders(user)
        if used != fields:
            raise ValueError(f"prompt {name} [{language}] uses {sorted(used)}, declares "
                             f"{sorted(fields)}")
        texts[language] = (system, user)
    if FALLBACK_LANGUAGE not in texts:
        raise ValueError(f"prompt {name} has no English text")
    return PromptTemplate(prompt=prompt, fields=fields, texts=texts, answer=answer)


def prompt_ids() -> list[str]:
    """The ids of every shipped prompt, sorted."""
    return sorted(f.name.removesuffix(".toml") for f in resources.files(_PACKAGE).iterdir()
                  if f.name.endswith(".toml"))


@cache
def load_prompt(prompt_id: str) -> PromptTemplate:
    """The shipped prompt ``prompt_id`` (validated; a packaging error raises ``ValueError``)."""
    file = resources.files(_PACKAGE) / f"{prompt_id}.toml"
    if not file.is_file():
        raise KeyError(f"no prompt {prompt_id!r} (shipped: {', '.join(prompt_ids())})")
    return _parse(prompt_id, file.read_text(encoding="utf-8"))
