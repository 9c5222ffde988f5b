"""The ``moshi`` system in process against ``moshi-ws`` and moshi's real server, on the same tiny
checkpoint and input, greedy (issue 29 item 2; the differences are explained in
:mod:`wire_agreement`, the numbers printed by ``perf/moshi_wire_agreement.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("websockets")
pytest.importorskip("sphn")

from served import Server, save_checkpoint
from wire_agreement import (
    FRAME,
    OPUS_LOOKAHEAD,
    Frames,
    first_difference,
    in_process,
    lag,
    opus_delay,
    opus_round_trip,
    over_the_wire,
    probed,
    served_args,
    server_text,
    user_input,
)

from duplexeval.systems.adapters.moshi_inproc import MoshiSystem


@pytest.fixture(scope="module")
def checkpoint(tiny_system: Any, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return save_checkpoint(tiny_system, tmp_path_factory.mktemp("wire-served"))


@pytest.fixture(scope="module")
def session(checkpoint: list[str], tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[list[np.ndarray], Frames, Frames]]:
    """One lockstep session of ``moshi-ws`` on :func:`user_input` against the probed server:
    the input frames, the client's side and the server's."""
    folder = tmp_path_factory.mktemp("wire")
    probe = folder / "probe.jsonl"
    server = Server(checkpoint, folder / "server.log", probe=probe)
    try:
        x = user_input()
        frames = [x[k:k + FRAME] for k in range(0, len(x), FRAME)]
        wire = over_the_wire(server.url, frames)
    finally:
        server.stop()
    yield frames, wire, probed(probe, len(frames))


@pytest.fixture(scope="module")
def system(checkpoint: list[str]) -> Any:
    return MoshiSystem(**served_args(checkpoint))


@pytest.mark.slow
def test_fed_what_the_server_heard_the_in_process_model_makes_exactly_its_output(
        session: tuple[list[np.ndarray], Frames, Frames], system: Any) -> None:
    """The in-process system on the PCM the server's Mimi encoded (decoded from the client's
    Opus), its Mimi reset after frame 0 as the server does: the same user codes, text and
    audio tokens and (pre-Opus) PCM on every frame; ``moshi-ws`` traces exactly the server's
    text pieces on their frames, the last frame's included."""
    frames, wire, server = session
    assert len(server.heard) == len(server.tokens) == len(frames)
    assert server.tokens[0] is None and all(t is not None for t in server.tokens[1:])
    mine = in_process(system, server.heard, reset_after_first=True)
    assert mine.codes == server.codes
    assert mine.tokens == server.tokens
    assert np.array_equal(mine.audio, np.clip(server.audio, -1.0, 1.0))
    models = system.models()
    sent = server_text(server, models.tokenizer, models.silent_tokens)
    assert sent, "the greedy tiny model said no text: choose another weights_seed"
    assert mine.text == sent
    assert wire.text == sent


@pytest.mark.slow
def test_opus_codes_each_direction_exactly_as_a_fresh_stream_and_delays_it_156_samples(
        session: tuple[list[np.ndarray], Frames, Frames]) -> None:
    """What the server heard is exactly the input frames through a fresh Opus stream (the
    sphn writer and reader the client and the server make), and what the client returned
    from frame 1 on is exactly the server's PCM through one; that coding puts an impulse out
    156 samples (6.5 ms) later, and the server heard the input about that much later."""
    frames, wire, server = session
    assert np.array_equal(np.concatenate(server.heard), opus_round_trip(frames))
    assert np.array_equal(wire.audio[FRAME:], opus_round_trip(server.sent))
    assert opus_delay() == OPUS_LOOKAHEAD
    # a lossy coding of a tonal signal: its best match lies within 2 samples of the impulse's
    delay, snr = lag(np.concatenate(frames), np.concatenate(server.heard))
    assert abs(delay - OPUS_LOOKAHEAD) <= 2 and 3.0 < snr < 60.0


@pytest.mark.slow
def test_on_the_raw_input_the_outputs_agree_until_the_models_inputs_differ(
        session: tuple[list[np.ndarray], Frames, Frames], system: Any) -> None:
    """The in-process system as it runs (the raw input, its encoder never reset): the LM is
    causal, so its tokens equal the server's on every frame before the first whose user codes
    differ (Opus, the reset after frame 0); after it a random model may say anything (the
    agreement there is measured, not bounded: ``perf/moshi_wire_agreement.py``)."""
    frames, _, server = session
    raw = in_process(system, frames, reset_after_first=False)
    first = first_difference(raw.codes, server.codes)
    end = len(frames) if first is None else first
    assert raw.tokens[:end] == server.tokens[:end]
    assert raw.tokens[0] is None and len(raw.tokens) == len(server.tokens)
