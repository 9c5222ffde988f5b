"""The in-process Moshi adapter on a tiny random-weight checkpoint (CPU, no download).

Generation equals moshi's ``LMGen``; forced reference tokens sit in the token cache at their
delayed positions; the user's Mimi encoder state is untouched by forcing; a restored snapshot
continues bit for bit; batched forks equal single forks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from moshi.models.lm import LMGen
from moshi.utils.compile import no_compile

from duplexeval.systems import Forced, SessionSpec, StepOutput
from duplexeval.systems.adapters.moshi_inproc._session import MoshiSession
from duplexeval.systems.adapters.moshi_inproc._stepper import LMStepper, Sampling
from duplexeval.systems.adapters.moshi_inproc._streams import StreamSet

FRAME = 1920


def frames(n: int, seed: int) -> np.ndarray:
    """``n`` frames of 80 ms tones of random pitch and loudness in noise (24 kHz)."""
    rng = np.random.default_rng(seed)
    t = np.arange(FRAME) / 24000
    pitch, loud = rng.uniform(100, 3000, (n, 1)), rng.uniform(0.0, 0.5, (n, 1))
    noise = 0.05 * rng.standard_normal((n, FRAME))
    return (loud * np.sin(2 * np.pi * pitch * t) + noise).astype(np.float32)


def open_session(system: Any, seed: int = 11) -> MoshiSession:
    session = system.open(SessionSpec(sample_rate=24000, seed=seed))
    assert isinstance(session, MoshiSession)
    return session


def same(a: StepOutput | None, b: StepOutput | None) -> bool:
    assert a is not None and b is not None
    return np.array_equal(a.audio, b.audio) and a.text == b.text


@pytest.mark.parametrize("use_sampling", [True, False])
def test_the_generation_loop_samples_what_lmgen_samples(tiny_system: Any,
                                                        use_sampling: bool) -> None:
    """Same model, same seed (LMGen draws from the global generator, the stepper from its
    own): the same tokens, step for step, including LMGen's silent first step."""
    lm = tiny_system.models().lm
    s = Sampling(use_sampling=use_sampling, top_k=8, top_k_text=8)
    user = torch.randint(0, 32, (24, 1, 2, 1), generator=torch.Generator().manual_seed(3))
    reference, ours = [], []
    with no_compile(), torch.no_grad():
        gen = LMGen(lm, use_sampling=use_sampling, temp=s.temp, temp_text=s.temp_text,
                    top_k=s.top_k, top_k_text=s.top_k_text)
        with gen.streaming(1):
            torch.manual_seed(1234)
            for codes in user:
                out = gen.step(codes)
                reference.append(None if out is None else out[0, :, 0].tolist())
        streams, stepper = StreamSet(lm, 1), LMStepper(lm, s, 1)
        stepper.reseed(0, 1234)
        for codes in user:
            streams.bind()
            out = stepper.step(codes)
            ours.append(out.tokens[0].tolist() if bool(out.valid[0]) else None)
        streams.unbind()
    assert reference[0] is None and reference[1] is not None
    assert ours == reference


def test_forced_tokens_sit_at_their_delayed_positions(tiny_system: Any) -> None:
    """After forced step t: the reference codes of frame t at positions t + delay (semantic
    t, acoustic t + 1), the text token at t, the user's codes at t + delay; the reference
    codes are those of a fresh encoder fed the reference stream alone, the user's those of
    a fresh encoder fed the user stream alone (separate encoder states)."""
    models = tiny_system.models()
    session = open_session(tiny_system)
    user, reference = frames(12, 1), frames(12, 2)
    words = {3: "hello there", 9: "fine"}
    pieces = {3: models.tokenizer.encode("hello there"), 9: models.tokenizer.encode("fine")}
    expected_text = [3] * 12
    for k, ids in pieces.items():
        expected_text[k:k + len(ids)] = ids
    assert 2 <= len(pieces[3]) <= 6  # continues into the next frames, ends before frame 9
    plain_user, plain_ref = StreamSet(models.mimi, 1), StreamSet(models.mimi_ref, 1)
    stepper, ct = session.stepper, session.stepper.ct
    seen = set()
    with no_compile(), torch.no_grad():
        for t in range(12):
            session.step(user[t], Forced(reference[t], words.get(t, "")))
            plain_ref.bind()
            ref_codes = models.mimi_ref.encode(torch.from_numpy(reference[t]).view(1, 1, -1))
            plain_user.bind()
            user_codes = models.mimi.encode(torch.from_numpy(user[t]).view(1, 1, -1))
            cache = stepper.cache[0]
            seen.add(tuple(ref_codes[0, :, 0].tolist()))
            assert int(cache[0, t % ct]) == expected_text[t]
            for q, delay in enumerate((0, 1)):
                assert int(cache[1 + q, (t + delay) % ct]) == int(ref_codes[0, q, 0])
                assert int(cache[3 + q, (t + delay) % ct]) == int(user_codes[0, q, 0])
    assert session.forced_frames == 12 and len(seen) >= 6  # the codes vary with the audio


def test_one_shared_encoder_would_mix_the_streams(tiny_system: Any) -> None:
    """The contrast that makes the previous test meaningful: encoding the reference and the
    user frames alternately with one encoder state (M3's wrapper) changes the user's codes."""
    models = tiny_system.models()
    user, reference = frames(12, 1), frames(12, 2)
    shared, alone = StreamSet(models.mimi, 1), StreamSet(models.mimi, 1)
    mixed, clean = [], []
    with no_compile(), torch.no_grad():
        for t in range(12):
            shared.bind()
            models.mimi.encode(torch.from_numpy(reference[t]).view(1, 1, -1))
            mixed.append(models.mimi.encode(torch.from_numpy(user[t]).view(1, 1, -1)))
            alone.bind()
            clean.append(models.mimi.encode(torch.from_numpy(user[t]).view(1, 1, -1)))
    assert not all(torch.equal(a, b) for a, b in zip(mixed, clean, strict=True))


def run_free(session: MoshiSession, user: np.ndarray) -> list[StepOutput]:
    return [session.step(x) for x in user]


def test_a_restored_snapshot_continues_bit_for_bit(tiny_system: Any) -> None:
    """Restored twice (with another session stepping the same modules in between), the
    continuation repeats bit for bit, past the LM's 50-step KV ring (the snapshot keeps only
    the 10 entries written, the continuation leaves stale ones behind); reseeded, it differs."""
    session = open_session(tiny_system)
    user, reference = frames(60, 4), frames(60, 5)
    for t in range(10):
        session.step(user[t], Forced(reference[t], "hello" if t == 2 else ""))
    state = session.snapshot()
    assert state["lm"]["transformer.layers.0.self_attn"]["kv_cache"]["cache"].shape[3] == 10
    first = run_free(session, user[10:60])
    assert any(o.audio.any() for o in first)
    other = open_session(tiny_system, seed=99)  # another stream on the same modules
    run_free(other, user[:5])
    for _ in range(2):
        session.restore(state)
        again = run_free(session, user[10:60])
        assert all(same(a, b) for a, b in zip(first, again, strict=True))
    session.restore(state)
    session.reseed(12345)
    reseeded = run_free(session, user[10:60])
    assert not all(same(a, b) for a, b in zip(first, reseeded, strict=True))


def test_batched_forks_equal_single_forks(tiny_system: Any) -> None:
    """Forks at frames 6, 9 and 9 (two seeds at the same frame), rows ending at different
    frames: each row equals a single session restored and reseeded, and the session that
    forked is left as it was."""
    session = open_session(tiny_system)
    user, reference = frames(40, 6), frames(40, 7)
    states = {}
    for t in range(9):
        session.step(user[t], Forced(reference[t], "hi friend" if t == 1 else ""))
        if t + 1 in (6, 9):
            states[t + 1] = session.snapshot()
    after_fork = session.snapshot()
    forks = [(6, 101, 12), (9, 202, 10), (9, 303, 7)]  # (fork frame, seed, frames)
    singles = []
    for fork, seed, n in forks:
        session.restore(states[fork])
        session.reseed(seed)
        singles.append(run_free(session, user[fork:fork + n]))
    session.restore(after_fork)
    expected_next = run_free(session, user[9:12])
    session.restore(after_fork)
    batch = session.fork_batch([states[f] for f, _, _ in forks], [s for _, s, _ in forks])
    assert batch.size == 3
    for i in range(12):
        rows = [user[f + i] if i < n else None for f, _, n in forks]
        outs = batch.step(rows)
        for row, (_, _, n) in enumerate(forks):
            if i < n:
                assert same(outs[row], singles[row][i]), (row, i)
            else:
                assert outs[row] is None
    assert batch.trace(2)["frames"] == 9 + 7
    batch.close()
    assert all(same(a, b) for a, b in zip(run_free(session, user[9:12]), expected_next,
                                          strict=True))


def test_a_batch_of_one_row_equals_a_single_fork(tiny_system: Any) -> None:
    session = open_session(tiny_system)
    user = frames(16, 8)
    run_free(session, user[:6])
    state = session.snapshot()
    session.reseed(77)
    single = run_free(session, user[6:16])
    batch = session.fork_batch([state], [77])
    rows = [batch.step([x])[0] for x in user[6:16]]
    assert all(same(a, b) for a, b in zip(rows, single, strict=True))


def test_a_shared_batch_codec_gives_the_same_tokens(tiny_args: dict[str, str]) -> None:
    """``batch_codec=1``: the rows' Mimi as one batch; the same text, audio within rounding."""
    from duplexeval.systems import load_system

    system = load_system("moshi", {**tiny_args, "batch_codec": "1"})
    session = open_session(system)
    user = frames(24, 9)
    states = []
    for t in range(8):
        session.step(user[t])
        if t + 1 in (5, 8):
            states.append((t + 1, session.snapshot()))
    singles = []
    for fork, state in states:
        session.restore(state)
        session.reseed(fork)
        singles.append(run_free(session, user[fork:fork + 12]))
    batch = session.fork_batch([s for _, s in states], [f for f, _ in states])
    for i in range(12):
        outs = batch.step([user[f + i] for f, _ in states])
        for row in range(2):
            out, single = outs[row], singles[row][i]
            assert out is not None and out.text == single.text
            assert np.allclose(out.audio, single.audio, atol=1e-5)


def test_a_text_card_that_is_not_the_tokenizers_size_is_refused_on_loading(
        tmp_path: Any) -> None:
    """The tokenizer has 60 pieces; a config declaring ``text_card`` 64 (what this checkpoint
    once said: moshi's server crashed in ``IdToPiece`` on id 60) is one line naming both."""
    from tiny import LM_CONFIG, write_checkpoint

    from duplexeval.systems import SystemFailure, load_system

    args = write_checkpoint(tmp_path, {**LM_CONFIG, "text_card": 64})
    system = load_system("moshi", args)
    with pytest.raises(SystemFailure) as caught:
        system.models()
    message = str(caught.value)
    assert "\n" not in message
    assert "text_card is 64" in message and "tokenizer has 60 pieces" in message
