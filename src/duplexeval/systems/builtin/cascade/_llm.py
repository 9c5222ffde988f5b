"""Replies from an OpenAI-compatible chat-completions endpoint (standard library HTTP only).

``POST {base}/chat/completions`` with ``{"model", "messages", "temperature": 0,
"max_tokens"}``; ``base`` is the configured ``llm_url`` (``http://host:port/v1``; a URL that
already ends in ``/chat/completions`` is used as is).  ``messages`` are a system prompt asking
for a brief spoken reply in the dialogue's language, then the dialogue history: user turns as
their ASR text, assistant turns as what the system said (or, under teacher forcing, the
reference words it was forced with).  Any failure (connection, HTTP status, timeout, a reply
without text) raises :class:`~duplexeval.systems._base.SystemFailure`, so the sample is recorded
as failed instead of silently falling back.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from duplexeval.systems._base import SystemFailure

__all__ = ["SYSTEM_PROMPTS", "ChatEndpoint", "chat_messages"]

SYSTEM_PROMPTS: dict[str, str] = {
    "en": ("You are a voice assistant in a spoken conversation. Reply in English with one or "
           "two short sentences, the way you would say them aloud: no lists, no markdown."),
    "ja": ("あなたは音声対話のアシスタントです。声に出して話すように、日本語で一、二文の短い返事を"
           "してください。箇条書きや記号は使わないでください。"),
}


def chat_messages(history: Sequence[dict[str, str]], language: str) -> list[dict[str, str]]:
    """The request's messages: the system prompt, then the non-empty history turns."""
    prompt = SYSTEM_PROMPTS.get(language, SYSTEM_PROMPTS["en"])
    return [{"role": "system", "content": prompt},
            *({"role": m["role"], "content": m["content"]} for m in history
              if m["content"].strip())]


def _clean(text: str) -> str:
    """Reply text made speakable: markdown emphasis and headers dropped, spaces collapsed."""
    text = re.sub(r"[*_#`]+", "", text)
    return re.sub(r"\s+", " ", text).strip()


class ChatEndpoint:
    """One OpenAI-compatible endpoint; ``timeout`` in seconds per request."""

    def __init__(self, url: str, model: str, api_key: str = "", timeout: float = 30.0,
                 max_tokens: int = 120) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_tokens = max_tokens

    def settings(self) -> dict[str, Any]:
        """What determines the reply besides the messages (the key is left out)."""
        return {"url": self.url, "model": self.model, "temperature": 0,
                "max_tokens": self.max_tokens}

    def reply(self, messages: list[dict[str, str]]) -> str:
        """The assistant's reply text to ``messages``."""
        body = {"model": self.model, "messages": messages, "temperature": 0,
                "max_tokens": self.max_tokens}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(),
                                         headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
            raise SystemFailure(f"LLM endpoint {self.url}: {exc}") from exc
        try:
            text = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise SystemFailure(f"LLM endpoint {self.url}: no reply text in "
                               f"{json.dumps(payload)[:200]}") from None
        cleaned = _clean(str(text or ""))
        if not cleaned:
            raise SystemFailure(f"LLM endpoint {self.url}: empty reply")
        return cleaned
