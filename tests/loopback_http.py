"""What the loopback OpenAI-compatible fakes share: a JSON handler, the chat-completion body,
and a server on 127.0.0.1 (a free port) running in a daemon thread while a context is open."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["JsonHandler", "LoopbackServer", "chat_completion"]


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet handler that answers JSON."""

    def send_json(self, code: int, payload: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_json(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def log_message(self, format: str, *args: Any) -> None:
        pass


def chat_completion(body: dict[str, Any], number: int, content: str | None,
                    **extra: Any) -> dict[str, Any]:
    """An OpenAI chat-completion response to request ``body`` (the ``number``-th) saying
    ``content``; ``extra`` top-level fields (e.g. ``usage``) are added."""
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0,
            "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}], **extra}


class LoopbackServer:
    """A :class:`ThreadingHTTPServer` of ``handler`` on 127.0.0.1 while the context is open;
    ``server.requests`` collects what the handler records."""

    def __init__(self, handler: type[BaseHTTPRequestHandler],
                 server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer) -> None:
        self._server = server_class(("127.0.0.1", 0), handler)
        self._server.requests = []  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._server.requests  # type: ignore[attr-defined,no-any-return]

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
