"""Faults of remote systems and judges, as a matrix per transport, injected by the existing
loopback fakes (``tests/fake_judge.py``'s ``fake:`` directives, ``tests/loopback_ws.py``'s
:meth:`~loopback_ws.LoopbackWsServer.inject`).

What each fault must come to::

    judge (HTTP, tests/fake_judge.py)       once            always
    ------------------------------------    -------------   ------------------------------
    HTTP 429 / 500                          retried, scored unscored: "retries exhausted"
    HTTP 429 with Retry-After: 3            waits >= 3 s    -
    timeout (a slow answer)                 retried, scored unscored: "timeout"
    connection dropped, nothing sent        retried, scored unscored: "connection error"
    200 whose body stops halfway            retried, scored unscored: "connection error"
    200 whose body is not JSON (garbage)    retried, scored unscored: "malformed response"
    an answer that is not the JSON asked    -               unscored: "no JSON object"
    HTTP 401 quoting the key sent           -               unscored: "HTTP 401", key redacted

    realtime (WebSocket, openai-realtime: no resume in its protocol)
    --------------------------------------------------------------
    disconnect mid-stream      the sample fails: "the server closed the connection"
    a garbage frame            the sample fails: "garbage from the server"
    a stall mid-response       the sample fails: "stall: no message from the server for S s"

    every other network adapter (moshi-ws, duplexcascade, freeze-omni, gemini-live,
    vllm-omni-duplex), each on its own fake: ADAPTER_FAULTS
    ------------------------------------------------------------------------------------------
    at the opening: HTTP 429 / 500 / a timeout, once     retried (0.5 s, or Retry-After), recorded
    at the opening: HTTP 429 / 500 / a timeout, always   fails after 3 attempts: "HTTP 429" ...
    mid-stream: disconnect                               fails: "closed the connection", or
                                                         resumed (Gemini Live, vLLM-Omni)
    mid-stream: disconnect, session forgotten            fails: "session resum... failed"
    mid-stream: stall / garbage                          fails: "stall" / "garbage"
    mid-stream: slow (every message late)                recorded

    duplexeval run --system moshi-ws, one upgrade refused 429, one drop, one stall, one garbage
    ------------------------------------------------------------------------------------------
    exit 1; stderr: a line per failed sample with its reason, then "3 of N samples failed"

Waits are short: the judge's and the openings' backoffs are recorded, never slept; the stall
timeouts are 0.5 s (2 s for vLLM-Omni, whose model decides once a second).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from duplexeval.judge import AnswerCache, JudgeClient, RetryPolicy, judge_batch
from duplexeval.judge._retry import retry_after
from fake_judge import FakeJudge
from test_judge import item

POLICY = RetryPolicy(max_retries=2, base_delay=0.5, max_delay=8.0, jitter=0.0)

JUDGE_FAULTS = [
    # directive, expected score, attempts, recorded waits, unscored reason part
    ("fail=429x1", 2, 2, [0.5], None),
    ("fail=500x1", 2, 2, [0.5], None),
    ("fail=429x1 after=3", 2, 2, [3.0], None),
    ("slow=2x1", 2, 2, [0.5], None),
    ("drop=1", 2, 2, [0.5], None),
    ("cut=1", 2, 2, [0.5], None),
    ("garbage=1", 2, 2, [0.5], None),
    ("fail=429xinf", None, 3, [0.5, 1.0], "HTTP 429"),
    ("fail=500xinf", None, 3, [0.5, 1.0], "HTTP 500"),
    ("slow=2xinf", None, 3, [0.5, 1.0], "timeout"),
    ("drop=inf", None, 3, [0.5, 1.0], "connection error"),
    ("cut=inf", None, 3, [0.5, 1.0], "connection error"),
    ("garbage=inf", None, 3, [0.5, 1.0], "malformed response"),
    ("raw={not json", None, 1, [], "no JSON object"),
    ("echo", None, 1, [], "HTTP 401"),
]
"""Judge faults: each on its own item (``score=2`` is appended to the directive)."""


@pytest.fixture
def judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeJudge,
                                                                            AnswerCache]]:
    monkeypatch.setenv("DUPLEXEVAL_JUDGE_API_KEY", "sk-fault-SENTINEL")
    with FakeJudge() as server, AnswerCache(tmp_path / "answers.sqlite") as cache:
        yield server, cache


@pytest.mark.parametrize(("directive", "score", "attempts", "waits", "reason"), JUDGE_FAULTS,
                         ids=[f[0] for f in JUDGE_FAULTS])
def test_judge_faults_are_retried_then_recorded_unscored(
        judge: tuple[FakeJudge, AnswerCache], directive: str, score: int | None, attempts: int,
        waits: list[float], reason: str | None) -> None:
    server, cache = judge
    sleeps: list[float] = []
    spec = directive if directive.startswith("raw=") else f"{directive} score=2"
    out = judge_batch(JudgeClient(server.base_url, "m", timeout=0.5), [item(1, spec)], cache,
                      retry=POLICY, sleep=sleeps.append)
    [r] = out.results
    assert (r.score, r.attempts, sleeps) == (score, attempts, waits)
    assert (out.scored, out.unscored) == (int(score is not None), int(score is None))
    if reason is None:
        assert r.unscored_reason is None
    else:
        assert r.unscored_reason is not None and reason in r.unscored_reason
        assert "sk-fault-SENTINEL" not in r.unscored_reason
        assert directive != "echo" or "Bearer ***" in r.unscored_reason  # quoted, redacted


def test_a_batch_with_every_fault_finishes_and_counts_them(
        judge: tuple[FakeJudge, AnswerCache]) -> None:
    """All the faults in one batch (concurrent): every item comes back, the counts add up."""
    server, cache = judge
    items = [item(i, f[0] if f[0].startswith("raw=") else f"{f[0]} score=2")
             for i, f in enumerate(JUDGE_FAULTS)]
    out = judge_batch(JudgeClient(server.base_url, "m", timeout=0.5), items, cache,
                      retry=POLICY, sleep=lambda s: None, max_concurrency=4)
    assert [r.item_id for r in out.results] == [i.item_id for i in items]
    failing = sum(f[1] is None for f in JUDGE_FAULTS)
    assert (out.scored, out.unscored) == (len(JUDGE_FAULTS) - failing, failing)


@pytest.mark.parametrize(("header", "value", "seconds"), [
    ("retry-after", "3", 3.0), ("retry-after-ms", "250", 0.25),
    ("retry-after", "Wed, 02 Dec 2026 12:00:10 GMT", 10.0), ("retry-after", "soon", None),
    ("retry-after", "nan", None), ("retry-after", "-4", 0.0)])
def test_retry_after_is_read_in_seconds_or_as_a_date(header: str, value: str,
                                                     seconds: float | None) -> None:
    import email.utils

    import httpx2 as httpx
    import openai

    response = httpx.Response(429, headers={header: value},
                              request=httpx.Request("POST", "http://x/v1/chat/completions"))
    exc = openai.RateLimitError("slow down", response=response, body=None)
    now = email.utils.parsedate_to_datetime("Wed, 02 Dec 2026 12:00:00 GMT").timestamp()
    assert retry_after(exc, now=now) == seconds


# --- realtime (WebSocket) --------------------------------------------------------------------

REALTIME_FAULTS = [
    ("drop", 12, "the server closed the connection"),
    ("garbage", 3, "garbage from the server"),
    ("stall", 12, "stall: no message from the server for 0.5 s"),
]
"""Fault, messages the server sends first (12: within the first response's audio), reason."""


@pytest.mark.realtime
@pytest.mark.parametrize(("kind", "after", "reason"), REALTIME_FAULTS,
                         ids=[f[0] for f in REALTIME_FAULTS])
def test_openai_realtime_faults_fail_the_session_with_the_reason(
        monkeypatch: pytest.MonkeyPatch, kind: str, after: int, reason: str) -> None:
    pytest.importorskip("websockets")
    from duplexeval.systems import SessionSpec, SystemFailure, load_system
    from fake_realtime import RATE, FakeRealtimeServer
    from test_openai_realtime import FRAME, user_audio

    monkeypatch.setenv("RT_FAULT_KEY", "sk-rt-SENTINEL")
    with FakeRealtimeServer("sk-rt-SENTINEL") as server:
        server.inject(kind, after)
        system = load_system("openai-realtime", {"url": server.url, "api_key_env": "RT_FAULT_KEY",
                                                 "silence_duration_ms": "300",
                                                 "stall_timeout": "0.5"})
        session = system.open(SessionSpec(sample_rate=RATE, seed=0))
        x = user_audio()
        with pytest.raises(SystemFailure, match=reason) as failed:
            for k in range(0, len(x), FRAME):
                session.step(x[k:k + FRAME])
        session.close()
    assert "sk-rt-SENTINEL" not in str(failed.value)
    assert np.isfinite(x).all()


# --- every other network adapter ---------------------------------------------------------------

FAULTS = {
    # fault: what the fake does
    "drop": "closes the connection mid-stream (the session kept, where the protocol resumes)",
    "forget": "closes the connection mid-stream and forgets the session (resume refused)",
    "stall": "sends nothing more, keeps reading",
    "garbage": "sends one frame that is not the protocol's",
    "slow": "sends every message late (within the stall timeout)",
    "timeout": "holds the first upgrade unanswered past the connect timeout",
    "timeout-always": "holds every upgrade unanswered past the connect timeout",
    "429": "answers the first upgrade HTTP 429 (Retry-After: 2)",
    "500": "answers the first upgrade HTTP 500",
    "429-always": "answers every upgrade HTTP 429",
    "500-always": "answers every upgrade HTTP 500",
}
"""The faults of the adapter matrix (a 'first' one is retried by the opening, an 'always' one
fails after :data:`~duplexeval.systems.realtime._retry.CONNECT_RETRY`'s three attempts)."""

_OPENING = {"timeout": (None, [0.5]), "429": (None, [2.0]), "500": (None, [0.5]),
            "timeout-always": ("timed out", [0.5, 1.0]), "429-always": ("HTTP 429", [0.5, 1.0]),
            "500-always": ("HTTP 500", [0.5, 1.0])}
"""Opening faults: the outcome (``None``: recorded) and the waits between attempts, the same
for every adapter."""

_STREAM = {
    "moshi-ws": {"drop": "closed the connection", "stall": "stall", "garbage": "garbage",
                 "slow": None},
    "duplexcascade": {"drop": "closed the connection", "stall": "stall", "garbage": "garbage",
                      "slow": None},
    "freeze-omni": {"drop": "closed the connection", "stall": "stall", "garbage": "garbage",
                    "slow": None},
    "gemini-live": {"drop": None, "forget": "session resumption failed", "stall": "stall",
                    "garbage": "garbage", "slow": None},
    "vllm-omni-duplex": {"drop": None, "forget": "session resume failed", "stall": "stall",
                         "garbage": "garbage", "slow": None},
}
"""Mid-stream faults per adapter: ``None``, the sample is recorded (a resumed transport, a late
answer); else a part of the failure's reason.  Only Gemini Live and vLLM-Omni resume a
session, so only they have a ``drop`` that is survived and a ``forget`` that is not."""

ADAPTER_FAULTS = [(adapter, fault, outcome) for adapter, stream in _STREAM.items()
                  for fault, outcome in [*stream.items(),
                                         *((f, o[0]) for f, o in _OPENING.items())]]
"""(adapter, fault, outcome): every network adapter but openai-realtime (above) under every
fault its protocol can meet."""

_CONNECT = {"connect_timeout": "0.5"}


def _stall_timeout(fault: str, stalled: str = "0.5") -> str:
    """The adapter's stall timeout: ``stalled`` (under the fakes' 2 s stall), except for the
    ``slow`` fault, whose late messages (8-20 ms) must stay within it on a loaded machine too
    (0.5 s was missed once at load 12 on 2 cores, with the client's threads starved)."""
    return "5" if fault == "slow" else stalled
_GEMINI_KEY = "AIza-fault-SENTINEL"


def _moshi(fault: str) -> tuple[Any, dict[str, str], int]:
    from fake_moshi import FakeMoshiServer

    kinds = {"drop": "disconnect", "stall": "stall", "garbage": "garbage"}
    server = FakeMoshiServer(faults={0: (kinds[fault], 4)} if fault in kinds else None)
    return server, {"stall_timeout": _stall_timeout(fault), **_CONNECT}, 24000


def _cascade(fault: str) -> tuple[Any, dict[str, str], int]:
    from fake_duplexcascade import FakeDuplexCascade

    kinds = {"drop": "disconnect", "stall": "stall", "garbage": "garbage", "slow": "slow"}
    server = FakeDuplexCascade(faults={0: (kinds[fault], 4)} if fault in kinds else None,
                               refusals=_refusals(fault), stall_seconds=2.0, slow_seconds=0.02)
    return server, {"startup_delay": "0", "stall_timeout": _stall_timeout(fault), **_CONNECT}, 24000


def _freeze(fault: str) -> tuple[Any, dict[str, str], int]:
    from fake_freeze_omni import FakeFreezeOmni

    kinds = {"drop": "disconnect", "stall": "stall", "garbage": "garbage", "slow": "slow"}
    server = FakeFreezeOmni(None, faults={0: (kinds[fault], 3)} if fault in kinds else None,
                            refusals=_refusals(fault, per_attempt=2), stall_seconds=2.0,
                            slow_seconds=0.008)
    return server, {"verify": "0", "stall_timeout": _stall_timeout(fault), **_CONNECT}, 16000


def _gemini(fault: str) -> tuple[Any, dict[str, str], int]:
    from fake_gemini import FakeGeminiServer

    kinds = {"drop": "goaway", "forget": "disconnect", "stall": "stall", "garbage": "garbage"}
    server = FakeGeminiServer(_GEMINI_KEY, reply_ms=600,
                              faults={0: (kinds[fault], 700)} if fault in kinds else None)
    return server, {"stall_timeout": _stall_timeout(fault), "api_key_env": "FAULT_GEMINI_KEY",
                    **_CONNECT}, 24000


def _vllm(fault: str) -> tuple[Any, dict[str, str], int]:
    from fake_vllm_omni import FakeVllmOmniServer

    kinds = {"drop": "drop", "forget": "disconnect", "stall": "stall", "garbage": "garbage"}
    server = FakeVllmOmniServer(faults={0: (kinds[fault], 0)} if fault in kinds else None)
    return server, {"model": "m", "stall_timeout": _stall_timeout(fault, "2"), **_CONNECT}, 24000


def _refusals(fault: str, per_attempt: int = 1) -> list[tuple[int, float, str | None]]:
    """The ``refusals`` of the fakes that are not :class:`~loopback_ws.LoopbackWsServer`\\ s
    (``per_attempt``: HTTP requests one opening makes, Socket.IO's diagnosis included)."""
    status = {"timeout": 503, "500": 500, "429": 429}.get(fault.split("-")[0])
    if status is None:
        return []
    hang = 1.0 if fault.startswith("timeout") else 0.0
    retry_after = "2" if fault == "429" else None
    times = 3 * per_attempt if fault.endswith("-always") else 1
    return [(status, hang, retry_after)] * (per_attempt if fault == "429" else times)


_HARNESSES = {"moshi-ws": _moshi, "duplexcascade": _cascade, "freeze-omni": _freeze,
              "gemini-live": _gemini, "vllm-omni-duplex": _vllm}


def _inject(server: Any, fault: str) -> None:
    """The generic faults of :class:`~loopback_ws.LoopbackWsServer`: slow, refusals, hangs."""
    from loopback_ws import LoopbackWsServer

    if not isinstance(server, LoopbackWsServer):
        return
    always = 3 if fault.endswith("-always") else 1
    if fault == "slow":
        server.inject("slow", 3, delay=0.02)
    elif fault.startswith("timeout"):
        server.hang(1.0, always)
    elif fault.startswith(("429", "500")):
        server.refuse(int(fault[:3]), always, retry_after="2" if fault == "429" else None)


def _talk(adapter: str, fault: str, seconds: float) -> Any:
    """Open a session of ``adapter`` on its faulty fake and feed it ``seconds`` of user
    audio (a 0.3 s tone at 0.2 s, then silence); the session's trace, or the failure."""
    from duplexeval.systems import SessionSpec, SystemFailure, load_system

    server, args, rate = _HARNESSES[adapter](fault)
    _inject(server, fault)
    x = np.zeros(round(seconds * rate), np.float32)
    t = np.arange(round(0.3 * rate)) / rate
    x[round(0.2 * rate):round(0.2 * rate) + len(t)] = 0.2 * np.sin(2 * np.pi * 200 * t)
    with server:
        system = load_system(adapter, {"url": server.url, **args})
        frame = system.capabilities.frame_size
        try:
            session = system.open(SessionSpec(sample_rate=rate, seed=0))
            try:
                for k in range(0, len(x), frame):
                    session.step(x[k:k + frame])
                return session.trace()
            finally:
                session.close()
        except SystemFailure as exc:
            return exc


@pytest.mark.realtime
@pytest.mark.parametrize(("adapter", "fault", "outcome"), ADAPTER_FAULTS,
                         ids=[f"{a}-{f}" for a, f, _ in ADAPTER_FAULTS])
def test_adapter_faults_are_retried_or_fail_the_sample_with_the_reason(
        monkeypatch: pytest.MonkeyPatch, adapter: str, fault: str, outcome: str | None) -> None:
    """Each fault of :data:`FAULTS` on each adapter's loopback fake: an opening fault is
    retried with backoff (waits recorded, not slept), then recorded or failed with its reason;
    a mid-stream fault fails the session with its reason unless the protocol resumes it; a
    slow server is waited for.  No reason holds the key."""
    pytest.importorskip("websockets")
    if adapter == "moshi-ws":
        pytest.importorskip("sphn")
    if adapter == "freeze-omni":
        pytest.importorskip("socketio")
    import duplexeval.systems.realtime._retry as retry

    waits: list[float] = []
    monkeypatch.setattr(retry, "sleep", waits.append)
    monkeypatch.setenv("FAULT_GEMINI_KEY", _GEMINI_KEY)
    got = _talk(adapter, fault, seconds=1.2 if fault in _OPENING else 2.4)
    if outcome is None:
        assert isinstance(got, dict), got
    else:
        assert not isinstance(got, dict), f"{fault} was survived"
        assert outcome in str(got), str(got)
        assert _GEMINI_KEY not in str(got)
    if fault in _OPENING:
        assert waits == _OPENING[fault][1]
        if outcome is not None:
            assert str(got).endswith("(3 attempts)")
    else:
        assert waits == []


@pytest.mark.realtime
def test_a_run_against_a_faulty_server_finishes_and_counts_what_failed(
        sample_voiced: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``duplexeval run --system moshi-ws`` against a fake that answers the first upgrade 429
    (retried: that sample is recorded), drops the second sample's connection, stalls the third
    and sends the fourth garbage: exit 1, one stderr line per failed sample with its reason,
    then their count; the summary (stdout and ``run_summary.json``) counts them; the rest of
    the run is recorded."""
    pytest.importorskip("websockets")
    pytest.importorskip("sphn")
    import duplexeval.systems.realtime._retry as retry
    from duplexeval.cli import main
    from fake_moshi import FakeMoshiServer
    from test_moshi_ws import plan_order

    waits: list[float] = []
    monkeypatch.setattr(retry, "sleep", waits.append)
    out = tmp_path / "faulty"
    faults = {1: ("disconnect", 5), 2: ("stall", 5), 3: ("garbage", 5)}
    with FakeMoshiServer(faults=faults) as server:
        server.refuse(429, 1, retry_after="1")
        code = main(["run", "--system", "moshi-ws", "--system-arg", f"url={server.url}",
                     "--system-arg", "stall_timeout=0.5", "--dataset", str(sample_voiced),
                     "--protocol", "single", "--window", "2", "--out", str(out)])
    captured = capsys.readouterr()
    samples = plan_order(sample_voiced)
    assert code == 1 and "Traceback" not in captured.err
    assert waits == [1.0] and server.refused_upgrades == 1
    lines = [line for line in captured.err.splitlines() if line.startswith("duplexeval: ")]
    reasons = ["closed the connection", "stall", "garbage"]
    assert len(lines) == len(reasons) + 1, lines
    for s, reason, line in zip(samples[1:4], reasons, lines, strict=False):
        assert line.startswith(f"duplexeval: failed sample {s.event_id}: SystemFailure: ")
        assert reason in line, line
    assert lines[-1] == (f"duplexeval: {out}: 3 of {len(samples)} samples failed (each named "
                         "above, its reason in its record); the same command runs them again")
    assert f"samples ok {len(samples) - 3}, failed 3, resumed past 0" in captured.out
    summary = json.loads((out / "run_summary.json").read_text())
    assert (summary["samples"], summary["failed"]) == (len(samples) - 3, 3)


@pytest.mark.parametrize(("value", "seconds"), [
    ("2", 2.0), ("0.25", 0.25), ("Wed, 02 Dec 2026 12:00:10 GMT", 10.0), ("soon", None),
    ("nan", None), ("inf", None), ("-4", 0.0), (None, None)])
def test_an_openings_retry_after_is_read_in_seconds_or_as_a_date(value: str | None,
                                                                 seconds: float | None) -> None:
    import email.utils

    from duplexeval.systems.realtime._retry import retry_after_seconds

    now = email.utils.parsedate_to_datetime("Wed, 02 Dec 2026 12:00:00 GMT").timestamp()
    assert retry_after_seconds(value, now=now) == seconds


def test_an_opening_waits_0_5_then_1_s_or_what_the_server_asks_up_to_30_s() -> None:
    """attempt   0     1     2          (3 attempts)
    waits       0.5   1.0              (base 0.5 s, doubling, at most 8 s)
    asked 2 s   2.0   2.0              (Retry-After when longer; 100 s is cut to 30 s)"""
    from duplexeval.systems.realtime._retry import CONNECT_RETRY

    assert [CONNECT_RETRY.delay(k, None) for k in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert [CONNECT_RETRY.delay(k, 2.0) for k in range(3)] == [2.0, 2.0, 2.0]
    assert CONNECT_RETRY.delay(0, 100.0) == 30.0 and CONNECT_RETRY.delay(0, 0.1) == 0.5


@pytest.mark.parametrize("case", ["refused", "404", "401"])
def test_an_opening_that_no_retry_can_help_fails_at_once(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A connection refused (nothing listens), a wrong path (404) or a wrong key (401): one
    attempt, no wait, the status in the reason."""
    pytest.importorskip("websockets")
    import socket

    import duplexeval.systems.realtime._retry as retry
    from duplexeval.systems import SystemFailure
    from duplexeval.systems.realtime._websocket import Connection
    from fake_realtime import FakeRealtimeServer

    waits: list[float] = []
    monkeypatch.setattr(retry, "sleep", waits.append)
    with FakeRealtimeServer("sk-right") as server:
        if case == "refused":
            with socket.socket() as s:  # a port nothing listens on
                s.bind(("127.0.0.1", 0))
                url = f"ws://127.0.0.1:{s.getsockname()[1]}/v1/realtime"
        else:
            url = server.url.replace("/v1/realtime", "/elsewhere") if case == "404" \
                else server.url
        with pytest.raises(SystemFailure, match="cannot connect") as failed:
            Connection(url, {"Authorization": "Bearer sk-wrong"}, open_timeout=1.0)
    assert waits == [] and "attempts" not in str(failed.value)
    assert case == "refused" or f"HTTP {case}" in str(failed.value)
    assert "sk-wrong" not in str(failed.value)


# --- credentials ------------------------------------------------------------------------------

KEY = "sk-adapter-SENTINEL-0123456789"


def _keyed(adapter: str) -> tuple[Any, dict[str, str]]:
    """``adapter``'s fake, requiring or recording :data:`KEY`, whose second session quotes the
    credentials it got back to the client (an error naming the key it refuses)."""
    if adapter == "moshi-ws":
        from fake_moshi import FakeMoshiServer
        return FakeMoshiServer(require_key=KEY, faults={1: ("echo", 3)}), {}
    if adapter == "gemini-live":
        from fake_gemini import FakeGeminiServer
        return FakeGeminiServer(KEY, faults={1: ("echo", 200)}), {}
    if adapter == "vllm-omni-duplex":
        from fake_vllm_omni import FakeVllmOmniServer
        return (FakeVllmOmniServer(require_key=KEY, faults={1: ("echo", 0)}),
                {"model": "m", "stall_timeout": "2"})
    if adapter == "openai-realtime":  # every session: an error quoting the header
        from fake_realtime import FakeRealtimeServer
        return FakeRealtimeServer(KEY, fault="error"), {"silence_duration_ms": "300"}
    if adapter == "duplexcascade":
        from fake_duplexcascade import FakeDuplexCascade
        return FakeDuplexCascade(faults={1: ("echo", 4)}), {"startup_delay": "0"}
    from fake_freeze_omni import FakeFreezeOmni
    return FakeFreezeOmni(None, faults={1: ("echo", 3)}), {"verify": "0"}


def _sent(server: Any) -> list[str]:
    """The credentials the fake received, every header value of every connection."""
    if hasattr(server, "headers_seen"):
        return [v for headers in server.headers_seen for v in headers.values()]
    return list(server.auth.values() if isinstance(server.auth, dict) else server.auth)


KEYED_ADAPTERS = ["moshi-ws", "gemini-live", "vllm-omni-duplex", "openai-realtime",
                  "duplexcascade", "freeze-omni"]
"""Every network adapter: the sentinel key search of a whole run."""


@pytest.mark.realtime
@pytest.mark.parametrize("adapter", KEYED_ADAPTERS)
def test_no_file_of_a_run_holds_the_key_even_when_the_server_quotes_it(
        adapter: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``duplexeval run`` with the key in ``api_key_env``, against a fake whose second session
    sends the key back (in an error message, a text line or an audio event): the key reached
    the server, the run failed what it had to (exit 1), and no byte of any file under the test
    folder, nor stdout or stderr, holds it."""
    pytest.importorskip("websockets")
    pytest.importorskip({"moshi-ws": "sphn", "freeze-omni": "socketio"}.get(adapter,
                                                                             "websockets"))
    from duplexeval.cli import main
    from tone_dataset import tone_dataset, tone_turns

    monkeypatch.setenv("FAULT_ADAPTER_KEY", KEY)
    dataset = tone_dataset(tmp_path / "data", tone_turns(2), 8.0)
    server, args = _keyed(adapter)
    argv = ["run", "--system", adapter, "--dataset", str(dataset), "--protocol", "single",
            "--window", "2.2", "--out", str(tmp_path / "run")]
    for name, value in {"api_key_env": "FAULT_ADAPTER_KEY", **args}.items():
        argv += ["--system-arg", f"{name}={value}"]
    with server:
        argv += ["--system-arg", f"url={server.url}"]
        code = main(argv)
    printed = capsys.readouterr()
    assert code == 1, printed.err
    assert any(KEY in value for value in _sent(server))
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".wav" for p in written) or adapter == "openai-realtime"
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in printed.out + printed.err
