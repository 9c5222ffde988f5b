"""``SerializedTLS``: a TLS socket that one thread reads while another writes, with no two
OpenSSL calls at once (the freeze-omni client's WebSocket over HTTPS), on a loopback TLS pair
with a self-signed certificate: a blocked reader never holds up a sender, timeouts keep the
socket module's meaning, a shutdown wakes the reader, and traffic both ways at once arrives
intact."""

from __future__ import annotations

import hashlib
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ModuleTemp

pytest.importorskip("websocket")

from duplexeval.systems.adapters.freeze_omni._tls import SerializedTLS
from tls_cert import self_signed


@pytest.fixture(scope="module")
def cert(module_tmp: ModuleTemp) -> tuple[Path, Path]:
    made = self_signed(module_tmp.mktemp("tls"))
    if made is None:
        pytest.skip("openssl is not installed (needed for the self-signed certificate)")
    return made


@pytest.fixture()
def pair(cert: tuple[Path, Path]) -> Iterator[tuple[SerializedTLS, SerializedTLS]]:
    """(client, server): a TLS 1.3 connection over a socket pair, each end serialized."""
    a, b = socket.socketpair()
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(str(cert[0]), str(cert[1]))
    client_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client_context.check_hostname, client_context.verify_mode = False, ssl.CERT_NONE
    made: list[ssl.SSLSocket] = []
    thread = threading.Thread(target=lambda: made.append(
        server_context.wrap_socket(b, server_side=True)))
    thread.start()
    client = client_context.wrap_socket(a, server_hostname="localhost")
    thread.join(10)
    ends = SerializedTLS(client), SerializedTLS(made[0])
    yield ends
    for end in ends:
        end.close()


def test_a_blocked_reader_does_not_hold_up_a_sender(
        pair: tuple[SerializedTLS, SerializedTLS]) -> None:
    client, server = pair
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(client.recv(100)))
    reader.start()  # blocks: nothing is sent to the client until the server has heard it
    time.sleep(0.2)
    sender = threading.Thread(target=client.sendall, args=(b"up",))
    sender.start()  # a reader holding the lock while it waits would block this for good
    sender.join(10)
    assert not sender.is_alive() and server.recv(100) == b"up" and reader.is_alive()
    server.sendall(b"down")
    reader.join(5)
    assert got == [b"down"]


def test_timeouts_keep_the_socket_meaning(pair: tuple[SerializedTLS, SerializedTLS]) -> None:
    client, server = pair
    assert client.gettimeout() is None  # as the wrapped socket had it
    client.settimeout(0.3)
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        client.recv(10)
    assert 0.25 < time.monotonic() - start < 5
    client.settimeout(0.0)
    with pytest.raises(ssl.SSLWantReadError):
        client.recv(10)
    server.sendall(b"x")
    client.settimeout(5)
    assert client.recv(10) == b"x"


def test_a_shutdown_wakes_a_blocked_reader(pair: tuple[SerializedTLS, SerializedTLS]) -> None:
    client, _ = pair
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(client.recv(10))
        except OSError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.2)
    client.shutdown(socket.SHUT_RDWR)
    reader.join(5)
    assert not reader.is_alive()
    assert outcome[0] == b"" or isinstance(outcome[0], OSError), outcome


def test_both_ways_at_once_from_two_threads_per_end_arrive_intact(
        pair: tuple[SerializedTLS, SerializedTLS]) -> None:
    """Each end reads in one thread while another writes 1500 messages: both streams arrive
    whole (unserialized, this broke about one connection in thirty with ``bad record mac``)."""
    client, server = pair
    messages = [bytes([k % 251]) * (200 + k % 300) for k in range(1500)]
    total = sum(map(len, messages))
    sent = hashlib.sha256(b"".join(messages)).hexdigest()
    received: dict[str, str] = {}

    def write(end: SerializedTLS) -> None:
        for m in messages:
            end.sendall(m)

    def read(end: SerializedTLS, name: str) -> None:
        digest, n = hashlib.sha256(), 0
        while n < total:
            chunk = end.recv(65536)
            digest.update(chunk)
            n += len(chunk)
        received[name] = digest.hexdigest()

    for end in pair:
        end.settimeout(30)
    threads = [threading.Thread(target=write, args=(client,)),
               threading.Thread(target=write, args=(server,)),
               threading.Thread(target=read, args=(client, "client")),
               threading.Thread(target=read, args=(server, "server"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert received == {"client": sent, "server": sent}
