"""A Socket.IO client connection (``python-socketio``'s threaded client) with the interface the
session hands the real-time driver: server events in arrival order with their monotonic
arrival time, and the age of the oldest ``audio`` message the server has not acknowledged.

Every event the client sends asks for a Socket.IO acknowledgement; the server library answers
it when the event's handler returns (Flask-SocketIO and python-socketio do so whatever the
handler is), so unacknowledged messages piling up for ``stall_timeout`` seconds mean the server
has stopped reading.  A disconnect, from the server or the transport, arrives as the event
``disconnect``.  TLS: ``verify=False`` accepts a self-signed certificate (Freeze-Omni makes one
on its first start); the HTTP session then ignores the environment (``requests`` would otherwise
let ``REQUESTS_CA_BUNDLE`` or ``CURL_CA_BUNDLE`` switch verification back on, and proxy
variables route a loopback server through a proxy).  Engine.IO's read loop and write loop use
the one WebSocket from two threads; over TLS its socket is a
:class:`~duplexeval.systems.adapters.freeze_omni._tls.SerializedTLS`, since two OpenSSL calls at
once on one connection corrupt it (the lost connections of the flaky TLS test).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from typing import Any

from duplexeval.systems._base import SystemFailure
from duplexeval.systems.realtime._credentials import redact
from duplexeval.systems.realtime._retry import (
    Transient,
    open_with_retries,
    retry_after_seconds,
    transient_status,
)

__all__ = ["SERVER_EVENTS", "SocketIOLink"]

SERVER_EVENTS = ("audio", "stop_tts", "too_many_users", "out_time", "prompt_success")


class SocketIOLink:
    """One connection: ``emit`` events, ``receive`` server events, ``close``."""

    def __init__(self, url: str, verify: bool, connect_timeout: float,
                 headers: dict[str, str] | None = None) -> None:
        try:
            import requests
            import socketio

            from duplexeval.systems.adapters.freeze_omni._tls import SerializedTLSWebSocket
        except ImportError:
            raise SystemFailure("the freeze-omni system needs python-socketio: pip install "
                                "'duplexeval[servers]'") from None
        self._secrets = tuple((headers or {}).values())
        self._events: queue.Queue[tuple[str, tuple[Any, ...], float]] = queue.Queue()
        self._lock = threading.Lock()
        self._pending: dict[int, float] = {}
        self._sent = 0
        self.round_trips: list[float] = []
        """Seconds from sending each acknowledged event to its acknowledgement."""
        self.other_events: dict[str, int] = {}
        http = requests.Session()
        if not verify:  # the user said so: no certificate check, no warning per request
            import urllib3

            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
            http.verify, http.trust_env = False, False
        # Engine.IO reads the WebSocket in one thread and writes it in another: over TLS the
        # socket must serialize its OpenSSL calls (see ._tls)
        self._sio = socketio.Client(reconnection=False, ssl_verify=verify, handle_sigint=False,
                                    http_session=http, websocket_extra_options={
                                        "class_": SerializedTLSWebSocket})
        _in_wire_order(self._sio)
        for name in (*SERVER_EVENTS, "disconnect"):
            self._sio.on(name, self._recorder(name))
        self._sio.on("*", self._other)

        def open_once() -> None:
            try:
                self._sio.connect(url, headers=headers or {}, transports=["websocket"],
                                  wait_timeout=connect_timeout)
            except Exception as exc:  # refused, TLS, HTTP status, timeout: all fail the sample
                self.close()
                why, transient, asked = _diagnose(http, url, connect_timeout)
                message = redact(f"cannot connect to {url}: "
                                 f"{why or f'{type(exc).__name__}: {exc}'}", self._secrets)
                raise (Transient(message, asked) if transient else SystemFailure(message)) \
                    from None

        open_with_retries(open_once)

    def _recorder(self, name: str) -> Any:
        def record(*args: Any) -> None:
            self._events.put((name, args, time.monotonic()))
        return record

    def _other(self, name: str, *args: Any) -> None:
        self.other_events[name] = self.other_events.get(name, 0) + 1

    def emit(self, event: str, data: Any = None) -> float:
        """Send one event (asking for its acknowledgement); its monotonic send time."""
        with self._lock:
            number = self._sent
            self._sent += 1
            self._pending[number] = time.monotonic()
        try:
            self._sio.emit(event, data, callback=lambda *_: self._acked(number))
        except Exception as exc:  # BadNamespaceError, a closed transport
            raise SystemFailure(redact(f"the server closed the connection: "
                                       f"{type(exc).__name__}: {exc}", self._secrets)) from None
        return time.monotonic()

    def _acked(self, number: int) -> None:
        now = time.monotonic()
        with self._lock:
            sent = self._pending.pop(number, None)
            if sent is not None:
                self.round_trips.append(now - sent)

    def oldest_unacknowledged(self) -> float | None:
        """The monotonic send time of the oldest event not yet acknowledged."""
        with self._lock:
            return next(iter(self._pending.values()), None)

    def receive(self, timeout: float) -> tuple[tuple[str, tuple[Any, ...]], float] | None:
        """The next server event ``((name, args), arrival)``, or ``None`` after ``timeout``."""
        try:
            name, args, arrival = self._events.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        return (name, args), arrival

    def close(self) -> None:
        """Disconnect (idempotent, never raises)."""
        with contextlib.suppress(Exception):  # already gone
            self._sio.disconnect()


def _in_wire_order(client: Any) -> None:
    """Handle the connection's messages in the order they arrive, in its reading thread.

    Engine.IO's threaded client starts a new thread for every incoming message, so under load
    two events (or an event and an acknowledgement) can be handled in either order: a reply's
    audio chunks swapped, or the reset's ``stop_tts`` counted after the acknowledgement of
    ``recording-started`` that follows it on the wire.  The handlers here only queue or stamp
    what arrived, so they run inline.

    Inline, a server's Socket.IO disconnect reaches Engine.IO's ``disconnect`` in the reading
    thread itself, which then joined itself (``RuntimeError: cannot join current thread``): the
    reading thread logged the error with its traceback, the connection stayed half closed, and
    the writing thread outlived the session (logging "packet queue is empty" 30 s later, into
    whatever stream was open then).  There the disconnect does not wait for the reading thread
    (it is that thread, which ends once the socket is closed) and wakes the writing one, whose
    queue the disconnect emptied."""
    eio = client.eio
    trigger, disconnect = eio._trigger_event, eio.disconnect

    def in_order(event: str, *args: Any, **kwargs: Any) -> Any:
        kwargs["run_async"] = False
        return trigger(event, *args, **kwargs)

    def disconnect_from_any_thread(abort: bool = False, reason: Any = None) -> None:
        if threading.current_thread() is not getattr(eio, "read_loop_task", None):
            disconnect(abort=abort, reason=reason)
            return
        disconnect(abort=True, reason=reason)
        eio.queue.put(None)  # its reset emptied the queue: wake the writing thread to end

    eio._trigger_event = in_order
    eio.disconnect = disconnect_from_any_thread


def _diagnose(http: Any, url: str, timeout: float) -> tuple[str | None, bool, float | None]:
    """Why a Socket.IO connection failed, from a plain Engine.IO handshake request (the
    WebSocket transport only says "Connection error"): the TLS or connection error, or an
    HTTP status (``None`` when that request succeeds); whether another attempt may help (an
    HTTP 429 or 5xx, a timeout, or the request succeeding now:
    :mod:`duplexeval.systems.realtime._retry`); the server's ``Retry-After`` (s)."""
    import requests

    try:
        answer = http.get(url.rstrip("/") + "/socket.io/?EIO=4&transport=polling",
                          timeout=timeout)
    except requests.Timeout as exc:
        return f"{type(exc).__name__}: {exc}", True, None
    except Exception as exc:  # requests' ConnectionError, SSLError
        return f"{type(exc).__name__}: {exc}", False, None
    if answer.status_code != 200:
        return (f"HTTP {answer.status_code} from the Socket.IO endpoint",
                transient_status(answer.status_code),
                retry_after_seconds(answer.headers.get("Retry-After")))
    return None, True, None
