"""A loopback OpenAI-compatible judge for tests: ``POST /v1/chat/completions`` on 127.0.0.1,
a free port, in a daemon thread, answering deterministically from the prompt.

The last user message may carry one line ``fake: TOKEN TOKEN ...`` that says how to answer:

* ``score=N``: answer ``{"score": N, "reason": ...}`` (default ``score=1``);
* ``raw=TEXT``: answer ``TEXT`` as it is (the rest of the line, spaces included; give last);
* ``empty``: answer with no message content (``null``);
* ``fence``: wrap the JSON answer in a json fence with prose around it;
* ``fail=CODExK``: the first K requests with this prompt get HTTP CODE (K may be ``inf``);
* ``slow=SxK``: the first K requests with this prompt wait S seconds before answering;
* ``delay=S``: every request waits S seconds (to overlap requests);
* ``after=S``: a ``fail`` answer carries ``Retry-After: S`` (seconds);
* ``drop=K``: the first K requests are answered by closing the connection, nothing sent;
* ``cut=K``: the first K requests get a 200 whose body stops halfway (the connection closes);
* ``garbage=K``: the first K requests get a 200 whose body is not JSON;
* ``echo``: HTTP 401 whose error message quotes the request's ``Authorization`` header (as
  services that name the key they refuse do).

These are the faults of ``tests/test_fault_injection.py``.

``FakeJudge(refuse_json_mode=True)`` answers HTTP 400 naming ``response_format`` to any request
that carries that field (a server without JSON mode that checks its fields).

Without a ``fake:`` line, the server's ``policy`` (if any) gives the tokens from the messages.

It records every request body, the ``Authorization`` headers, the number of requests per
prompt and the largest number of requests it was handling at once.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from loopback_http import JsonHandler, LoopbackServer, chat_completion

__all__ = ["FakeJudge"]


def directives(messages: list[dict[str, str]]) -> dict[str, str]:
    """The ``fake:`` tokens of the last user message, as a dict."""
    last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    line = next((ln for ln in last.splitlines() if ln.startswith("fake:")), "fake:")
    out: dict[str, str] = {}
    rest = line[len("fake:"):].strip()
    while rest:
        token, _, rest = rest.partition(" ")
        name, _, value = token.partition("=")
        if name == "raw":
            out["raw"] = " ".join([value, rest]).strip()
            break
        out[name] = value
    return out


def _times(spec: str) -> tuple[str, float]:
    value, _, count = spec.partition("x")
    return value, math.inf if count == "inf" else float(count or "inf")


class _Handler(JsonHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.read_json()
        srv = self.server
        with srv.lock:
            srv.requests.append(body)
            srv.auth.append(self.headers.get("Authorization", ""))
            prompt = json.dumps(body["messages"], sort_keys=True)
            srv.per_prompt[prompt] += 1
            nth = srv.per_prompt[prompt]
            srv.active += 1
            srv.max_active = max(srv.max_active, srv.active)
        self._active = True
        try:
            self._answer(body, directives(body["messages"]), nth)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)
        finally:
            self._done()

    def send_response(self, code: int, message: str | None = None) -> None:
        """A request stops counting as active once its answer starts: the client may read it
        and send its next request before this handler's thread returns (the race that made
        ``max_active`` 2 under ``max_concurrency=1`` on a loaded machine)."""
        self._done()
        super().send_response(code, message)

    def _done(self) -> None:
        if getattr(self, "_active", False):
            self._active = False
            with self.server.lock:
                self.server.active -= 1

    def _answer(self, body: dict[str, Any], how: dict[str, str], nth: int) -> None:
        if self.server.refuse_json_mode and "response_format" in body:
            self.send_json(400, {"error": {"message": "unknown field: response_format",
                                           "type": "invalid_request_error", "code": 400}})
            return
        if not how and self.server.policy is not None:
            how = self.server.policy(body["messages"])
        time.sleep(float(how.get("delay", 0)))
        if "echo" in how:
            key = self.headers.get("Authorization", "")
            self.send_json(401, {"error": {"message": f"Incorrect API key provided: {key}",
                                           "type": "invalid_request_error", "code": 401}})
            return
        if "slow" in how:
            seconds, count = _times(how["slow"])
            if nth <= count:
                time.sleep(float(seconds))
        if "fail" in how:
            code, count = _times(how["fail"])
            if nth <= count:
                headers = {"Retry-After": how["after"]} if "after" in how else {}
                self.send_json(int(code), {"error": {"message": f"fake failure {code}",
                                                 "type": "fake", "code": code}}, headers)
                return
        if nth <= _times("x" + how.get("drop", "0"))[1]:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if nth <= _times("x" + how.get("cut", "0"))[1]:
            data = json.dumps(self._completion(body, how)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if nth <= _times("x" + how.get("garbage", "0"))[1]:
            data = b"\x00<html>upstream hiccup"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_json(200, self._completion(body, how))

    def _completion(self, body: dict[str, Any], how: dict[str, str]) -> dict[str, Any]:
        if "raw" in how:
            text = how["raw"]
        else:
            text = json.dumps({"score": int(how.get("score", 1)), "reason": "fake judgement"})
            if "fence" in how:
                text = f"Here is my verdict.\n```json\n{text}\n```\nThanks."
        prompt_tokens = sum(len(m["content"].split()) for m in body["messages"])
        return chat_completion(body, len(self.server.requests),
                               None if "empty" in how else text,
                               usage={"prompt_tokens": prompt_tokens,
                                      "completion_tokens": len(text.split()),
                                      "total_tokens": prompt_tokens + len(text.split())})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[dict[str, Any]]
    auth: list[str]
    per_prompt: Counter[str]
    active: int
    max_active: int
    lock: threading.Lock
    policy: Policy | None
    refuse_json_mode: bool


Policy = Callable[[list[dict[str, str]]], dict[str, str]]
"""Directives for a prompt without a ``fake:`` line, computed from its messages."""


class FakeJudge(LoopbackServer):
    """The server, running while the context is open.  ``policy`` answers prompts that carry
    no ``fake:`` line (e.g. a score computed from the rendered texts)."""

    def __init__(self, policy: Policy | None = None, *, refuse_json_mode: bool = False) -> None:
        super().__init__(_Handler, _Server)
        s = self._server
        s.policy = policy  # type: ignore[attr-defined]
        s.refuse_json_mode = refuse_json_mode  # type: ignore[attr-defined]
        s.auth, s.per_prompt = [], Counter()  # type: ignore[attr-defined]
        s.active = s.max_active = 0  # type: ignore[attr-defined]
        s.lock = threading.Lock()  # type: ignore[attr-defined]

    @property
    def auth(self) -> list[str]:
        return self._server.auth

    @property
    def max_active(self) -> int:
        return self._server.max_active

    def __enter__(self) -> FakeJudge:
        super().__enter__()
        return self
