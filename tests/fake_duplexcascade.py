"""A loopback DuplexCascade server speaking the wire format of the DuplexCascade web client and
the M3 client (see ``duplexeval.systems.adapters.duplexcascade._wire``), with a deterministic fake
cascade in place of STT, LLM and TTS.  Like the real ``KyutaiBridgeServer`` it is an asyncio
WebSocket server (so a stuck handler stops its keepalive pongs too), optionally over TLS.

Fake cascade: an energy detector on each 1920-sample input frame (RMS > 0.01 = the user
speaks).  After the user has spoken and then been silent for ``reply_after`` frames it sends
a JSON ``{"type": "transcript"}`` event, a non-JSON text line, and the whole reply at once,
faster than real time: ``reply_chunks`` float32 chunks of 0.25 s of a 440 Hz tone.  The number
of input samples received when it sent the reply is logged in ``onsets`` (per connection).
If the user speaks while the reply would still be playing (by the input clock), it sends
``{"type": "audio_control", "action": "stop"}`` and logs the input sample in ``stops``.

Faults (``faults[connection] = (kind, input_frame)``): ``disconnect`` closes the socket,
``stall`` blocks the event loop for ``stall_seconds`` (no audio, no pong), ``garbage`` sends a
binary message of 7 bytes, ``echo`` sends an error event and a text line quoting the request's
``Authorization`` header and closes, ``slow`` sends every message from then on
``slow_seconds`` late.
``refusals`` (``(status, hang_seconds, retry_after)`` each) answer the next upgrades with that
HTTP status (and ``Retry-After`` unless ``None``), after holding them unanswered
``hang_seconds`` (the client's opening times out).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
import time
from http import HTTPStatus
from pathlib import Path
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection, serve

FRAME = 1920
RATE = 24000
CHUNK = RATE // 4


class FakeDuplexCascade:
    """The server on 127.0.0.1 in a daemon thread while the context is open."""

    def __init__(self, reply_after: int = 4, reply_chunks: int = 4,
                 faults: dict[int, tuple[str, int]] | None = None,
                 tls: tuple[Path, Path] | None = None, stall_seconds: float = 4.0,
                 port: int = 0, refusals: list[tuple[int, float, str | None]] | None = None,
                 slow_seconds: float = 0.2) -> None:
        self.reply_after, self.reply_chunks = reply_after, reply_chunks
        self.refusals = list(refusals or [])
        self.refused = 0
        self.slow_seconds = slow_seconds
        self.auth: list[str] = []
        """Each connection's ``Authorization`` header."""
        self.faults = faults or {}
        self.tls, self.stall_seconds, self.port = tls, stall_seconds, port
        self.connections = 0
        self.onsets: list[list[int]] = []
        self.stops: list[list[int]] = []
        self.done: list[bool] = []
        self.messages: list[str | bytes] = []
        """Every client message as received, on every connection (the transcript tests)."""

    @property
    def url(self) -> str:
        return f"{'wss' if self.tls else 'ws'}://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeDuplexCascade:
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        context = None
        if self.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(self.tls[0]), str(self.tls[1]))

        async def main() -> None:
            async with serve(self._handle, "127.0.0.1", self.port, ssl=context,
                             compression=None, max_size=None,
                             process_request=self._refuse) as server:
                self.port = next(iter(server.sockets)).getsockname()[1]
                self._stop = self._loop.create_future()
                ready.set()
                await self._stop

        self._loop.run_until_complete(main())

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(5)

    async def _refuse(self, ws: ServerConnection, request: Any) -> Any:
        if not self.refusals:
            return None
        status, hang, retry_after = self.refusals.pop(0)
        self.refused += 1
        await asyncio.sleep(hang)
        response = ws.respond(HTTPStatus(status), f"fault: HTTP {status}\n")
        if retry_after is not None:
            response.headers["Retry-After"] = retry_after
        return response

    async def _handle(self, ws: ServerConnection) -> None:
        self.auth.append(ws.request.headers.get("Authorization", "") if ws.request else "")
        number = self.connections
        self.connections += 1
        self.onsets.append([])
        self.stops.append([])
        self.done.append(False)
        with contextlib.suppress(Exception):  # the client went away
            await self._session(ws, number)

    async def _session(self, ws: ServerConnection, number: int) -> None:
        fault = self.faults.get(number)
        heard = False
        silent = frames = 0
        playing_until = -1
        pending = np.zeros(0, np.float32)
        async for message in ws:
            self.messages.append(message)
            if message == "Done":
                self.done[number] = True
                return
            if not isinstance(message, bytes):
                continue
            pending = np.concatenate([pending, np.frombuffer(message, "<f4")])
            while len(pending) >= FRAME:
                frame, pending = pending[:FRAME], pending[FRAME:]
                frames += 1
                received = frames * FRAME
                if fault is not None and frames > fault[1]:
                    await self._fault(ws, fault[0])
                    if fault[0] != "slow":
                        return
                    fault = None  # slow from here on, and otherwise as usual
                voiced = float(np.sqrt(np.mean(frame ** 2))) > 0.01
                if voiced and received <= playing_until:
                    self.stops[number].append(received)
                    playing_until = -1
                    await ws.send(json.dumps({"type": "audio_control", "action": "stop"}))
                if voiced:
                    heard, silent = True, 0
                elif heard:
                    silent += 1
                    if silent == self.reply_after:
                        heard = False
                        self.onsets[number].append(received)
                        playing_until = received + self.reply_chunks * CHUNK
                        await self._reply(ws)

    async def _reply(self, ws: ServerConnection) -> None:
        await ws.send(json.dumps({"type": "transcript", "text": "hello there"}))
        await ws.send("thinking...")
        n = np.arange(self.reply_chunks * CHUNK)
        tone = (0.3 * np.sin(2 * np.pi * 440 * n / RATE)).astype("<f4")
        for k in range(self.reply_chunks):
            await ws.send(tone[k * CHUNK:(k + 1) * CHUNK].tobytes())

    async def _fault(self, ws: ServerConnection, kind: str) -> None:
        if kind == "garbage":
            await ws.send(b"\x00" * 7)
            await asyncio.sleep(1.0)
        elif kind == "stall":
            time.sleep(self.stall_seconds)  # blocks the event loop: no audio, no pong
        elif kind == "echo":  # a server that names the credentials it refuses
            auth = ws.request.headers.get("Authorization", "") if ws.request else ""
            await ws.send(json.dumps({"type": "error", "message": f"rejected {auth}"}))
            await ws.send(f"rejected credentials {auth}")
            await ws.close()
        elif kind == "slow":
            send = ws.send

            async def late(message: Any) -> None:
                await asyncio.sleep(self.slow_seconds)
                await send(message)

            ws.send = late  # type: ignore[method-assign]
        else:  # disconnect
            await ws.close()
