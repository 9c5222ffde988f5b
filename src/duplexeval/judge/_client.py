"""One OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp's server)
through the official ``openai`` package.

Conventions:

* The base URL (``http://host:port/v1``) and the model are parameters.  The API key comes from
  ``DUPLEXEVAL_JUDGE_API_KEY``, falling back to ``OPENAI_API_KEY``; without either, the
  placeholder :data:`NO_KEY` is sent (local servers ignore it; a server that checks keys will
  refuse the call, and that refusal is recorded as an unscored item).  The key is held only in
  memory: ``repr``/``str`` name where it came from, never its value, and it is scrubbed from
  error messages.
* The ``openai`` client's own retries are 0: :mod:`.retry` does them.  ``timeout`` is seconds
  per request.
* :meth:`JudgeClient.complete` makes one request and returns the answer text with the usage
  the server reported (0 tokens when it reported none).
* JSON mode: every prompt's answer is one JSON object (:mod:`.parse`), so each request asks for
  ``response_format={"type": "json_object"}`` (OpenAI, vLLM, llama.cpp's server constrain the
  output to JSON then; servers that do not know the field ignore it).  A server that refuses
  the field (HTTP 400 naming ``response_format``) is asked once more without it, and the
  client sends it no more (:attr:`JudgeClient.json_mode`); that one refusal is the only case
  where ``complete`` makes two requests.  The field is not part of the cache key: it
  constrains the answer's form, which :mod:`.parse` checks either way.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from duplexeval.judge._records import JudgeItem, Sampling
from duplexeval.judge._retry import MalformedResponse

if TYPE_CHECKING:
    import openai

__all__ = ["JSON_MODE", "KEY_VARIABLES", "NO_KEY", "Completion", "JudgeClient",
           "resolve_api_key"]

KEY_VARIABLES = ("DUPLEXEVAL_JUDGE_API_KEY", "OPENAI_API_KEY")
"""Environment variables read for the key, first found wins."""

JSON_MODE: dict[str, Any] = {"response_format": {"type": "json_object"}}
"""The request field of JSON mode (sent while :attr:`JudgeClient.json_mode` is true)."""

NO_KEY = "no-key-set"
"""Sent as the key when no variable is set (the ``openai`` package requires one)."""


def resolve_api_key() -> tuple[str | None, str]:
    """The key and the name of the variable it came from (``(None, "none")`` without one)."""
    for name in KEY_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value, name
    return None, "none"


@dataclass(frozen=True)
class Completion:
    """One answer: its text and the usage reported."""

    text: str
    prompt_tokens: int
    completion_tokens: int


class JudgeClient:
    """A judge model behind one endpoint."""

    def __init__(self, base_url: str, model: str, *, timeout: float = 60.0,
                 sampling: Sampling = Sampling(), json_mode: bool = True) -> None:
        key, self.key_source = resolve_api_key()
        self.json_mode = json_mode
        """Whether requests ask for JSON mode: true unless disabled or refused by the server."""
        self._key = key
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.sampling = sampling
        import openai  # here, not at module level: 0.35 s that only a judged command needs

        self._openai = openai.OpenAI(base_url=base_url, api_key=key or NO_KEY,
                                     timeout=timeout, max_retries=0)

    def __repr__(self) -> str:
        return (f"JudgeClient(base_url={self.base_url!r}, model={self.model!r}, "
                f"timeout={self.timeout}, sampling={self.sampling!r}, "
                f"api_key_from={self.key_source!r})")

    __str__ = __repr__

    @property
    def openai(self) -> openai.OpenAI:
        """The underlying ``openai`` client (the Batch API mode uses its files and batches)."""
        return self._openai

    def scrub(self, text: str) -> str:
        """``text`` with the key, if any, replaced by ``***``."""
        return text.replace(self._key, "***") if self._key else text

    def complete(self, item: JudgeItem) -> Completion:
        """One request for ``item``; raises the ``openai`` errors,
        :class:`~.retry.MalformedResponse` for a body that is not the API's JSON, or
        ``ValueError`` for a response without an answer."""
        import openai

        messages: Any = [{"role": role, "content": content} for role, content in item.messages]
        sampling: dict[str, Any] = dict(self.sampling.as_request())
        try:
            if self.json_mode:
                try:
                    response = self._openai.chat.completions.create(
                        model=self.model, messages=messages, **sampling, **JSON_MODE)
                except openai.BadRequestError as error:
                    if "response_format" not in str(error):
                        raise
                    self.json_mode = False
            if not self.json_mode:
                response = self._openai.chat.completions.create(model=self.model,
                                                                messages=messages, **sampling)
        except (json.JSONDecodeError, UnicodeDecodeError,
                openai.APIResponseValidationError) as exc:
            raise MalformedResponse(f"{type(exc).__name__}: {exc}") from exc
        if not response.choices or response.choices[0].message.content is None:
            raise ValueError("the response has no answer text")
        usage = response.usage
        return Completion(text=response.choices[0].message.content,
                          prompt_tokens=usage.prompt_tokens if usage else 0,
                          completion_tokens=usage.completion_tokens if usage else 0)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._openai.close()
