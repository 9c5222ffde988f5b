"""Optional smoke test: the content judges against a real local model behind llama.cpp's
OpenAI-compatible server.  Skipped unless enabled::

    llama-server -m qwen2.5-1.5b-instruct-q4_k_m.gguf --port 8080 &
    DUPLEXEVAL_LLAMACPP_URL=http://127.0.0.1:8080/v1 \\
    DUPLEXEVAL_LLAMACPP_MODEL=qwen2.5-1.5b-instruct make test   # or pytest -m llamacpp

It asserts what must hold for any model: every item comes back, scored within 0-2 or unscored
with a reason, with the raw answer recorded; a clearly right and a clearly wrong answer are
ordered.  Nothing here runs in ``make test`` without the variables.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from duplexeval.analysis.segments import Chunk, SpeechSegment
from duplexeval.metrics.base import EventView
from duplexeval.metrics.content.score import JudgeSettings, score_content

URL = os.environ.get("DUPLEXEVAL_LLAMACPP_URL")
MODEL = os.environ.get("DUPLEXEVAL_LLAMACPP_MODEL", "local")

pytestmark = [pytest.mark.llamacpp,
              pytest.mark.skipif(not URL, reason="set DUPLEXEVAL_LLAMACPP_URL (and "
                                 "DUPLEXEVAL_LLAMACPP_MODEL) to a llama.cpp server to run")]


def _event(event_id: str, answer: str) -> EventView:
    words = answer.split()
    user = SpeechSegment.of(0, 0.0, 2.0, "What is the capital of France?",
                            (Chunk(0.0, 2.0, "What is the capital of France?"),))
    chunks = tuple(Chunk(2.5 + 0.3 * i, 2.8 + 0.3 * i, w) for i, w in enumerate(words))
    reply = SpeechSegment.of(1, 2.5, chunks[-1].end, answer, chunks)
    return EventView(event_id=event_id, event_type="TURN_SHIFT", input_start=0.0,
                     input_end=12.0, event_start=2.0, event_end=2.5, segments=(user, reply),
                     sample_id="d", language="en", domain="chat",
                     metadata={"user_channel": 0, "system_channel": 1, "use_context": False})


def test_a_local_model_judges_every_item(tmp_path: Path) -> None:
    assert URL is not None
    events = [_event("right", "The capital of France is Paris."),
              _event("wrong", "I like turtles and the weather today.")]
    out = score_content(events, None, judge=JudgeSettings(URL, MODEL, concurrency=1,
                                                          cache_path=tmp_path / "c.sqlite"))
    assert len(out.judged) == 4
    for record in out.judged:
        assert (record.score is not None and 0 <= record.score <= 2) or record.unscored_reason
        assert record.raw is not None or record.unscored_reason
    by = {(r.event_id, r.dimension): r.score for r in out.judged}
    if by["right", "relevance"] is not None and by["wrong", "relevance"] is not None:
        assert by["right", "relevance"] > by["wrong", "relevance"]
