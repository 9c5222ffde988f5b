"""Recorded transcripts: each network adapter whose upstream server cannot run here, driven over
its loopback test server for one short session, must send the messages of its golden
transcript (tests/golden/transcripts/), field for field: message order, field names, value
types, and the values the upstream protocol fixes.  The goldens were written from the upstream
code cited in each test (and in the golden's ``source``), not from the adapter's output, so a
drift of either side shows up as a diff (:mod:`transcripts` says how one is read).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("websockets")

from duplexeval.systems import SessionSpec, load_system
from transcripts import load_golden, render

pytestmark = pytest.mark.realtime


def tones(rate: int, seconds: float, *spans: tuple[float, float]) -> np.ndarray:
    """Silence with a 200 Hz tone (amplitude 0.2) over each span (seconds)."""
    x = np.zeros(round(seconds * rate), np.float32)
    for a, b in spans:
        t = np.arange(round((b - a) * rate)) / rate
        x[round(a * rate):round(a * rate) + len(t)] = 0.2 * np.sin(2 * np.pi * 200 * t)
    return x


def drive(name: str, args: dict[str, str], x: np.ndarray, rate: int, frame: int,
          before_close: Callable[[], object] = lambda: None) -> None:
    """One session of ``name`` over ``x``, stepped ``frame`` samples at a time;
    ``before_close`` is called after the last step."""
    session = load_system(name, args).open(SessionSpec(sample_rate=rate, seed=0))
    try:
        for k in range(0, len(x), frame):
            session.step(x[k:k + frame])
        before_close()
    finally:
        session.close()


def test_openai_realtime_sends_the_realtime_api_events(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream: openai/openai-python@e43b422412a9e96c9cc5192c61fffbe2d7e04836,
    src/openai/types/realtime/ (session_update_event.py, realtime_session_create_request.py,
    realtime_audio_config_input.py, realtime_audio_config_output.py, realtime_audio_formats.py,
    realtime_audio_input_turn_detection.py, input_audio_buffer_append_event.py,
    response_cancel_event.py, conversation_item_truncate_event.py).

    The session: speech, the reply, a barge-in that cancels it and truncates what was played::

        t (s)   0   0.5     1.5        2.6   3.4      5
        user        |==u0===|          |=u1==|
        sent    update, append x N, cancel, truncate, append x M
    """
    from fake_realtime import FakeRealtimeServer

    monkeypatch.setenv("RT_TEST_KEY", "sk-transcript")
    golden = load_golden("openai-realtime")
    with FakeRealtimeServer("sk-transcript") as server:
        drive("openai-realtime", {"url": server.url, "api_key_env": "RT_TEST_KEY",
                                  "silence_duration_ms": "300"},
              tones(24000, 5.0, (0.5, 1.5), (2.6, 3.4)), 24000, 480)
    assert render(server.messages, golden["client"]) == golden["client"]


def test_gemini_live_sends_the_bidi_generate_content_messages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream: googleapis/python-genai@66807187f2123c6676175ac991f4e34eb09200d1,
    google/genai/live.py (connect: the ``setup`` message, ``setup.model`` as ``models/...``;
    send_realtime_input), google/genai/_live_converters.py (the wire names of setup, realtime
    input and Blob), google/genai/types.py (Modality, ActivityHandling,
    AutomaticActivityDetection).

    The session: one user turn, default settings::

        t (s)   0   0.5    1.2        3
        user        |=u0===|
        sent    setup, realtimeInput.audio x N (16 kHz PCM16)
    """
    from fake_gemini import FakeGeminiServer

    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "gm-transcript")
    golden = load_golden("gemini-live")
    with FakeGeminiServer("gm-transcript") as server:
        drive("gemini-live", {"url": server.url}, tones(24000, 3.0, (0.5, 1.2)), 24000, 480)
    assert render(server.messages, golden["client"]) == golden["client"]
    assert server.messages[0]["setup"]["model"].startswith("models/")  # as connect() writes it


def test_freeze_omni_sends_the_demo_clients_socketio_events() -> None:
    """Upstream: VITA-MLLM/Freeze-Omni@3e17af43b4fe64ba9609b4e1ba94c443c45101c0,
    bin/server.py (the ``prompt_text``, ``recording-started`` and ``audio`` handlers:
    ``json.loads(data)``, ``data['audio']`` as bytes of int16, ``data['sample_rate']``) and
    web/resources/demo.html (``socket.emit('audio', JSON.stringify({sample_rate, audio:
    Array.from(new Uint8Array(int16Array.buffer))}))``).

    The session, up to the last step (``recording-stopped`` at close is not awaited, so it is
    outside the transcript)::

        t (s)   0  0.2   0.8      1.6  2.0  3
        user       |=u0=|         |=u1=|
        sent    prompt_text, recording-started, audio x N (16 kHz, 256 samples each)
    """
    from fake_freeze_omni import IN_RATE, FakeFreezeOmni

    golden = load_golden("freeze-omni")
    seen: list[dict[str, Any]] = []
    with FakeFreezeOmni(None) as server:
        drive("freeze-omni", {"url": server.url, "verify": "0", "prompt": "You are helpful."},
              tones(IN_RATE, 3.0, (0.2, 0.8), (1.6, 2.0)), IN_RATE, 256,
              before_close=lambda: seen.extend(server.messages))
    audio = [m for m in seen if m["event"] == "audio"]
    assert audio and all(isinstance(m["data"], str) for m in audio)  # a JSON string
    decoded = [{**m, "data": json.loads(m["data"])} if m["event"] == "audio" else m
               for m in seen]
    assert render(decoded, golden["client"]) == golden["client"]
    frames = [m["data"]["audio"] for m in decoded[2:]]
    for data in frames:  # bytes of int16 samples
        assert all(0 <= b <= 255 for b in data) and len(data) % 2 == 0
    # 256 samples (512 bytes) each; 3 s is 187.5 frames, so the last one, when it reached the
    # server before the transcript was taken (a loaded machine's timing), holds the 128 left
    assert all(len(data) == 512 for data in frames[:-1]) and len(frames[-1]) in (256, 512)


def test_duplexcascade_sends_the_m3_clients_frames() -> None:
    """Upstream: nttcslab-sp/m3-duplexbench@6e3abb4e273807323f76f2846b855418a086ca86,
    m3_duplexbench/inference/models/duplexcascade.py (``DuplexCascadeModel.client``, itself
    from sbintuitions/DuplexCascade web/client.js: ``ws.send_binary(chunk.astype("<f4")
    .tobytes())`` per ``FRAME_SAMPLES = 1_920`` at ``SAMPLE_RATE = 24_000``, then
    ``ws.send("Done")``).  The server's own code is not public.

    Binary messages are written ``{"float32le": number of samples}`` (the bytes must be a whole
    number of float32 values, all finite), text messages ``{"text": ...}``::

        t (s)   0  0.2   0.8      1.6  2.0   2.4
        user       |=u0=|         |=u1=|
        sent    1920 samples x 30, "Done"
    """
    from fake_duplexcascade import RATE, FakeDuplexCascade

    golden = load_golden("duplexcascade")
    with FakeDuplexCascade() as server:
        drive("duplexcascade", {"url": server.url, "startup_delay": "0"},
              tones(RATE, 2.4, (0.2, 0.8), (1.6, 2.0)), RATE, 1920)
        for _ in range(200):  # "Done" goes out at close; the server logs it on arrival
            if server.messages and server.messages[-1] == "Done":
                break
            time.sleep(0.01)
    written: list[dict[str, Any]] = []
    for m in server.messages:
        if isinstance(m, bytes):
            assert len(m) % 4 == 0 and np.isfinite(np.frombuffer(m, "<f4")).all()
            written.append({"float32le": len(m) // 4})
        else:
            written.append({"text": m})
    assert render(written, golden["client"]) == golden["client"]


def test_vllm_omni_duplex_sends_the_realtime_duplex_events() -> None:
    """Upstream: vllm-project/vllm-omni, docs/serving/realtime_duplex_api.md@d3af8189ec1cac07
    dec19dd815fc772d641cdf26 (the wire contract of ``/v1/realtime?duplex=1``: session.update,
    input_audio_buffer.append with its duplex extensions, session.event_ack, playback.ack,
    session.close) and vllm_omni/entrypoints/duplex/realtime_input.py@7c39366f2077d8b172f065
    cf6e5c70ff890241f8 (what the server reads off an append).

    The appends, event acknowledgements and playback acknowledgements interleave on the wall
    clock, so the middle of the transcript is one run of any of the three::

        t (s)   0  0.2                2.0              3
        user       |=u0=|
        sent    session.update, (append | event_ack | playback.ack) x N, session.close
    """
    from fake_vllm_omni import FakeVllmOmniServer

    golden = load_golden("vllm-omni-duplex")
    with FakeVllmOmniServer() as server:
        drive("vllm-omni-duplex", {"url": server.url, "model": "m"},
              tones(24000, 3.0, (0.2, 0.8)), 24000, 480)
    assert render(server.messages, golden["client"]) == golden["client"]
    kinds = {m["type"] for m in server.messages}
    assert {"input_audio_buffer.append", "session.event_ack", "playback.ack"} <= kinds
    appends = [m for m in server.messages if m["type"] == "input_audio_buffer.append"]
    assert all(m["duration_ms"] == 20 for m in appends)
    assert [m["audio_end_ms"] for m in appends] == [20 * (k + 1) for k in range(len(appends))]


def test_a_drift_shows_as_a_diff() -> None:
    """The comparison itself: a conforming stream renders as its golden; another type, a field
    more, a message missing or out of order each leave a difference::

        golden   a{n:<int>}  b{audio:<base64>} x N  c{}
    """
    golden = [{"type": "a", "n": "<int>"}, {"repeat": {"type": "b", "audio": "<base64>"}},
              {"type": "c"}]
    good = [{"type": "a", "n": 3}, {"type": "b", "audio": "AAAA"},
            {"type": "b", "audio": "AAAB"}, {"type": "c"}]
    assert render(good, golden) == golden
    assert render([{"type": "a", "n": 3.5}, *good[1:]], golden)[0] == {"type": "a",
                                                                         "n": "<number>"}
    assert render([*good[:3], {"type": "c", "x": 1}], golden)[2] == {"type": "c", "x": 1}
    assert render(good[:3], golden) != golden
    assert render([good[0], {"type": "c"}, *good[1:3]], golden) != golden
    assert render([good[0], {"type": "b", "audio": "no!"}, good[3]], golden)[1] == {
        "type": "b", "audio": "<str, not base64>"}
    assert render([{"type": "a", "n": True}, *good[1:]], golden)[0]["n"] == "<bool>"
