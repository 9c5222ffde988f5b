"""A loopback OpenAI-compatible chat server for tests: ``POST /v1/chat/completions``.

It binds 127.0.0.1 on a free port, answers deterministically (a fixed sentence that quotes the
last user message) and records every request body.  Use as a context manager::

    with FakeOpenAI() as server:
        url = server.base_url          # http://127.0.0.1:PORT/v1
        ...
        server.requests                # the JSON bodies received, in order
"""

from __future__ import annotations

from loopback_http import JsonHandler, LoopbackServer, chat_completion

__all__ = ["FakeOpenAI", "fake_reply"]


def fake_reply(messages: list[dict[str, str]]) -> str:
    """The server's answer to ``messages``: it quotes the last user message."""
    last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    return f"Fake model here. You said: {last}"


class _Handler(JsonHandler):
    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_error(404)
            return
        body = self.read_json()
        requests = self.server.requests  # type: ignore[attr-defined]
        requests.append(body)
        self.send_json(200, chat_completion(body, len(requests), fake_reply(body["messages"])))


class FakeOpenAI(LoopbackServer):
    """The server, running in a daemon thread while the context is open."""

    def __init__(self) -> None:
        super().__init__(_Handler)

    def __enter__(self) -> FakeOpenAI:
        super().__enter__()
        return self
