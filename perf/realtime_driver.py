"""Accuracy of the real-time driver: measured turn-taking latency against a known answer time,
and send drift over a long stream.

The loopback echo server below speaks the OpenAI Realtime API's WebSocket events (GA names:
``session.created``, ``session.update`` -> ``session.updated``, ``input_audio_buffer.append``
of base64 PCM16 at 24 kHz, ``input_audio_buffer.speech_started`` / ``speech_stopped``,
``response.created``, ``response.output_audio.delta``, ``response.done``), so the client is the
real ``openai-realtime`` adapter on the shared
:class:`~duplexeval.systems.realtime._driver.RealtimeDriver`. PCM16 has no codec delay, so the only
time between the user's turn end and the reply is the server's answer time plus what the driver
adds or mismeasures.

Server rule (a wall-clock server, like the service): it stamps each appended 20 ms chunk with
its arrival time (``time.monotonic``), finds the user's turn end as the end of the last sample
with ``|x| > 0.01`` once ``silence_ms`` (150 ms) of silence follow it, puts that instant on its
clock from the arrival of the chunk that held it (``arrival - (chunk end - turn end)``), and
sends the whole reply (0.4 s of a 440 Hz cosine, as 100 ms deltas back to back: faster than
real time) exactly ``answer_ms`` (300 ms) after it.  The client sends frame ``k`` at its
deadline, one frame after its start (a microphone), so a client that paced exactly measures
``300 ms + loopback transit``::

    user (sent)   uuuuuuuuuuuuu|                 | = the user's turn end e (known exactly)
    server                      ...150 ms...|  decides; answers at (arrival-derived e) + 300 ms
    played out                  |<--- 300 ms --->|MMMMMMMM    measured = onset - e

The stream: ``--events`` user turns (a 200 Hz tone, 0.4-1.0 s, seeded) spread evenly over
``--minutes`` minutes (default 100 over 10 min).  The latency of each turn is the ``m3``
variant's smooth-turn-taking latency (``latency ↓``: the system segment closest to the turn end,
M3's rule) over segments of the played-out system channel (``|y| > 0.05``, gaps under 50 ms
merged).  Printed: the p95 (and mean, max) absolute error against ``answer_ms`` over the
events, the turns taken, and the send drift (max, p95, mean) and arrival jitter over the whole
stream, from the session's trace, beside the lateness of a bare sleep loop on the same
deadlines run in another process at the same time (the machine's floor: on a loaded machine no
user-space driver wakes more punctually), and how many of the frames sent over 5 ms late fell
on a stall of that loop.

``--protocol moshi-ws`` runs the same through the ``moshi-ws`` adapter (``mode=realtime``,
80 ms frames) against a moshi-protocol echo server (Ogg-Opus through ``sphn``); that server
takes the codec's known delay (154 samples each way) out of its answer time and reads the turn
end at half the tone's amplitude, where Opus's ringing is under 0.5 ms
(:class:`_MoshiEchoConversation`).

Usage: .venv/bin/python perf/realtime_driver.py [--minutes 10] [--events 100]
[--protocol openai-realtime|moshi-ws]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import multiprocessing
import os
import sys
import threading
import time
from typing import Any

import numpy as np
from websockets.sync.server import ServerConnection, serve

from duplexeval.analysis import SpeechSegment
from duplexeval.metrics import EventView
from duplexeval.metrics.timing._m3 import M3Timing
from duplexeval.systems import SessionSpec, load_system

RATE = 24000
MOSHI_FRAME = 1920
OPUS_LAG = 154
"""Samples the sphn Ogg-Opus round trip delays audio by at 24 kHz, in each direction
(measured with sphn 0.2.1; :mod:`duplexeval.systems.adapters.moshi_ws._wire`)."""
KEY_VARIABLE = "DUPLEXEVAL_LOOPBACK_KEY"
REPLY_S = 0.4


def _b64(x: np.ndarray) -> str:
    return base64.b64encode((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes()).decode()


def _wait_until(when: float) -> None:
    """Sleep to monotonic ``when`` (the last 2 ms in short sleeps)."""
    while (left := when - time.monotonic()) > 0.002:
        time.sleep(left - 0.002)
    while time.monotonic() < when:
        time.sleep(0)


def _tone() -> np.ndarray:
    t = np.arange(round(REPLY_S * RATE)) / RATE
    return (0.3 * np.cos(2 * np.pi * 440 * t)).astype(np.float32)


class _TurnEnds:
    """The server's turn-end detector over the input stream as it arrives (module docstring):
    ``feed`` returns the monotonic time of a turn's end once ``silence_s`` of silence follow
    it.  ``lag`` (samples) is how much later the decoded stream runs than what was sent (the
    Opus look-ahead for moshi-ws, 0 for PCM); a sample is voiced above ``threshold``."""

    def __init__(self, silence_s: float, lag: int = 0, threshold: float = 0.01) -> None:
        self.silence_s, self.lag, self.threshold = silence_s, lag, threshold
        self.samples = 0
        self.turn_end: tuple[int, float] | None = None
        """(decoded sample just after the last voiced one, its time on the server clock)."""
        self.started = False

    def feed(self, x: np.ndarray, arrival: float) -> float | None:
        voiced = np.flatnonzero(np.abs(x) > self.threshold)
        start, self.samples = self.samples, self.samples + len(x)
        self.started = False
        if len(voiced):
            end = start + int(voiced[-1]) + 1
            self.started = self.turn_end is None
            # the chunk was sent once its last sample was recorded: that sample is `arrival`
            self.turn_end = (end, arrival - (self.samples - end + self.lag) / RATE)
        elif self.turn_end is not None and \
                (self.samples - self.turn_end[0]) / RATE >= self.silence_s:
            at, self.turn_end = self.turn_end[1], None
            return at
        return None


class _EchoConversation:
    """One Realtime API connection of the echo server (see the module docstring)."""

    def __init__(self, conn: ServerConnection, answer_s: float, silence_s: float) -> None:
        self.conn, self.answer_s = conn, answer_s
        self.turns = _TurnEnds(silence_s)
        self.lock = threading.Lock()
        self.replies = 0

    def send(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.conn.send(json.dumps(event))

    def on_append(self, audio: str, arrival: float) -> None:
        x = np.frombuffer(base64.b64decode(audio), "<i2").astype(np.float32) / 32768
        ended = self.turns.feed(x, arrival)
        if self.turns.started:
            self.send({"type": "input_audio_buffer.speech_started"})
        if ended is not None:
            self.send({"type": "input_audio_buffer.speech_stopped"})
            threading.Thread(target=self.reply, args=(ended + self.answer_s,),
                             daemon=True).start()

    def reply(self, when: float) -> None:
        """The whole reply at monotonic ``when``, as 100 ms deltas back to back."""
        _wait_until(when)
        self.replies += 1
        rid, item = f"resp_{self.replies}", f"item_{self.replies}"
        tone = _tone()
        self.send({"type": "response.created", "response": {"id": rid}})
        for a in range(0, len(tone), RATE // 10):
            self.send({"type": "response.output_audio.delta", "response_id": rid,
                       "item_id": item, "delta": _b64(tone[a:a + RATE // 10])})
        self.send({"type": "response.done", "response": {"id": rid, "status": "completed"}})


class _MoshiEchoConversation:
    """One ``/api/chat`` connection (moshi-ws protocol: 0x00 handshake, 0x01 Ogg-Opus both
    ways through ``sphn``, 80 ms pages).  Opus delays decoded audio by ``OPUS_LAG`` samples in
    each direction (:mod:`duplexeval.systems.adapters.moshi_ws._wire`); the server takes both out of
    its answer time, so that the reply *as the client decodes it* starts ``answer_s`` after the
    turn end *as the client sent it*: it dates the turn end ``OPUS_LAG`` earlier than it
    decodes it, and sends the reply's first page ``OPUS_LAG`` early.  Opus rings on after the
    tone ends (above 0.01 for about 10 ms), so the turn end is read at half the user tone's
    amplitude (0.1: within 0.5 ms of the true end, measured).  The reply is paced one page per
    80 ms and followed by a page of silence that flushes the decoder."""

    def __init__(self, conn: ServerConnection, answer_s: float, silence_s: float) -> None:
        import sphn

        self.conn, self.answer_s = conn, answer_s
        self.turns = _TurnEnds(silence_s, lag=OPUS_LAG, threshold=0.1)
        self.reader, self.writer = sphn.OpusStreamReader(RATE), sphn.OpusStreamWriter(RATE)
        self.lock = threading.Lock()

    def on_audio(self, ogg: bytes, arrival: float) -> None:
        x = np.asarray(self.reader.append_bytes(ogg), np.float32).reshape(-1)
        ended = self.turns.feed(x, arrival) if len(x) else None
        if ended is not None:
            threading.Thread(target=self.reply, args=(ended + self.answer_s,),
                             daemon=True).start()

    def reply(self, when: float) -> None:
        tone = np.concatenate([_tone(), np.zeros(MOSHI_FRAME, np.float32)])
        first = when - OPUS_LAG / RATE
        for k, a in enumerate(range(0, len(tone) - MOSHI_FRAME + 1, MOSHI_FRAME)):
            _wait_until(first + k * MOSHI_FRAME / RATE)
            with self.lock:
                self.conn.send(b"\x01" + bytes(self.writer.append_pcm(tone[a:a + MOSHI_FRAME])))


def _serve(protocol: str, answer_s: float, silence_s: float, ports: Any) -> None:
    """The server process: serve ``protocol`` forever, reporting the port it got."""

    def realtime(conn: ServerConnection) -> None:
        convo = _EchoConversation(conn, answer_s, silence_s)
        convo.send({"type": "session.created", "session": {"type": "realtime"}})
        for message in conn:
            arrival = time.monotonic()
            event = json.loads(message)
            if event.get("type") == "session.update":
                convo.send({"type": "session.updated", "session": event["session"]})
            elif event.get("type") == "input_audio_buffer.append":
                convo.on_append(event["audio"], arrival)

    def moshi(conn: ServerConnection) -> None:
        convo = _MoshiEchoConversation(conn, answer_s, silence_s)
        conn.send(b"\x00")
        for message in conn:
            arrival = time.monotonic()
            if isinstance(message, bytes) and message[:1] == b"\x01":
                convo.on_audio(message[1:], arrival)

    def handle(conn: ServerConnection) -> None:
        with contextlib.suppress(Exception):  # the client went away
            (moshi if protocol == "moshi-ws" else realtime)(conn)

    with serve(handle, "127.0.0.1", 0, compression=None, max_size=None) as server:
        ports.put(server.socket.getsockname()[1])
        server.serve_forever()


class EchoServer:
    """The loopback echo server on 127.0.0.1 (a free port) in its own process, so that it
    never holds the client's interpreter lock (``time.monotonic`` is one clock for both
    processes: Linux ``CLOCK_MONOTONIC``)."""

    def __init__(self, protocol: str = "openai-realtime", answer_s: float = 0.3,
                 silence_s: float = 0.15) -> None:
        self.protocol, self.answer_s, self.silence_s = protocol, answer_s, silence_s

    @property
    def url(self) -> str:
        path = "/api/chat" if self.protocol == "moshi-ws" else "/v1/realtime"
        return f"ws://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> EchoServer:
        context = multiprocessing.get_context("spawn")
        ports = context.Queue()
        self._process = context.Process(target=_serve, daemon=True,
                                        args=(self.protocol, self.answer_s, self.silence_s,
                                              ports))
        self._process.start()
        self.port = ports.get(timeout=60)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._process.terminate()
        self._process.join(5)


def user_stream(minutes: float, events: int, seed: int) -> tuple[np.ndarray, list[float]]:
    """The user channel and its turn ends (s): ``events`` tone bursts spread evenly."""
    total = minutes * 60
    period = total / events
    if period < 2.5:
        raise SystemExit(f"--minutes {minutes:g} is too short for --events {events}: each "
                         "turn needs 2.5 s (0.5 s lead, up to 1 s of speech, the reply)")
    rng = np.random.default_rng(seed)
    x = np.zeros(round(total * RATE), np.float32)
    ends = []
    for i in range(events):
        a = round((i * period + 0.5) * RATE)
        n = round(rng.uniform(0.4, 1.0) * RATE)
        t = np.arange(n) / RATE
        x[a:a + n] = 0.2 * np.cos(2 * np.pi * 200 * t)
        ends.append((a + n) / RATE)
    return x, ends


def segments(y: np.ndarray, gap: float = 0.05) -> tuple[SpeechSegment, ...]:
    """Runs of ``|y| > 0.05`` on the system channel (channel 1), gaps under ``gap`` merged."""
    loud = np.flatnonzero(np.abs(y) > 0.05)
    if len(loud) == 0:
        return ()
    breaks = np.flatnonzero(np.diff(loud) > gap * RATE)
    starts = np.concatenate([[loud[0]], loud[breaks + 1]])
    stops = np.concatenate([loud[breaks], [loud[-1]]]) + 1
    return tuple(SpeechSegment.of(1, a / RATE, b / RATE) for a, b in zip(starts, stops,
                                                                        strict=True))


def converse(protocol: str, url: str, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """Stream ``x`` through the adapter of ``protocol`` in real time."""
    if protocol == "moshi-ws":
        system = load_system("moshi-ws", {"url": url, "mode": "realtime"})
    else:
        system = load_system("openai-realtime", {"url": url, "api_key_env": KEY_VARIABLE,
                                                 "model": "loopback-echo"})
    frame = system.capabilities.frame_size
    session = system.open(SessionSpec(sample_rate=RATE, seed=0))
    out = np.zeros(len(x) + frame, np.float32)
    for k in range(0, len(x), frame):
        piece = x[k:k + frame]
        if len(piece) < frame:
            piece = np.concatenate([piece, np.zeros(frame - len(piece), np.float32)])
        out[k:k + frame] = session.step(piece).audio
    trace = session.trace()
    session.close()
    return out[:len(x)], trace


def latencies(y: np.ndarray, ends: list[float]) -> list[float | None]:
    """The m3 smooth-turn-taking latency of each turn (s), ``None`` where no turn was taken."""
    segs = segments(y)
    rule = M3Timing()
    end_of_stream = len(y) / RATE
    out = []
    for i, end in enumerate(ends):
        following = ends[i + 1] - 0.5 if i + 1 < len(ends) else end_of_stream
        view = EventView(event_id=f"turn{i}", event_type="TURN_SHIFT", input_start=0.0,
                         input_end=end_of_stream, event_start=end, event_end=following,
                         segments=tuple(s for s in segs if s.start < following))
        out.append(rule.smooth_turn_taking(view, view.segments).values["latency ↓"])
    return out


def sleep_floor(seconds: float, results: Any = None) -> dict[str, Any]:
    """This machine's own wake-up lateness (ms): a bare loop sleeping to absolute 20 ms
    deadlines for ``seconds``, with no I/O (what no driver can beat on it right now); put on
    ``results`` (a queue) too when given.  ``late`` lists ``(deadline, lateness ms)`` of the
    wake-ups over 2 ms (deadline on ``time.monotonic``, s)."""
    late, stalls = [], []
    t0 = time.monotonic()
    for k in range(round(seconds / 0.02)):
        deadline = t0 + (k + 1) * 0.02
        while (now := time.monotonic()) < deadline:
            time.sleep(deadline - now)
        late.append((time.monotonic() - deadline) * 1000)
        if late[-1] > 2:
            stalls.append((deadline, late[-1]))
    values = np.asarray(late or [0.0])
    out = {"max": float(values.max()), "p95": float(np.percentile(values, 95)),
           "mean": float(values.mean()), "late": stalls}
    if results is not None:
        results.put(out)
    return out


def machine_stalls(rt: dict[str, Any], floor: dict[str, Any], over_ms: float = 5.0,
                   window_s: float = 0.05) -> tuple[int, int]:
    """Frames sent over ``over_ms`` late, and how many of them were late while the bare loop
    was stalled too (one of its wake-ups over 2 ms late within ``window_s`` of the frame's
    deadline): the machine's stalls, not the driver's."""
    t0, period = rt["t0_monotonic"], rt["frame"] / RATE
    stalls = np.asarray([d for d, _ in floor["late"]] or [np.inf])
    late = [k for k, v in enumerate(rt["send_drift_ms"]["series"]) if v > over_ms]
    shared = sum(1 for k in late if np.abs(stalls - (t0 + (k + 1) * period)).min() <= window_s)
    return len(late), shared


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="stream length (min)")
    parser.add_argument("--events", type=int, default=100, help="user turns in the stream")
    parser.add_argument("--answer-ms", type=float, default=300.0, help="the server's answer time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--protocol", choices=("openai-realtime", "moshi-ws"),
                        default="openai-realtime", help="the adapter and the server's protocol")
    args = parser.parse_args(argv)
    os.environ.setdefault(KEY_VARIABLE, "loopback-not-a-secret")
    x, ends = user_stream(args.minutes, args.events, args.seed)
    context = multiprocessing.get_context("spawn")
    floors = context.Queue()
    with EchoServer(args.protocol, answer_s=args.answer_ms / 1000) as server:
        bare = context.Process(target=sleep_floor, args=(len(x) / RATE, floors), daemon=True)
        bare.start()  # the same machine at the same time, for comparison
        began = time.monotonic()
        y, trace = converse(args.protocol, server.url, x)
        wall = time.monotonic() - began
        floor = floors.get(timeout=120)
        bare.join(5)
    measured = latencies(y, ends)
    taken = [v for v in measured if v is not None]
    errors = np.abs(np.asarray(taken) * 1000 - args.answer_ms) if taken else np.array([np.nan])
    rt = trace["realtime"]
    drift, jitter = rt["send_drift_ms"], rt["arrival_jitter_ms"]
    print(f"stream {args.minutes:g} min ({len(x) / RATE:.1f} s audio, {wall:.1f} s wall), "
          f"{rt['frames_sent']} frames of {1000 * rt['frame'] / RATE:g} ms ({args.protocol}), "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"smooth turn-taking latency vs {args.answer_ms:g} ms over {len(ends)} events "
          f"({len(taken)} taken): p95 abs error {np.percentile(errors, 95):.2f} ms, "
          f"mean {errors.mean():.2f} ms, max {errors.max():.2f} ms "
          f"(mean latency {np.mean(taken) * 1000 if taken else float('nan'):.2f} ms)")
    print(f"send drift over the stream: max {drift['max']:.3f} ms, p95 {drift['p95']:.3f} ms, "
          f"mean {drift['mean']:.3f} ms")
    print("a bare sleep loop on absolute 20 ms deadlines in another process, same time: "
          f"lateness max {floor['max']:.3f} ms, p95 {floor['p95']:.3f} ms, "
          f"mean {floor['mean']:.3f} ms")
    over, shared = machine_stalls(rt, floor)
    print(f"frames sent over 5 ms late: {over}, of which {shared} while the bare loop stalled "
          "too (the machine's)")
    within = ("one stream: this echo server is silent between replies, so the gaps count"
              if args.protocol == "moshi-ws" else "within each reply: its faster-than-real-time "
              "bursts")
    print(f"arrival jitter ({within}): p95 {jitter['p95_abs']} ms, RFC 3550 "
          f"{jitter['rfc3550']} ms; initial silence {rt['initial_silence_ms']} ms")
    latency_ok = len(taken) == len(ends) and float(np.percentile(errors, 95)) <= 10
    drift_ok = drift["max"] <= 5
    print(f"latency: {'PASS' if latency_ok else 'FAIL'} (every turn taken, p95 error <= 10 ms); "
          f"drift: {'PASS' if drift_ok else 'FAIL'} (max <= 5 ms)")
    return 0 if latency_ok and drift_ok else 1


if __name__ == "__main__":
    sys.exit(main())
