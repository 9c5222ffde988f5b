"""The ``moshi`` system from the core environment (no torch, no moshi): it is listed with its
extra, its options are checked with one-line errors, and opening a session without moshi
installed fails the sample with how to install it.  Its model tests run in ``.venv-moshi``
(``make test-moshi``, ``tests_moshi/``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from duplexeval.cli import main
from duplexeval.systems import SessionSpec, SystemFailure, available_systems, load_system
from duplexeval.systems.adapters.moshi_inproc._settings import parse_settings
from duplexeval.systems.adapters.moshi_inproc._text import TextForcing, piece_text


def test_listed_with_its_extra_and_capabilities() -> None:
    info = available_systems()["moshi"]
    system = load_system(info.name)
    caps = system.capabilities
    assert system.extra == "moshi"
    assert (caps.sample_rate, caps.frame_size) == (24000, 1920)
    assert caps.teacher_forcing_audio and caps.teacher_forcing_text
    assert caps.snapshot and caps.batch


def test_hub_files_are_left_to_the_loader() -> None:
    system = load_system("moshi", {"moshi_weight": "hf://kyutai/moshika-pytorch-bf16/x.sft"})
    assert system.settings.moshi_weight == "hf://kyutai/moshika-pytorch-bf16/x.sft"


def test_options_parse_with_moshi_defaults() -> None:
    s = parse_settings({"temp": "0.5", "top_k": "10", "use_sampling": "0", "dtype": "float32"})
    assert (s.temp, s.temp_text, s.top_k, s.top_k_text) == (0.5, 0.7, 10, 25)
    assert not s.use_sampling and s.dtype == "float32"
    assert s.hf_repo == "kyutai/moshiko-pytorch-bf16" and not s.random_weights


@pytest.mark.parametrize(("args", "message"), [
    ({"dtype": "int8"}, "dtype must be one of"),
    ({"temp": "hot"}, "temp must be a number"),
    ({"top_k": "-1"}, "top_k must be >= 0"),
    ({"use_sampling": "maybe"}, "use_sampling must be 0 or 1"),
    ({"random_weights": "1"}, "random_weights=1 needs tokenizer"),
    ({"random_weights": "1", "tokenizer": "/no/such.model"}, "tokenizer: no such file"),
    ({"config": "/no/config.json"}, "config: no such file"),
    ({"moshi_weight": "model.safetensors"}, "moshi_weight: no such file"),
    ({"random_weights": "1", "tokenizer": "t.model", "mimi_weight": "m.safetensors"},
     "mimi_weight is not used with random_weights=1"),
    ({"cfg_coef": "2"}, "takes no argument"),
])
def test_bad_options_are_refused_in_one_line(args: dict[str, str], message: str,
                                             tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(Exception, match=message):
        load_system("moshi", args)
    cli = ["run", "--system", "moshi", "--dataset", str(tmp_path), "--protocol", "single",
           "--out", str(tmp_path / "run")]
    for key, value in args.items():
        cli += ["--system-arg", f"{key}={value}"]
    assert main(cli) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1


@pytest.mark.skipif(importlib.util.find_spec("moshi") is not None,
                    reason="moshi is installed here (its tests are in tests_moshi/)")
def test_without_moshi_a_session_fails_with_how_to_install() -> None:
    system = load_system("moshi")
    with pytest.raises(SystemFailure, match=r"make venv-moshi.*duplexeval\[moshi\]"):
        system.open(SessionSpec(sample_rate=24000, seed=1))


class _Letters:
    """A stand-in SentencePiece model: one piece per letter ("▁" before each word), ids from
    10 up; 0 and 3 are the end-of-padding and padding pieces."""

    PIECES = ("<epad>", "<unk>", "<s>", "<pad>", *"-----", "▁", *"abcdefghijklmnopqrstuvwxyz")

    def encode(self, text: str) -> list[int]:
        ids = []
        for word in text.split(" "):
            ids += [9] + [self.PIECES.index(c) for c in word]
        return ids

    def id_to_piece(self, token: int) -> str:
        return self.PIECES[token]

    def vocab_size(self) -> int:
        return len(self.PIECES)


def test_reference_words_fill_the_text_stream_from_their_onset() -> None:
    """frame:  0    1    2    3    4    5    6
    words:        "hi"           "ok no"
    tokens: PAD  ▁    h    i    ▁    o    k   (then ▁ n o; "no" waits for "ok")"""
    forcing = TextForcing(_Letters(), pad_id=3)
    words = {1: "hi", 4: "ok  no"}
    got = [forcing.next(words.get(t, "")) for t in range(10)]
    h, i, o, k, n = (_Letters.PIECES.index(c) for c in "hiokn")
    assert got == [3, 9, h, i, 9, o, k, 9, n, o]
    forcing.next("late")
    forcing.clear()  # forcing stopped: queued pieces are dropped
    assert forcing.next("") == 3


def test_unspaced_languages_join_their_words() -> None:
    spaced, unspaced = TextForcing(_Letters(), 3, "en"), TextForcing(_Letters(), 3, "ja")
    assert [spaced.next("ab c")] + [spaced.next("") for _ in range(4)] == [9, 10, 11, 9, 12]
    assert [unspaced.next("ab c")] + [unspaced.next("") for _ in range(3)] == [9, 10, 11, 12]


def test_sampled_text_shows_pieces_with_spaces_and_hides_padding() -> None:
    letters = _Letters()
    assert piece_text(letters, 9, (0, 3)) + piece_text(letters, 10, (0, 3)) == " a"
    assert piece_text(letters, 3, (0, 3)) == piece_text(letters, 0, (0, 3)) == ""
    assert piece_text(letters, 400, (0, 3)) == ""
