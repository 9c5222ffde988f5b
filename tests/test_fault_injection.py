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

    realtime (WebSocket, openai-realtime: no resume in its protocol)
    --------------------------------------------------------------
    disconnect mid-stream      the sample fails: "the server closed the connection"
    a garbage frame            the sample fails: "garbage from the server"
    a stall mid-response       the sample fails: "stall: no message from the server for S s"

Resuming transports (Gemini Live, vLLM-Omni) reattach after a disconnect: their own tests
(``tests/test_gemini_live.py``, ``tests/test_vllm_omni.py``) cover the resume.  Waits are short:
the judge's backoff is recorded, never slept; the realtime stall timeout is 0.5 s.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
