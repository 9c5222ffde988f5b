"""A loopback OpenAI-compatible chat server for tests: ``POST /v1/chat/completions``.

It binds 127.0.0.1 on a free port, answers deterministically (a fixed sentence that quotes the
last user message) and records every request body.  Use as a context manager::

    with FakeOpenAI() as server:
        url = server.base_url          # http://127.0.0.1:PORT/v1
        ...
        server.requests                # the JSON bodies received, in order
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "fake_reply"]


def fake_reply(messages: list[dict[str, str]]) -> str:
    """The server's answer to ``messages``: it quotes the last user message."""
    last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    return f"Fake model here. You said: {last}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.server.requests.append(body)
        payload = {"id": f"chatcmpl-{len(self.server.requests)}", "object": "chat.completion",
                   "model": body.get("model", ""),
                   "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant",
                                            "content": fake_reply(body["messages"])}}]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    requests: list[dict[str, Any]]


class FakeOpenAI:
    """The server, running in a daemon thread while the context is open."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.requests = []
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._server.requests

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
