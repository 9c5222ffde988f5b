"""A loopback OpenAI Batch API for tests: ``POST /v1/files`` (multipart upload),
``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``GET /v1/files/{id}/content``, plus
``POST /v1/chat/completions`` for the direct requests that follow a batch.

Every batch line is answered ``{"score": 2, ...}`` unless its user message contains
``batch-fail``: that line gets status 500 in the output (and a direct request for it is answered
``{"score": 1, ...}``).  A batch reports ``in_progress`` for its first ``polls_before_done``
retrievals, then ``completed``.
"""

from __future__ import annotations

import json
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import ThreadingHTTPServer
from typing import Any

from loopback_http import JsonHandler, LoopbackServer, chat_completion

__all__ = ["FakeBatchApi"]


def _answer(body: dict[str, Any], score: int) -> dict[str, Any]:
    text = json.dumps({"score": score, "reason": "fake batch judgement"})
    return chat_completion(body, 0, text, usage={"prompt_tokens": 10, "completion_tokens": 5,
                                                 "total_tokens": 15})


class _Handler(JsonHandler):
    server: _Server

    def _read(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def do_POST(self) -> None:
        srv = self.server
        if self.path.endswith("/files"):
            raw = self._read()
            head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
            message = BytesParser(policy=HTTP).parsebytes(head + raw)
            part = next(p for p in message.iter_parts() if p.get_filename())
            with srv.lock:
                file_id = f"file-{len(srv.files)}"
                srv.files[file_id] = part.get_payload(decode=True).decode()
                srv.calls.append("upload")
            self.send_json(200, {"id": file_id, "object": "file", "bytes": len(raw),
                                 "created_at": 0, "filename": "requests.jsonl",
                                 "purpose": "batch", "status": "processed"})
        elif self.path.endswith("/batches"):
            body = json.loads(self._read())
            with srv.lock:
                batch_id = f"batch_{len(srv.batches)}"
                srv.batches[batch_id] = {"input": body["input_file_id"], "polls": 0}
                srv.calls.append("create")
            self.send_json(200, self._batch(batch_id, "validating"))
        elif self.path.endswith("/chat/completions"):
            body = json.loads(self._read())
            with srv.lock:
                srv.calls.append("direct")
            self.send_json(200, _answer(body, 1))
        else:
            self.send_json(404, {"error": {"message": "no such route"}})

    def do_GET(self) -> None:
        srv = self.server
        parts = self.path.strip("/").split("/")
        if parts[-2] == "batches":
            with srv.lock:
                batch = srv.batches[parts[-1]]
                batch["polls"] += 1
                srv.calls.append("retrieve")
                done = batch["polls"] > srv.polls_before_done
            if done and "output" not in batch:
                batch["output"] = self._run(batch["input"])
            self.send_json(200, self._batch(parts[-1], "completed" if done else "in_progress",
                                            batch.get("output")))
        elif parts[-1] == "content":
            data = srv.files[parts[-2]].encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def _run(self, input_id: str) -> str:
        srv = self.server
        out = []
        for line in srv.files[input_id].splitlines():
            request = json.loads(line)
            body = request["body"]
            if "batch-fail" in body["messages"][-1]["content"]:
                response = {"status_code": 500, "request_id": "r", "body": {"error": "boom"}}
            else:
                response = {"status_code": 200, "request_id": "r", "body": _answer(body, 2)}
            out.append(json.dumps({"id": "x", "custom_id": request["custom_id"],
                                   "response": response, "error": None}))
        with srv.lock:
            file_id = f"file-{len(srv.files)}"
            srv.files[file_id] = "\n".join(out) + "\n"
        return file_id

    @staticmethod
    def _batch(batch_id: str, status: str, output: str | None = None) -> dict[str, Any]:
        return {"id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
                "input_file_id": "file-0", "completion_window": "24h", "status": status,
                "created_at": 0, "output_file_id": output}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    files: dict[str, str]
    batches: dict[str, dict[str, Any]]
    calls: list[str]
    polls_before_done: int
    lock: threading.Lock


class FakeBatchApi(LoopbackServer):
    """The server, running while the context is open; ``calls`` lists what was asked, in
    order (``upload``, ``create``, ``retrieve``, ``direct``)."""

    def __init__(self, polls_before_done: int = 2) -> None:
        super().__init__(_Handler, _Server)
        s = self._server
        s.files, s.batches, s.calls = {}, {}, []  # type: ignore[attr-defined]
        s.polls_before_done = polls_before_done  # type: ignore[attr-defined]
        s.lock = threading.Lock()  # type: ignore[attr-defined]

    @property
    def calls(self) -> list[str]:
        return self._server.calls  # type: ignore[attr-defined,no-any-return]

    @property
    def uploaded(self) -> list[dict[str, Any]]:
        """The request lines of the first uploaded file."""
        files = self._server.files  # type: ignore[attr-defined]
        return [json.loads(x) for x in files["file-0"].splitlines() if x.strip()]
