"""A loopback Freeze-Omni demo server speaking the Socket.IO events of ``bin/server.py`` (see
``duplexeval.systems.adapters.freeze_omni._wire``), with a deterministic fake model in place of the
VAD, the LLM and the TTS.  Served as Freeze-Omni serves it: python-socketio's threading server (what
Flask-SocketIO runs without eventlet) under werkzeug's threaded server, over HTTPS with a
self-signed certificate.

One difference on TLS: in that stack simple-websocket reads the connection's ``SSLSocket`` in its
thread while Engine.IO's writer thread sends on it, two OpenSSL calls at once on one connection,
which OpenSSL forbids.  Measured here, the client's end was the one that broke (its reads
and writes at once: 2 of 92 stressed connections ended with ``bad record mac``; the server's
alone: none of 328), but the hazard is the same.  Freeze-Omni's own server has it; the fake
does not reproduce it, since the TLS tests' subject is the client: the WebSocket's socket is
wrapped in the client's :class:`~duplexeval.systems.adapters.freeze_omni._tls.SerializedTLS`.

As in ``bin/server.py``: ``connect`` beyond ``max_users`` emits ``too_many_users``; each user
has a PCM queue that a thread reads every 10 ms in 2560-sample (160 ms) blocks; the ``audio``
handler first emits at most one queued TTS chunk (int16 at 24 kHz), then ``stop_tts`` if the
reply was interrupted since, then queues the received PCM; ``recording-started`` and
``recording-stopped`` interrupt, emit ``stop_tts`` and reset; ``prompt_text`` answers
``prompt_success``.

Fake model (per 160 ms block): RMS > 0.01 is speech.  After speech and then ``reply_after``
silent blocks the dialogue state becomes "speak" (``ss``): as in the real server, a reply
started while an earlier one exists first interrupts it (the next ``audio`` message is answered
with ``stop_tts``; the input sample is logged in ``interrupts``), and one block later
(synthesis) ``reply_chunks`` TTS chunks of 0.25 s of a 440 Hz tone are queued.  When the first
chunk of a reply is emitted, the number of input samples received so far (including the message
being answered) is logged in ``onsets`` (per connection).

Faults (``faults[connection] = (kind, audio_message)``): ``disconnect`` (the server drops the
client), ``stall`` (from then on every handler blocks ``stall_seconds``: no acknowledgement, no
audio), ``garbage`` (an ``audio`` event carrying a string), ``out_time`` (the idle timeout event),
``slow`` (from then on every ``audio`` handler first waits ``slow_seconds``), ``echo`` (an
``audio`` event carrying a text that quotes the connection's ``Authorization`` header).
``refusals`` (``(status, hang_seconds, retry_after)`` each) answer the next HTTP requests (the
WebSocket upgrade, the client's diagnostic request) with that status (and ``Retry-After``
unless ``None``), after holding each ``hang_seconds`` unanswered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import socketio
from werkzeug.serving import make_server

from duplexeval.systems.adapters.freeze_omni._tls import SerializedTLS

IN_RATE, OUT_RATE = 16000, 24000
BLOCK = 2560
TTS_CHUNK = OUT_RATE // 4


class _User:
    def __init__(self, number: int) -> None:
        self.number = number
        self.pcm = np.zeros(0, np.float32)
        self.lock = threading.Lock()
        self.tts: list[bytes] = []
        self.interrupted = 0
        self.received = 0
        self.messages = 0
        self.heard = False
        self.silent = 0
        self.fresh_reply = False
        self.replied = False
        self.synthesis = -1
        """Blocks until the next reply's chunks are queued (-1: none pending)."""
        self.running = True


class FakeFreezeOmni:
    """The server on 127.0.0.1 (``port`` 0: a free one) while the context is open."""

    def __init__(self, tls: tuple[Path, Path] | None, reply_after: int = 2,
                 reply_chunks: int = 4, max_users: int = 5,
                 faults: dict[int, tuple[str, int]] | None = None,
                 stall_seconds: float = 3.0, port: int = 0,
                 refusals: list[tuple[int, float, str | None]] | None = None,
                 slow_seconds: float = 0.05) -> None:
        self.tls, self.port = tls, port
        self.refusals, self.refused = list(refusals or []), 0
        self.slow_seconds = slow_seconds
        self.reply_after, self.reply_chunks, self.max_users = reply_after, reply_chunks, max_users
        self.faults = faults or {}
        self.stall_seconds = stall_seconds
        self.connections = 0
        self.onsets: list[list[int]] = []
        self.interrupts: list[list[int]] = []
        self.events: list[list[str]] = []
        self.prompts: list[str] = []
        self.messages: list[dict[str, Any]] = []
        """Every client event as received: ``{"event": name}`` plus ``"data"`` when it had
        one (the transcript tests)."""
        self.users: dict[str, _User] = {}
        self.auth: dict[str, str] = {}
        """Each connection's ``Authorization`` header, by sid."""
        # handlers in arrival order (not a thread each): a message's effects, and what the
        # handler emits before its acknowledgement, in the order the client sent and expects
        self.sio = socketio.Server(async_mode="threading", async_handlers=False)
        for name, handler in (("connect", self._connect), ("disconnect", self._disconnect),
                              ("recording-started", self._reset),
                              ("recording-stopped", self._reset),
                              ("prompt_text", self._prompt), ("audio", self._audio)):
            self.sio.on(name, handler if name in ("connect", "disconnect")
                        else self._logged(name, handler))

    def _logged(self, name: str, handler: Any) -> Any:
        def logged(sid: str, *data: Any) -> Any:
            self.messages.append({"event": name, **({"data": data[0]} if data else {})})
            return handler(sid, *data)
        return logged

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeFreezeOmni:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
        ssl_context = (str(self.tls[0]), str(self.tls[1])) if self.tls else None
        self._server = make_server("127.0.0.1", self.port, self._refusing(socketio.WSGIApp(
            self.sio)), threaded=True, ssl_context=ssl_context)
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        for user in self.users.values():
            user.running = False
        self._server.shutdown()
        self._thread.join(5)

    def _refusing(self, app: Any) -> Any:
        """``app`` behind the injected HTTP refusals."""
        def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
            sock = environ.get("werkzeug.socket")
            if isinstance(sock, ssl.SSLSocket):  # see the module's docstring, on TLS
                environ["werkzeug.socket"] = SerializedTLS(sock)
            if not self.refusals:
                return app(environ, start_response)
            status, hang, retry_after = self.refusals.pop(0)
            self.refused += 1
            time.sleep(hang)
            headers = [("Content-Type", "text/plain")]
            if retry_after is not None:
                headers.append(("Retry-After", retry_after))
            start_response(f"{status} Refused", headers)
            return [f"fault: HTTP {status}\n".encode()]
        return wsgi

    def _connect(self, sid: str, environ: dict[str, Any]) -> None:
        self.auth[sid] = environ.get("HTTP_AUTHORIZATION", "")
        number = self.connections
        self.connections += 1
        self.onsets.append([])
        self.interrupts.append([])
        self.events.append(["connect"])
        if len(self.users) >= self.max_users:
            self.sio.emit("too_many_users", to=sid)
            return
        user = self.users[sid] = _User(number)
        threading.Thread(target=self._listen, args=(user,), daemon=True).start()

    def _disconnect(self, sid: str, *reason: Any) -> None:
        user = self.users.pop(sid, None)
        if user is not None:
            user.running = False
            self.events[user.number].append("disconnect")

    def _reset(self, sid: str) -> None:
        user = self.users.get(sid)
        if user is None:
            return
        self.events[user.number].append("reset")
        self.sio.emit("stop_tts", to=sid)
        with user.lock:
            user.tts.clear()
            user.pcm = np.zeros(0, np.float32)
            user.heard, user.silent, user.interrupted = False, 0, 0
        self.sio.emit("stop_tts", to=sid)

    def _prompt(self, sid: str, text: str) -> None:
        self.prompts.append(text)
        self.sio.emit("prompt_success", to=sid)

    def _audio(self, sid: str, data: str) -> None:
        user = self.users.get(sid)
        if user is None:
            return
        with user.lock:
            index = user.messages
            user.messages += 1
        fault = self.faults.get(user.number)
        if fault is not None and index >= fault[1] and self._fault(sid, fault[0]):
            return
        payload = json.loads(data)
        pcm = np.frombuffer(bytes(payload["audio"]), "<i2").astype(np.float32) / 32768.0
        with user.lock:
            user.received += len(pcm)
            if user.tts:
                chunk = user.tts.pop(0)
                if user.fresh_reply:
                    self.onsets[user.number].append(user.received)
                    user.fresh_reply = False
                self.sio.emit("audio", chunk, to=sid)
            if user.interrupted:
                user.interrupted = 0
                self.sio.emit("stop_tts", to=sid)
            user.pcm = np.concatenate([user.pcm, pcm])

    def _fault(self, sid: str, kind: str) -> bool:
        """Act out a fault; True when the message is not handled further."""
        if kind == "stall":
            time.sleep(self.stall_seconds)
            return True
        if kind == "slow":
            time.sleep(self.slow_seconds)
            return False
        if kind == "garbage":
            self.sio.emit("audio", "this is not pcm", to=sid)
        elif kind == "echo":
            self.sio.emit("audio", f"rejected credentials {self.auth.get(sid, '')}", to=sid)
        elif kind == "out_time":
            self.sio.emit("out_time", to=sid)
        elif kind == "disconnect":
            self.sio.disconnect(sid)
        return kind == "disconnect"

    def _listen(self, user: _User) -> None:
        """The PCM thread: 160 ms blocks through the fake VAD and model."""
        tone = (0.3 * 32767 * np.sin(2 * np.pi * 440 * np.arange(TTS_CHUNK) / OUT_RATE))
        chunk = tone.astype("<i2").tobytes()
        while user.running:
            time.sleep(0.01)
            with user.lock:
                if len(user.pcm) < BLOCK:
                    continue
                block, user.pcm = user.pcm[:BLOCK], user.pcm[BLOCK:]
                voiced = float(np.sqrt(np.mean(block ** 2))) > 0.01
                if user.synthesis > 0:
                    user.synthesis -= 1
                elif user.synthesis == 0:
                    user.synthesis = -1
                    user.tts.extend([chunk] * self.reply_chunks)
                    user.fresh_reply = True
                if voiced:
                    user.heard, user.silent = True, 0
                elif user.heard:
                    user.silent += 1
                    if user.silent == self.reply_after:  # "ss": speak
                        user.heard = False
                        if user.replied:
                            self.interrupts[user.number].append(user.received - len(user.pcm))
                            user.tts.clear()
                            user.interrupted += 1
                        user.replied = True
                        user.synthesis = 1

    def close_all(self) -> None:
        with contextlib.suppress(Exception):
            for sid in list(self.users):
                self.sio.disconnect(sid)
