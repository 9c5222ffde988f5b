"""A loopback Moshi ``/api/chat`` server speaking the protocol of moshi 0.2.13's ``server.py``,
with a deterministic fake model in place of the LM.

Protocol, as the real server does it: an upgrade on ``/api/chat`` only; one session at a time
(a lock); per connection a fresh ``sphn`` Opus reader and writer at 24 kHz; the ``0x00``
handshake once the state is reset; client ``0x01`` messages are Ogg-Opus pages, decoded and
cut into 1920-sample frames; the first input frame only initialises the model (no output);
every later frame gives one ``0x01`` message (one 80 ms Ogg page, the first with the Opus
headers) followed, when the model emitted a text token, by a ``0x02`` UTF-8 piece; unknown
client kinds are ignored.

Fake model: an energy detector on each input frame (RMS > 0.01 = the user speaks).  After the
user has spoken and then been silent for ``reply_after`` frames, it answers with a 440 Hz tone
of ``reply_frames`` frames (text "hello", " there" on its first two frames); the input frame
index whose step produced the first tone frame is logged in ``onsets`` (per connection).

Faults (``faults[connection] = (kind, input_frame)``, connections counted from 0):
``disconnect`` closes the socket, ``stall`` stops answering (but keeps reading), ``garbage``
sends an audio message that is not Ogg, ``kind`` sends a message of an unknown kind, ``echo``
sends a 0x05 error quoting the request's ``Authorization`` header.
"""

from __future__ import annotations

import contextlib

import numpy as np
import sphn
from websockets.sync.server import Request, Response, ServerConnection

from loopback_ws import LoopbackWsServer

FRAME = 1920
RATE = 24000


class FakeModel:
    """The deterministic stand-in for the LM (see the module docstring)."""

    def __init__(self, reply_after: int, reply_frames: int) -> None:
        self.reply_after, self.reply_frames = reply_after, reply_frames
        self.heard = False
        self.silent = 0
        self.left = 0
        self.phase = 0

    def step(self, frame: np.ndarray) -> tuple[np.ndarray, str, bool]:
        """One output frame for one input frame: (pcm, text piece, onset?)."""
        voiced = float(np.sqrt(np.mean(frame ** 2))) > 0.01
        onset = False
        if voiced:
            self.heard, self.silent = True, 0
        elif self.heard:
            self.silent += 1
            if self.silent == self.reply_after and self.left == 0:
                self.left, onset, self.heard = self.reply_frames, True, False
        if self.left == 0:
            return np.zeros(FRAME, np.float32), "", False
        n = np.arange(self.phase, self.phase + FRAME)
        self.phase += FRAME
        said = self.reply_frames - self.left
        self.left -= 1
        text = {0: "hello", 1: " there"}.get(said, "")
        return (0.3 * np.sin(2 * np.pi * 440 * n / RATE)).astype(np.float32), text, onset


class FakeMoshiServer(LoopbackWsServer):
    """The server on 127.0.0.1 (a free port, or ``port``: a resumed run needs the same URL) in a
    daemon thread while the context is open."""

    path = "/api/chat"

    def __init__(self, reply_after: int = 4, reply_frames: int = 8,
                 faults: dict[int, tuple[str, int]] | None = None,
                 require_key: str | None = None, port: int = 0) -> None:
        super().__init__(port)
        self.reply_after, self.reply_frames = reply_after, reply_frames
        self.faults = faults or {}
        self.require_key = require_key
        self.connections = 0
        self.onsets: list[list[int]] = []
        self.frames: list[int] = []

    def _authorize(self, conn: ServerConnection, request: Request,
                   query: dict[str, list[str]]) -> Response | None:
        return self.bearer_refused(conn, request, self.require_key)

    def _handle(self, conn: ServerConnection) -> None:
        with self._lock:  # one session at a time, like the real server
            number = self.connections
            self.connections += 1
            self.onsets.append([])
            self.frames.append(0)
            conn.send(b"\x00")
            with contextlib.suppress(Exception):  # the client went away mid-send
                self._session(conn, number)

    def _session(self, conn: ServerConnection, number: int) -> None:
        reader, writer = sphn.OpusStreamReader(RATE), sphn.OpusStreamWriter(RATE)
        model = FakeModel(self.reply_after, self.reply_frames)
        fault = self.faults.get(number)
        pending = np.zeros(0, np.float32)
        for message in conn:
            if not isinstance(message, bytes) or not message or message[0] != 1:
                continue  # the real server logs and ignores anything but audio
            pending = np.concatenate([pending, reader.append_bytes(message[1:])])
            while len(pending) >= FRAME:
                frame, pending = pending[:FRAME], pending[FRAME:]
                index = self.frames[number]
                self.frames[number] += 1
                if fault is not None and index >= fault[1]:
                    if self._fault(conn, fault[0]):
                        return
                    continue
                pcm, text, onset = model.step(frame)
                if index == 0:
                    continue  # the initialisation frame: no output
                if onset:
                    self.onsets[number].append(index)
                conn.send(b"\x01" + writer.append_pcm(pcm))
                if text:
                    conn.send(b"\x02" + text.encode())

    @staticmethod
    def _fault(conn: ServerConnection, kind: str) -> bool:
        """Act out a fault; True when the session is over."""
        if kind == "disconnect":
            conn.close()
            return True
        if kind == "garbage":
            conn.send(b"\x01" + b"this is not an ogg page " * 4)
            return True
        if kind == "kind":
            conn.send(b"\x09\x00\x01")
            return True
        if kind == "echo":  # an error message that quotes the request's credentials
            header = conn.request.headers.get("Authorization", "") if conn.request else ""
            conn.send(b"\x05" + f"rejected credentials {header!r}".encode())
            return True
        return False  # stall: keep reading, never answer
