"""The in-process PersonaPlex adapter on a tiny random-weight PersonaPlex-shaped checkpoint.

The prompt phase puts the voice prompt, spacers and the text prompt in system tags where
PersonaPlex's ``step_system_prompts`` puts them; a cached (``.pt``) voice prompt equals the
audio one; the output delay is one frame; a restored snapshot continues bit for bit; batched
forks equal single forks; an 8-codebook depformer loads into PersonaPlex's 16-codebook LM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyloudnorm
import pytest
import soundfile as sf
import torch
from moshi.utils.compile import no_compile
from tiny import LM_CONFIG, PERSONAPLEX_CONFIG

from duplexeval.systems import Forced, SessionSpec, StepOutput
from duplexeval.systems.adapters.moshi_inproc._stepper import LMStepper, Sampling
from duplexeval.systems.adapters.moshi_inproc._streams import StreamSet
from duplexeval.systems.adapters.personaplex_inproc._prompt import (
    SPACER_FRAMES,
    build_prompt,
    read_voice_prompt,
)
from duplexeval.systems.adapters.personaplex_inproc._session import PersonaPlexSession
from duplexeval.systems.adapters.personaplex_inproc._settings import wrap_system_tags

FRAME = 1920
RATE = 24000


def frames(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(FRAME) / RATE
    pitch, loud = rng.uniform(100, 3000, (n, 1)), rng.uniform(0.0, 0.5, (n, 1))
    return (loud * np.sin(2 * np.pi * pitch * t)
            + 0.05 * rng.standard_normal((n, FRAME))).astype(np.float32)


def write_voice(path: Path) -> Path:
    """0.6 s of tones at 24 kHz: 7.5 frames, so the last is padded."""
    sf.write(str(path), frames(8, 30).reshape(-1)[:14400] * 0.3, RATE, subtype="FLOAT")
    return path


def fresh_codes(models: Any, audio: np.ndarray, n: int) -> list[list[int]]:
    """Mimi codes of 80 ms frames from a fresh encoder state (first ``n`` codebooks)."""
    streams, out = StreamSet(models.mimi, 1), []
    with torch.no_grad():
        streams.bind()
        for frame in audio.reshape(-1, FRAME):
            codes = models.mimi.encode(torch.from_numpy(frame.copy()).view(1, 1, -1))
            out.append([int(c) for c in codes[0, :n, 0]])
        streams.unbind()
    return out


def record_inputs(monkeypatch: pytest.MonkeyPatch, lm: Any) -> list[list[int]]:
    """Every token column the LM reads (``forward_text``'s input), in order."""
    seen: list[list[int]] = []
    original = lm.forward_text

    def spy(sequence: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        seen.append([int(x) for x in sequence[0, :, 0]])
        return original(sequence, *args, **kwargs)

    monkeypatch.setattr(lm, "forward_text", spy)
    return seen


def open_session(models: Any, prompt: Any, seed: int = 7, delay: int = 1) -> PersonaPlexSession:
    return PersonaPlexSession(models, Sampling(top_k=8, top_k_text=8), seed, prompt, delay)


def same(a: StepOutput | None, b: StepOutput | None) -> bool:
    assert a is not None and b is not None
    return np.array_equal(a.audio, b.audio) and a.text == b.text


def test_prompt_frames_sit_where_personaplex_puts_them(plex_system: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Position p of stream k holds frame p - delay_k: voice codes (the -24 LUFS voice through
    a fresh encoder) with PAD text, 6 spacer frames, the pieces of "<system> hello there
    <system>" over silence codes, 6 spacer frames; the user streams hold the 440 Hz sine's
    codes throughout; position 0 (and 1 for delayed streams) holds the initial tokens; the
    dialogue's first frame follows the last prompt frame."""
    models = plex_system.models()
    lm = models.lm
    voice_path = write_voice(tmp_path / "voice.wav")
    voice = read_voice_prompt(models, voice_path)
    text = plex_system.models().tokenizer.encode(wrap_system_tags("hello there"))
    seen = record_inputs(monkeypatch, lm)
    with no_compile():
        prompt = build_prompt(models, voice, "hello there", text, loaded=False)
        session = open_session(models, prompt)
        user = frames(1, 40)[0]
        session.step(user)
    audio, rate = sf.read(str(voice_path), dtype="float64")
    meter = pyloudnorm.Meter(rate)
    loud = pyloudnorm.normalize.loudness(audio, meter.integrated_loudness(audio), -24.0)
    voice_codes = fresh_codes(models, np.pad(loud, (0, 15360 - 14400)).astype(np.float32), 2)
    silence = fresh_codes(models, np.zeros(FRAME, np.float32), 2)[0]
    sine = fresh_codes(models, (0.5 * np.sin(2 * np.pi * 440 * np.arange(FRAME) / RATE))
                       .astype(np.float32), 2)[0]
    pad = 3
    plan = ([(pad, c) for c in voice_codes] + [(pad, silence)] * SPACER_FRAMES
            + [(t, silence) for t in text] + [(pad, silence)] * SPACER_FRAMES)
    assert len(voice_codes) == 8 and len(text) >= 5 and prompt.frames == len(plan)
    delays = lm.delays
    n = len(plan)
    assert len(seen) == n + 1  # the prompt's positions, then the dialogue's first
    for p in range(n):
        for k, d in enumerate(delays):
            if p <= d:
                expected = lm.text_card if k == 0 else lm.card
            else:
                text_token, codes = plan[p - d]
                expected = text_token if k == 0 else codes[k - 1] if k <= 2 else sine[k - 3]
            assert seen[p][k] == expected, (p, k)
    user_codes = fresh_codes(models, user, 2)[0]
    assert seen[n][3] == user_codes[0]  # the dialogue's user frame 0, semantic (delay 0)
    assert seen[n][2] == silence[1] and seen[n][4] == sine[1]  # the last prompt frame's


def test_a_cached_voice_prompt_equals_the_audio_prompt(plex_system: Any, tmp_path: Path) -> None:
    """A ``.pt`` written as PersonaPlex saves it (the LM input embeddings of positions 0..V-2
    and its token ring of 4 at offset V, other slots garbage) gives the state of the audio
    prompt: the same outputs, bit for bit."""
    models = plex_system.models()
    voice = read_voice_prompt(models, write_voice(tmp_path / "voice.wav"))
    embeddings: list[torch.Tensor] = []
    hook = models.lm.transformer.register_forward_pre_hook(
        lambda _m, args: embeddings.append(args[0].detach().clone()))
    seen: list[list[int]] = []
    original = models.lm.forward_text
    models.lm.forward_text = lambda seq, *a, **k: (seen.append(seq[0, :, 0].tolist()),
                                                   original(seq, *a, **k))[1]
    try:
        with no_compile():
            audio_prompt = build_prompt(models, voice, "", [], loaded=False)
    finally:
        hook.remove()
        del models.lm.forward_text
    v = voice.frames
    ring = torch.full((1, 5, 4), 31, dtype=torch.long)  # garbage where nothing is read
    for position in (v - 1, v):
        for k, d in enumerate(models.lm.delays):
            if position < v or d > 0:
                ring[0, k, position % 4] = seen[v - 1][k] if position < v else seen[v][k]
    torch.save({"embeddings": torch.stack(embeddings[:v - 1]), "cache": ring},
               tmp_path / "voice.pt")
    cached = read_voice_prompt(models, tmp_path / "voice.pt")
    with no_compile():
        cached_prompt = build_prompt(models, cached, "", [], loaded=False)
    assert cached_prompt.frames == audio_prompt.frames == v + 2 * SPACER_FRAMES
    a, b = open_session(models, audio_prompt), open_session(models, cached_prompt)
    user = frames(12, 41)
    assert all(same(a.step(x), b.step(x)) for x in user)


def test_the_output_is_one_frame_late(plex_system: Any) -> None:
    """``output_delay`` 1 returns the model's frame t with user frame t + 1 (the first
    return is the last prompt frame: padding text); 0 returns it with user frame t."""
    models = plex_system.models()
    prompt = plex_system._prompt("hello there")
    late, now = open_session(models, prompt, 5, 1), open_session(models, prompt, 5, 0)
    user = frames(30, 42)
    late_out = [late.step(x) for x in user]
    now_out = [now.step(x) for x in user]
    assert late_out[0].text == ""
    assert [o.text for o in late_out[1:]] == [o.text for o in now_out[:-1]]
    assert any(o.text for o in now_out)


def test_a_restored_snapshot_continues_bit_for_bit(plex_system: Any) -> None:
    """Forced frames, then a snapshot (prompt state and the held frame in it); restored
    after another session stepped the same modules, the continuation repeats exactly."""
    session = plex_system.open(SessionSpec(sample_rate=RATE, seed=11))
    user, reference = frames(40, 43), frames(40, 44)
    for t in range(8):
        session.step(user[t], Forced(reference[t], "hello" if t == 2 else ""))
    state = session.snapshot()
    first = [session.step(x) for x in user[8:40]]
    assert any(o.audio.any() for o in first)
    other = plex_system.open(SessionSpec(sample_rate=RATE, seed=12))
    for x in user[:4]:
        other.step(x)
    session.restore(state)
    assert all(same(a, session.step(x)) for a, x in zip(first, user[8:40], strict=True))
    session.restore(state)
    session.reseed(999)
    assert not all(same(a, session.step(x)) for a, x in zip(first, user[8:40], strict=True))


def test_batched_forks_equal_single_forks(plex_system: Any) -> None:
    session = plex_system.open(SessionSpec(sample_rate=RATE, seed=13))
    user, reference = frames(30, 45), frames(30, 46)
    states = {}
    for t in range(7):
        session.step(user[t], Forced(reference[t], "hi friend" if t == 1 else ""))
        if t + 1 in (4, 7):
            states[t + 1] = session.snapshot()
    forks = [(4, 101, 10), (7, 202, 8), (7, 303, 5)]
    singles = []
    for fork, seed, n in forks:
        session.restore(states[fork])
        session.reseed(seed)
        singles.append([session.step(x) for x in user[fork:fork + n]])
    batch = session.fork_batch([states[f] for f, _, _ in forks], [s for _, s, _ in forks])
    for i in range(10):
        outs = batch.step([user[f + i] if i < n else None for f, _, n in forks])
        for row, (_, _, n) in enumerate(forks):
            assert same(outs[row], singles[row][i]) if i < n else outs[row] is None
    session.restore(states[7])
    single_trace = {**session.trace(), "frames": 7 + 8}
    assert batch.trace(1) == single_trace and batch.trace(1)["prompt_frames"] > 12


def concatenated(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """moshi 0.2.13's per-step attention matrices in PersonaPlex's file layout: one matrix per
    layer, the steps' rows one after the other (``in_proj_weight``, ``out_proj.weight``)."""
    out: dict[str, Any] = {}
    parts: dict[str, list[torch.Tensor]] = {}
    layouts = (("in_projs.", "in_proj_weight"), ("out_projs.", "out_proj.weight"))
    for name, tensor in state.items():
        for per_step, joined in layouts:
            if per_step in name:
                prefix, rest = name.split(per_step)
                index = int(rest.split(".")[0])
                parts.setdefault(prefix + joined, []).insert(index, tensor)
                break
        else:
            out[name] = tensor
    return {**out, **{k: torch.cat(v) for k, v in parts.items()}}


@pytest.mark.parametrize("layout", ["per-step", "concatenated"])
def test_an_eight_codebook_depformer_loads_into_the_personaplex_lm(tmp_path: Path,
                                                                  layout: str) -> None:
    """PersonaPlex's loading rule: weights of a depformer over the system's codebooks only
    (in moshi 0.2.13's attention layout or PersonaPlex's file layout) fill the depformer over
    all codebooks (the user's copy the system's), and the system's tokens are those of the
    smaller model, step for step."""
    from moshi.models import loaders
    from safetensors.torch import save_file

    from duplexeval.systems.adapters.personaplex_inproc._loading import load_lm

    torch.manual_seed(0)
    small = loaders.get_moshi_lm(None, lm_kwargs=dict(LM_CONFIG), device="cpu",
                                 dtype=torch.float32)
    state = {k: v.contiguous() for k, v in small.state_dict().items()}
    if layout == "concatenated":
        state = concatenated(state)
        assert "depformer.layers.0.self_attn.in_proj_weight" in state
    save_file(state, str(tmp_path / "model.safetensors"))
    big = load_lm(tmp_path / "model.safetensors", dict(PERSONAPLEX_CONFIG),
                  torch.device("cpu"), torch.float32)
    assert big.dep_q == 4 and torch.equal(big.linears[3].weight, small.linears[1].weight)
    attention = big.depformer.layers[0].self_attn
    assert torch.equal(attention.in_projs[2].weight, attention.in_projs[0].weight)
    user = torch.randint(0, 32, (12, 1, 2, 1), generator=torch.Generator().manual_seed(1))
    tokens = []
    with no_compile(), torch.no_grad():
        for lm in (small, big):
            streams, stepper = StreamSet(lm, 1), LMStepper(lm, Sampling(), 1, 2)
            stepper.reseed(0, 5)
            streams.bind()
            tokens.append([stepper.step(u).tokens.tolist() for u in user])
            streams.unbind()
    assert tokens[0] == tokens[1]


def test_weights_that_do_not_fit_are_refused_by_name(tmp_path: Path) -> None:
    from moshi.models import loaders
    from safetensors.torch import save_file

    from duplexeval.systems.adapters.personaplex_inproc._loading import load_lm

    small = loaders.get_moshi_lm(None, lm_kwargs=dict(LM_CONFIG), device="cpu",
                                 dtype=torch.float32)
    state = {k: v.contiguous() for k, v in small.state_dict().items() if k != "out_norm.alpha"}
    state["extra.weight"] = torch.zeros(2)
    save_file(state, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match=r"missing \['out_norm.alpha'\].*extra.weight"):
        load_lm(tmp_path / "model.safetensors", dict(PERSONAPLEX_CONFIG),
                torch.device("cpu"), torch.float32)


def test_a_voice_named_without_a_folder_comes_from_the_repository_voices(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As PersonaPlex's server: ``voices.tgz`` of the repository, unpacked next to it once,
    ``voices/NAME`` inside; a name not in it is an error naming the repository."""
    import tarfile

    import huggingface_hub

    from duplexeval.systems.adapters.personaplex_inproc._loading import voice_prompt_path

    (tmp_path / "src" / "voices").mkdir(parents=True)
    (tmp_path / "src" / "voices" / "NATF2.pt").write_bytes(b"voice")
    hub = tmp_path / "hub"
    hub.mkdir()
    with tarfile.open(hub / "voices.tgz", "w:gz") as tar:
        tar.add(tmp_path / "src" / "voices", arcname="voices")
    asked = []
    monkeypatch.setattr(huggingface_hub, "hf_hub_download",
                        lambda repo, name: asked.append((repo, name)) or str(hub / name))
    path = voice_prompt_path("NATF2.pt", "nvidia/personaplex-7b-v1")
    assert path == hub / "voices" / "NATF2.pt" and path.read_bytes() == b"voice"
    assert asked == [("nvidia/personaplex-7b-v1", "voices.tgz")]
    with pytest.raises(ValueError, match=r"NOPE\.pt.*personaplex-7b-v1"):
        voice_prompt_path("NOPE.pt", "nvidia/personaplex-7b-v1")
    local = tmp_path / "mine.wav"
    assert voice_prompt_path(str(local), "any/repo") == local


def test_the_text_prompt_follows_the_domain_and_can_be_left_out(plex_args: dict[str, str]) -> None:
    """By default the chat domain gets M3's chat prompt, others PersonaPlex's teacher prompt,
    each in system tags, one frame per piece between the two 6-frame spacers (no voice prompt
    with random weights); ``text_prompt=none`` leaves only the spacers."""
    from duplexeval.systems import DialogueInfo, load_system
    from duplexeval.systems.adapters.personaplex_inproc._settings import (
        ASSISTANT_PROMPT,
        CHAT_PROMPT,
    )

    system = load_system("personaplex", plex_args)
    tokenizer = system.models().tokenizer
    for domain, text in (("chat", CHAT_PROMPT), ("task", ASSISTANT_PROMPT)):
        session = system.open(SessionSpec(sample_rate=RATE, seed=1,
                                          dialogue=DialogueInfo("d", "en", domain)))
        trace = session.trace()
        pieces = tokenizer.encode(wrap_system_tags(text))
        assert trace["text_prompt"] == text and trace["voice_prompt"] is None
        assert trace["prompt_frames"] == 2 * SPACER_FRAMES + len(pieces)
    bare = load_system("personaplex", {**plex_args, "text_prompt": "none"})
    assert bare.open(SessionSpec(sample_rate=RATE, seed=1)).trace()["prompt_frames"] == 12
