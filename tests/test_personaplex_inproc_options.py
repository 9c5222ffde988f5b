"""The ``personaplex`` system from the core environment (no torch, no moshi): listed with its
extra and capabilities, PersonaPlex's defaults (repository, configuration, voice, prompts by
domain in system tags), one-line errors for bad options, and opening a session without moshi
fails the sample with how to install it.  Its model tests run in ``.venv-moshi``
(``make test-moshi``, ``tests_moshi/test_personaplex*.py``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.systems import SessionSpec, SystemFailure, available_systems, load_system
from duplexeval.systems.adapters.personaplex_inproc._settings import (
    ASSISTANT_PROMPT,
    BUILTIN_CONFIG,
    CHAT_PROMPT,
    parse_personaplex,
    text_prompt_for,
    wrap_system_tags,
)


def test_listed_with_its_extra_and_capabilities() -> None:
    system = load_system(available_systems()["personaplex"].name)
    caps = system.capabilities
    assert system.extra == "moshi" and system.name == "personaplex"
    assert (caps.sample_rate, caps.frame_size) == (24000, 1920)
    assert caps.teacher_forcing_audio and caps.teacher_forcing_text
    assert caps.snapshot and caps.batch


def test_defaults_are_personaplex_s() -> None:
    """nvidia/personaplex-7b-v1 with the built-in configuration (moshi 7B, a depformer over
    all 16 codebooks), NATF2.pt, one frame of output delay, moshi's sampling defaults."""
    s = parse_personaplex({})
    assert s.moshi.hf_repo == "nvidia/personaplex-7b-v1"
    assert s.moshi.config == str(BUILTIN_CONFIG)
    config = json.loads(BUILTIN_CONFIG.read_text())
    assert (config["n_q"], config["dep_q"], len(config["delays"])) == (16, 16, 17)
    assert config["moshi_name"] == "model.safetensors"
    assert s.voice_prompt == "NATF2.pt" and s.output_delay == 1 and s.text_prompt is None
    assert (s.moshi.temp, s.moshi.temp_text, s.moshi.top_k, s.moshi.top_k_text) == (
        0.8, 0.7, 250, 25)


def test_random_weights_have_no_voice_prompt_and_their_own_config(tmp_path: Path) -> None:
    (tmp_path / "t.model").write_bytes(b"x")
    s = parse_personaplex({"random_weights": "1", "tokenizer": str(tmp_path / "t.model")})
    assert s.voice_prompt is None and s.moshi.config is None


def test_text_prompt_by_domain_as_m3_and_in_system_tags() -> None:
    default = parse_personaplex({})
    assert text_prompt_for(default, "chat") == CHAT_PROMPT
    assert text_prompt_for(default, "task") == text_prompt_for(default, None) == ASSISTANT_PROMPT
    assert ASSISTANT_PROMPT.startswith("You are a wise and friendly teacher.")
    given = parse_personaplex({"text_prompt": "You like cats."})
    assert text_prompt_for(given, "chat") == "You like cats."
    assert text_prompt_for(parse_personaplex({"text_prompt": "none"}), "chat") == ""
    assert wrap_system_tags("  You like cats. ") == "<system> You like cats. <system>"
    assert wrap_system_tags("<system> x <system>") == "<system> x <system>"


def test_voice_prompts_by_name_path_or_none(tmp_path: Path) -> None:
    wav = tmp_path / "me.wav"
    wav.write_bytes(b"RIFF")
    assert parse_personaplex({"voice_prompt": "NATM1.pt"}).voice_prompt == "NATM1.pt"
    assert parse_personaplex({"voice_prompt": str(wav)}).voice_prompt == str(wav)
    assert parse_personaplex({"voice_prompt": "none"}).voice_prompt is None


@pytest.mark.parametrize(("args", "message"), [
    ({"voice_prompt": "/no/such/voice.pt"}, "voice_prompt: no such file"),
    ({"voice_prompt": "voice.txt"}, "voice_prompt must be a .pt"),
    ({"output_delay": "2"}, "output_delay must be 0 or 1"),
    ({"temp": "hot"}, "temp must be a number"),
    ({"random_weights": "1"}, "random_weights=1 needs tokenizer"),
    ({"moshi_weight": "model.safetensors"}, "moshi_weight: no such file"),
    ({"seed_prompt": "2"}, "takes no argument"),
])
def test_bad_options_are_refused_in_one_line(args: dict[str, str], message: str,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(Exception, match=message):
        load_system("personaplex", args)
    cli = ["run", "--system", "personaplex", "--dataset", str(tmp_path), "--protocol",
           "single", "--out", str(tmp_path / "run")]
    for key, value in args.items():
        cli += ["--system-arg", f"{key}={value}"]
    assert main(cli) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1


@pytest.mark.skipif(importlib.util.find_spec("moshi") is not None,
                    reason="moshi is installed here (its tests are in tests_moshi/)")
def test_without_moshi_a_session_fails_with_how_to_install() -> None:
    system = load_system("personaplex")
    with pytest.raises(SystemFailure, match=r"personaplex system needs moshi.*make venv-moshi"):
        system.open(SessionSpec(sample_rate=24000, seed=1))
